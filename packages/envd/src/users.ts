import { readFileSync, statSync } from "node:fs";

/** A local account as read from /etc/passwd and /etc/group. */
export interface User {
  name: string;
  uid: number;
  gid: number;
  home: string;
  shell: string;
}

export class UnknownUserError extends Error {
  constructor(readonly username: string) {
    super(`user '${username}' not found in /etc/passwd`);
    this.name = "UnknownUserError";
  }
}

function parseColonFile(text: string): string[][] {
  return text
    .split("\n")
    .filter((line) => line && !line.startsWith("#"))
    .map((line) => line.split(":"));
}

/**
 * One of the account files (/etc/passwd, /etc/group), parsed, kept while the file is unchanged:
 * templates and users may add accounts at any time (useradd renames a new file into place), so
 * each use checks the file's identity and times with one stat. Read synchronously: a small local
 * file costs a few syscalls, where libuv's thread pool costs a round trip per step (open, stat,
 * read, close), which under gVisor made the account look-up a tenth of a command's start.
 */
export class AccountFile {
  private rows: string[][] = [];
  private signature: string | undefined;
  /**
   * Set once the file was checked in this turn of the event loop, cleared before the next: one
   * request asks up to five times (its user, an entry's owner and group…) within one turn, and
   * a change in between could not be told from one just after it.
   */
  private checkedThisTurn = false;

  constructor(private readonly file: string) {}

  read(): string[][] {
    if (this.checkedThisTurn) return this.rows;
    this.checkedThisTurn = true;
    setImmediate(() => {
      this.checkedThisTurn = false;
    });
    let signature: string;
    let regular = false;
    try {
      const st = statSync(this.file, { bigint: true });
      signature = `${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
      regular = st.isFile();
    } catch {
      signature = "missing";
    }
    if (signature !== this.signature) {
      let text = "";
      try {
        // a FIFO or device there would block envd or never end: only a regular file is read
        if (regular) text = readFileSync(this.file, "utf8");
      } catch {
        // no such file: no accounts
      }
      this.rows = parseColonFile(text);
      this.signature = signature;
    }
    return this.rows;
  }
}

const passwdFile = new AccountFile("/etc/passwd");
const groupFile = new AccountFile("/etc/group");

function userOf(fields: string[]): User {
  return {
    name: fields[0]!,
    uid: Number(fields[2]),
    gid: Number(fields[3]),
    home: fields[5] || "/",
    shell: fields[6] || "/bin/sh",
  };
}

/** The account named `name`, as /etc/passwd says now. */
export async function lookupUser(name: string): Promise<User> {
  const fields = passwdFile.read().find((f) => f[0] === name);
  if (!fields) throw new UnknownUserError(name);
  return userOf(fields);
}

/** The account with this uid (the first in /etc/passwd), if any. */
export async function lookupUserById(uid: number): Promise<User | undefined> {
  const fields = passwdFile.read().find((f) => Number(f[2]) === uid && f[0]);
  return fields ? userOf(fields) : undefined;
}

/** The names of the groups an account belongs to: its primary group and those listing it. */
export async function groupNamesOf(user: User): Promise<string[]> {
  return groupFile
    .read()
    .filter((f) => Number(f[2]) === user.gid || (f[3] ?? "").split(",").includes(user.name))
    .map((f) => f[0]!);
}

/** The ids of the groups whose member lists in /etc/group name the account. */
export function listedGroupIds(user: User): number[] {
  return groupFile
    .read()
    .filter((f) => f[2] && (f[3] ?? "").split(",").includes(user.name))
    .map((f) => Number(f[2]));
}

/** Whether the account belongs to groups besides its primary one (the member lists of /etc/group). */
export function hasSupplementaryGroups(user: User): boolean {
  return listedGroupIds(user).some((gid) => gid !== user.gid);
}

/** id → name over an account file's rows (a later row of the same id wins). */
function namesById(rows: string[][]): Map<number, string> {
  const names = new Map<number, string>();
  for (const f of rows) if (f[0] && f[2]) names.set(Number(f[2]), f[0]);
  return names;
}

/**
 * Names for numeric ids, for `owner` and `group` of entries: from the same cached account files
 * as the look-ups above, so an account added later is named, and rebuilt only when a file changed.
 */
export class IdNames {
  private users = { rows: undefined as string[][] | undefined, names: new Map<number, string>() };
  private groups = { rows: undefined as string[][] | undefined, names: new Map<number, string>() };

  private current(): { users: Map<number, string>; groups: Map<number, string> } {
    for (const [cache, file] of [
      [this.users, passwdFile],
      [this.groups, groupFile],
    ] as const) {
      const rows = file.read();
      if (rows !== cache.rows) {
        cache.rows = rows;
        cache.names = namesById(rows);
      }
    }
    return { users: this.users.names, groups: this.groups.names };
  }

  /** Synchronous look-ups over the account files as they are now: for listings of many entries. */
  async lookups(): Promise<{ user(uid: number): string; group(gid: number): string }> {
    const { users, groups } = this.current();
    return {
      user: (uid) => users.get(uid) ?? String(uid),
      group: (gid) => groups.get(gid) ?? String(gid),
    };
  }

  async user(uid: number): Promise<string> {
    return this.current().users.get(uid) ?? String(uid);
  }

  async group(gid: number): Promise<string> {
    return this.current().groups.get(gid) ?? String(gid);
  }
}
