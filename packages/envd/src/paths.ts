import path from "node:path";
import type { User } from "./users.js";

/**
 * Resolves a path from a client: `~` and relative paths are taken from the user's home,
 * and the result is normalised (no `..` escapes past `/`).
 */
export function resolvePath(input: string, user: User, cwd?: string): string {
  if (input === "~") return user.home;
  if (input.startsWith("~/")) return path.join(user.home, input.slice(2));
  if (path.isAbsolute(input)) return path.normalize(input);
  return path.resolve(cwd ?? user.home, input);
}
