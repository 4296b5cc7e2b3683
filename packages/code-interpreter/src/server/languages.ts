/** The languages contexts run, as @e2b/code-interpreter names them. */
export type Language = "python" | "javascript" | "typescript" | "r" | "bash" | "java";

const ALIASES: Record<string, Language> = {
  "": "python",
  python: "python",
  python3: "python",
  js: "javascript",
  javascript: "javascript",
  ts: "typescript",
  typescript: "typescript",
  r: "r",
  bash: "bash",
  sh: "bash",
  java: "java",
};

/** The language a request names, normalised as E2B's server does (`js` → `javascript`); undefined when unknown. */
export function normalizeLanguage(name: string | undefined | null): Language | undefined {
  return ALIASES[(name ?? "").trim().toLowerCase()];
}

export const LANGUAGES = Object.freeze([...new Set(Object.values(ALIASES))]);

/** Quotes a value for the language's source, so no value can end the literal early. */
function literal(language: Language, value: string): string {
  switch (language) {
    case "bash":
      return `'${value.replace(/'/g, `'\\''`)}'`;
    case "r":
      // JSON's escapes are R's, except \u0000, which R strings cannot hold
      return JSON.stringify(value.replace(/\0/g, ""));
    default:
      return JSON.stringify(value);
  }
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Code that sets (a string) or removes (undefined) environment variables in a running kernel.
 * Names that are not identifiers are refused, since a shell could not hold them either.
 */
export function envCode(language: Language, envs: Record<string, string | undefined>): string {
  const lines: string[] = [];
  for (const [name, value] of Object.entries(envs)) {
    if (!NAME.test(name)) throw new Error(`'${name}' is not a valid environment variable name`);
    const v = value === undefined ? undefined : literal(language, value);
    switch (language) {
      case "python":
        lines.push(
          v === undefined
            ? `__import__("os").environ.pop(${JSON.stringify(name)}, None)`
            : `__import__("os").environ[${JSON.stringify(name)}] = ${v}`,
        );
        break;
      case "javascript":
      case "typescript":
        lines.push(
          v === undefined
            ? `delete process.env[${JSON.stringify(name)}];`
            : `process.env[${JSON.stringify(name)}] = ${v};`,
        );
        break;
      case "r":
        lines.push(v === undefined ? `Sys.unsetenv(${JSON.stringify(name)})` : `Sys.setenv(${name} = ${v})`);
        break;
      case "bash":
        lines.push(v === undefined ? `unset ${name}` : `export ${name}=${v}`);
        break;
      case "java":
        // a JVM's environment is fixed at start: the properties are what Java code reads
        lines.push(
          v === undefined
            ? `System.clearProperty(${JSON.stringify(name)});`
            : `System.setProperty(${JSON.stringify(name)}, ${v});`,
        );
        break;
    }
  }
  return lines.join("\n");
}

/** A statement that does nothing, run once in a new default context so its first real run is not its kernel's first. */
export const NOTHING: Record<Language, string> = {
  python: "pass",
  javascript: "0",
  typescript: "0",
  r: "invisible(NULL)",
  bash: ":",
  java: "0;",
};
