import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";

/**
 * The cgroup freezer of a container, written directly: what `runc pause`/`runc resume` do, in
 * well under a millisecond instead of a Go binary's start (runc reads the same freezer state
 * back, so `runc state` still says "paused"). For gVisor it stops the sandbox's sentry and
 * gofer as a whole, where `runsc pause` would cost a netns-joined runsc run each way (runsc's
 * own state keeps saying "running": see isFrozen). Works with cgroup v1 (also the hybrid
 * layout of these hosts) and v2. Returns false when the container's cgroup is not where we put
 * it, or when a freeze does not complete within a second (a task in an uninterruptible wait,
 * e.g. a gVisor gofer in the middle of disk I/O, can hold cgroup v1 in FREEZING): the cgroup is
 * thawed again and the caller falls back to the runtime's own pause.
 */
export async function setFrozen(
  cgroupPath: string,
  frozen: boolean,
  root = "/sys/fs/cgroup",
): Promise<boolean> {
  const v1 = join(root, "freezer", cgroupPath, "freezer.state");
  const v2 = join(root, cgroupPath, "cgroup.freeze");
  const deadline = Date.now() + (frozen ? 1_000 : 5_000);
  if (
    await writeFile(v1, frozen ? "FROZEN" : "THAWED").then(
      () => true,
      () => false,
    )
  ) {
    // FREEZING until every task has stopped
    const want = frozen ? "FROZEN" : "THAWED";
    while ((await readFile(v1, "utf8")).trim() !== want) {
      if (Date.now() > deadline && frozen) return giveUp(() => writeFile(v1, "THAWED"));
      if (Date.now() > deadline) throw new Error(`cgroup ${cgroupPath} did not reach ${want}`);
      await new Promise((r) => setTimeout(r, 1));
    }
    return true;
  }
  if (
    await writeFile(v2, frozen ? "1" : "0").then(
      () => true,
      () => false,
    )
  ) {
    const events = join(root, cgroupPath, "cgroup.events");
    const want = `frozen ${frozen ? 1 : 0}`;
    while (!(await readFile(events, "utf8")).split("\n").includes(want)) {
      if (Date.now() > deadline && frozen) return giveUp(() => writeFile(v2, "0"));
      if (Date.now() > deadline) throw new Error(`cgroup ${cgroupPath} did not reach '${want}'`);
      await new Promise((r) => setTimeout(r, 1));
    }
    return true;
  }
  return false;
}

/** A freeze that did not complete is undone; false tells the caller to pause another way. */
async function giveUp(thaw: () => Promise<void>): Promise<false> {
  await thaw();
  return false;
}

/** Whether the container's cgroup is frozen (false when there is no such cgroup). */
export async function isFrozen(cgroupPath: string, root = "/sys/fs/cgroup"): Promise<boolean> {
  const v1 = await readFile(join(root, "freezer", cgroupPath, "freezer.state"), "utf8").catch(
    () => undefined,
  );
  if (v1 !== undefined) return v1.trim() !== "THAWED";
  const v2 = await readFile(join(root, cgroupPath, "cgroup.events"), "utf8").catch(() => "");
  return v2.split("\n").includes("frozen 1");
}
