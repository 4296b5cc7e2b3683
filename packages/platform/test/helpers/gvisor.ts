import { execFileSync } from "node:child_process";

let build: number | undefined;

/**
 * The release date of the installed runsc (20221219 for bookworm's, 20240729 for
 * bookworm-backports'): tests of behaviour that changed between them expect what this one does.
 */
export function gvisorBuild(): number {
  if (build === undefined) {
    const version = execFileSync("runsc", ["--version"], { encoding: "utf8" });
    build = Number(/version \S*?(\d{8})/.exec(version)?.[1] ?? 0);
  }
  return build;
}

/** gVisor saves listening sockets and fixed statx(AT_NO_AUTOMOUNT) in its 2023 releases. */
export const gvisorBefore2023 = () => gvisorBuild() < 20230101;
