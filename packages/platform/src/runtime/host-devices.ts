import { statSync } from "node:fs";

/**
 * The host's /dev/null as every Linux system has it. This runsc changes the owner of whatever it
 * is handed as standard streams to the sandbox's user (the class of bug runc #3707 and crun #1847
 * fixed): given the host's /dev/null, it leaves it owned by `nobody`, who can then chmod it and
 * break every program on the host. The platform never hands a runtime a device (see spawner.ts);
 * this check is how a regression, from anywhere, gets noticed.
 */
const DEV_NULL = { path: "/dev/null", major: 1, minor: 3, mode: 0o666, uid: 0, gid: 0 };

/** What is wrong with the host's /dev/null, or undefined when it is as it should be. */
export function devNullProblem(path = DEV_NULL.path): string | undefined {
  let st: ReturnType<typeof statSync>;
  try {
    st = statSync(path);
  } catch (err) {
    return `${path} cannot be read: ${(err as Error).message}`;
  }
  const found: string[] = [];
  if (!st.isCharacterDevice()) found.push("is not a character device");
  const major = Math.floor(st.rdev / 256) & 0xfff;
  const minor = (st.rdev & 0xff) | ((st.rdev >> 12) & 0xfff00);
  if (major !== DEV_NULL.major || minor !== DEV_NULL.minor)
    found.push(`is device ${major},${minor}, not 1,3`);
  if ((st.mode & 0o7777) !== DEV_NULL.mode) found.push(`has mode ${(st.mode & 0o7777).toString(8)}, not 666`);
  if (st.uid !== DEV_NULL.uid || st.gid !== DEV_NULL.gid)
    found.push(`is owned by ${st.uid}:${st.gid}, not root`);
  if (found.length === 0) return undefined;
  return `${path} ${found.join(", ")} (mend it with: chown root:root ${path} && chmod 666 ${path})`;
}
