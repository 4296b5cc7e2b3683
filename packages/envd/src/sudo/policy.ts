import { readdir, readFile } from "node:fs/promises";
import path from "node:path";

/**
 * What /etc/sudoers (and the files it includes) grants an account, read the way sudo reads the
 * common rules: `who host=(runas) [NOPASSWD:] ALL`, where who is a user, a %group or ALL.
 * Rules limited to named commands, aliases and Defaults are not interpreted: such a grant is
 * treated as absent, so nothing runs that sudoers did not plainly allow.
 */
export interface SudoGrant {
  /** The rule lets the account run any command. */
  allowed: boolean;
  /** ...without a password (this sandbox has no way to ask for one). */
  nopasswd: boolean;
  /** Accounts it may run as; "ALL" for any. */
  runAs: string[];
  /** The rule lines that matched, as `sudo -l` shows them. */
  rules: string[];
}

const SUDOERS = "/etc/sudoers";

/** Files sudo would read: sudoers, then its #include/@include and #includedir/@includedir. */
async function sudoersLines(file: string, depth = 0): Promise<string[]> {
  if (depth > 8) return [];
  const text = await readFile(file, "utf8").catch(() => "");
  const out: string[] = [];
  // a trailing backslash continues a rule on the next line
  for (const raw of text.replace(/\\\n/g, " ").split("\n")) {
    const line = raw.trim();
    const include = /^[#@]include(dir)?\s+(.+)$/.exec(line);
    if (include) {
      const target = path.resolve(path.dirname(file), include[2]!.trim());
      if (!include[1]) out.push(...(await sudoersLines(target, depth + 1)));
      else {
        // sudo skips names with a dot or ending in ~ (editor backups, package leftovers)
        const names = (await readdir(target).catch(() => [] as string[])).filter(
          (n) => !n.includes(".") && !n.endsWith("~"),
        );
        for (const name of names.sort())
          out.push(...(await sudoersLines(path.join(target, name), depth + 1)));
      }
      continue;
    }
    if (line && !line.startsWith("#")) out.push(line);
  }
  return out;
}

/** What sudoers (`file`, /etc/sudoers by default) grants `user`, a member of `groups`. */
export async function sudoGrant(user: string, groups: string[], file = SUDOERS): Promise<SudoGrant> {
  const grant: SudoGrant = { allowed: false, nopasswd: false, runAs: [], rules: [] };
  for (const line of await sudoersLines(file)) {
    const m = /^(\S+)\s+\S+\s*=\s*(?:\(([^)]*)\)\s*)?((?:[A-Z_]+:\s*)*)(.+)$/.exec(line);
    if (!m || /^(Defaults|User_Alias|Runas_Alias|Host_Alias|Cmnd_Alias)/.test(line)) continue;
    const [, who, runas = "root", tags, commands] = m;
    const applies = who === "ALL" || who === user || (who!.startsWith("%") && groups.includes(who!.slice(1)));
    if (!applies || commands!.trim() !== "ALL") continue;
    grant.allowed = true;
    if (/NOPASSWD:/.test(tags!)) grant.nopasswd = true;
    const users = runas
      .split(":")[0]!
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean);
    grant.runAs.push(...(users.length ? users : ["root"]));
    const runasText = runas
      .split(":")
      .map((s) => s.trim())
      .join(" : ");
    grant.rules.push(`(${runasText}) ${tags!.trim()} ${commands!.trim()}`.replace(/\s+/g, " "));
  }
  return grant;
}

export function mayRunAs(grant: SudoGrant, target: string): boolean {
  return grant.runAs.includes("ALL") || grant.runAs.includes(target);
}
