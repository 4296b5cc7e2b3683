import { constants as fsConstants } from "node:fs";
import { access } from "../sync-fs.js";
import { hasSupplementaryGroups, type User } from "../users.js";

const SETPRIV_PATHS = ["/usr/bin/setpriv", "/bin/setpriv"];

/** How a process is started: the program, its arguments, and the ids it runs with. */
export interface Launch {
  file: string;
  args: string[];
  uid?: number;
  gid?: number;
}

/** Whether `file` may be executed by envd. */
function canExecute(file: string): Promise<boolean> {
  return access(file, fsConstants.X_OK).then(
    () => true,
    () => false,
  );
}

/**
 * Decides how to run a program as a user. envd (root) drops its own supplementary groups when
 * it starts, so a child given only a uid and gid (Node's spawn also clears the group list; a PTY
 * inherits envd's empty one) runs exactly as the account would, without a helper. Only an
 * account with supplementary groups of its own needs util-linux's setpriv to pick them up
 * (`--init-groups`): one more exec per process, which under gVisor costs tens of milliseconds.
 */
export class Launcher {
  private setprivPath: Promise<string | undefined> | undefined;

  async as(user: User, file: string, args: string[]): Promise<Launch> {
    if (user.uid === process.getuid?.() && user.gid === process.getgid?.()) return { file, args };
    if (process.getuid?.() !== 0 || !hasSupplementaryGroups(user)) {
      return { file, args, uid: user.uid, gid: user.gid };
    }
    this.setprivPath ??= (async () => {
      for (const candidate of SETPRIV_PATHS) if (await canExecute(candidate)) return candidate;
      return undefined;
    })();
    const setpriv = await this.setprivPath;
    if (!setpriv) return { file, args, uid: user.uid, gid: user.gid };
    return {
      file: setpriv,
      args: [`--reuid=${user.uid}`, `--regid=${user.gid}`, "--init-groups", "--", file, ...args],
    };
  }
}

/** envd as root keeps no supplementary groups: what its children inherit is then nothing extra. */
export function dropSupplementaryGroups(): void {
  if (process.getuid?.() === 0 && process.setgroups) process.setgroups([]);
}
