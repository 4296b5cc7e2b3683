import { readFile } from "node:fs/promises";

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

/** Reads the account database on every call: templates and users may add accounts at any time. */
export async function lookupUser(name: string): Promise<User> {
  const passwd = await readFile("/etc/passwd", "utf8").catch(() => "");
  for (const fields of parseColonFile(passwd)) {
    if (fields[0] !== name) continue;
    return {
      name,
      uid: Number(fields[2]),
      gid: Number(fields[3]),
      home: fields[5] || "/",
      shell: fields[6] || "/bin/sh",
    };
  }
  throw new UnknownUserError(name);
}

/** The account with this uid (the first in /etc/passwd), if any. */
export async function lookupUserById(uid: number): Promise<User | undefined> {
  const passwd = await readFile("/etc/passwd", "utf8").catch(() => "");
  const fields = parseColonFile(passwd).find((f) => Number(f[2]) === uid && f[0]);
  return fields ? lookupUser(fields[0]!) : undefined;
}

/** The names of the groups an account belongs to: its primary group and those listing it. */
export async function groupNamesOf(user: User): Promise<string[]> {
  const group = await readFile("/etc/group", "utf8").catch(() => "");
  return parseColonFile(group)
    .filter((f) => Number(f[2]) === user.gid || (f[3] ?? "").split(",").includes(user.name))
    .map((f) => f[0]!);
}

/** Names for numeric ids, for `owner` and `group` of entries. Cached briefly per call site. */
export class IdNames {
  private users = new Map<number, string>();
  private groups = new Map<number, string>();
  private loaded: Promise<void> | undefined;

  private load(): Promise<void> {
    this.loaded ??= (async () => {
      const [passwd, group] = await Promise.all([
        readFile("/etc/passwd", "utf8").catch(() => ""),
        readFile("/etc/group", "utf8").catch(() => ""),
      ]);
      for (const f of parseColonFile(passwd)) if (f[0] && f[2]) this.users.set(Number(f[2]), f[0]);
      for (const f of parseColonFile(group)) if (f[0] && f[2]) this.groups.set(Number(f[2]), f[0]);
    })();
    return this.loaded;
  }

  /** Synchronous look-ups once the account files are read: for listings of many entries. */
  async lookups(): Promise<{ user(uid: number): string; group(gid: number): string }> {
    await this.load();
    return {
      user: (uid) => this.users.get(uid) ?? String(uid),
      group: (gid) => this.groups.get(gid) ?? String(gid),
    };
  }

  async user(uid: number): Promise<string> {
    await this.load();
    return this.users.get(uid) ?? String(uid);
  }

  async group(gid: number): Promise<string> {
    await this.load();
    return this.groups.get(gid) ?? String(gid);
  }
}
