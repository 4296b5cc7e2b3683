import { readdir, readFile } from "node:fs/promises";

/** One process as /proc shows it: enough to pick a victim and to find what it belongs to. */
export interface ProcEntry {
  pid: number;
  /** Session id: envd starts every command in a session of its own (its pid). */
  sid: number;
  /** Process group: a shell without job control keeps what it starts in its own. */
  pgrp: number;
  /** Resident memory in bytes (under gVisor this includes mapped files). */
  rss: number;
}

/** The numeric entries of /proc: every process of the sandbox (its own pid namespace). */
export async function listPids(): Promise<number[]> {
  const names = await readdir("/proc").catch(() => [] as string[]);
  return names.filter((n) => /^\d+$/.test(n)).map(Number);
}

/** `/proc/<pid>/stat`: the session id is field 6 (after the parenthesised command), rss field 24 in pages. */
async function readEntry(pid: number): Promise<ProcEntry | undefined> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => undefined);
  if (!stat) return undefined;
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // after the command: state(3) ppid(4) pgrp(5) session(6) … rss(24)
  // a zombie is dead already: its parent has yet to collect it
  if (fields[0] === "Z" || fields[0] === "X") return undefined;
  const pgrp = Number(fields[2]);
  const sid = Number(fields[3]);
  const rssPages = Number(fields[21]);
  return { pid, sid, pgrp, rss: rssPages * 4096 };
}

/** Every live process but the ones named in `except` (envd itself, the init). */
export async function processTable(except: ReadonlySet<number>): Promise<ProcEntry[]> {
  const entries = await Promise.all((await listPids()).filter((p) => !except.has(p)).map(readEntry));
  return entries.filter((e): e is ProcEntry => e !== undefined);
}

/**
 * SIGKILLs every process of a session until none is left. Each pass signals the session's
 * process groups first (one call ends a whole group, and a fork under way in it fails: a
 * fork bomb's shells keep their children in their group), then each process; children born
 * while a pass runs are caught by the next, and a killed process forks no more.
 */
export async function killSession(sid: number, except: ReadonlySet<number>, maxPasses = 50): Promise<number> {
  const killed = new Set<number>();
  for (let pass = 0; pass < maxPasses; pass++) {
    const members = (await processTable(except)).filter((e) => e.sid === sid);
    if (members.length === 0) break;
    for (const pgrp of new Set(members.map((m) => m.pgrp))) {
      if (pgrp <= 1 || except.has(pgrp)) continue;
      try {
        process.kill(-pgrp, "SIGKILL");
      } catch {
        // gone already
      }
    }
    for (const { pid } of members) {
      try {
        killed.add(pid);
        process.kill(pid, "SIGKILL");
      } catch {
        // gone already
      }
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  return killed.size;
}
