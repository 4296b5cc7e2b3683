import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";

export interface AptMirrors {
  /** Serves `<suite>` and `<suite>-updates`. */
  main: string;
  /** Serves `<suite>-security`. */
  security: string;
}

const FALLBACK: AptMirrors = {
  main: "http://deb.debian.org/debian",
  security: "http://deb.debian.org/debian-security",
};

interface SourceEntry {
  uri: string;
  suites: string[];
}

/** Parses both apt source formats: one-line `deb URI SUITE…` and deb822 `URIs:`/`Suites:` stanzas. */
export function parseAptSources(text: string): SourceEntry[] {
  const entries: SourceEntry[] = [];
  for (const line of text.split("\n")) {
    const m = /^\s*deb\s+(?:\[[^\]]*\]\s+)?(\S+)\s+(\S+)/.exec(line);
    if (m) entries.push({ uri: m[1]!, suites: [m[2]!] });
  }
  for (const stanza of text.split(/\n\s*\n/)) {
    const field = (name: string) =>
      new RegExp(`^${name}:\\s*(.+)$`, "mi").exec(stanza)?.[1]?.trim().split(/\s+/) ?? [];
    const types = field("Types");
    if (!types.includes("deb")) continue;
    for (const uri of field("URIs")) entries.push({ uri, suites: field("Suites") });
  }
  return entries;
}

/** The Debian mirrors this host's apt already uses for `suite`, so image builds go where apt is known to work. */
export async function hostAptMirrors(suite: string, aptDir = "/etc/apt"): Promise<AptMirrors> {
  const texts: string[] = [];
  const tryRead = async (path: string) => {
    try {
      texts.push(await readFile(path, "utf8"));
    } catch {
      // absent files are normal: hosts use either format
    }
  };
  await tryRead(join(aptDir, "sources.list"));
  const dir = join(aptDir, "sources.list.d");
  const names = await readdir(dir).catch(() => [] as string[]);
  for (const name of names.sort()) {
    if (name.endsWith(".list") || name.endsWith(".sources")) await tryRead(join(dir, name));
  }
  const entries = texts.flatMap(parseAptSources);
  const find = (s: string) => entries.find((e) => e.suites.includes(s))?.uri.replace(/\/+$/, "");
  return {
    main: find(suite) ?? FALLBACK.main,
    security: find(`${suite}-security`) ?? FALLBACK.security,
  };
}
