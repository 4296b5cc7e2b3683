import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";

/** Programs the image holds; envd (bind-mounted, run by the host's node) needs only their libraries. */
const PROGRAMS = [
  "/usr/bin/bash",
  "/usr/bin/dash",
  "/usr/bin/cat",
  "/usr/bin/whoami",
  "/usr/bin/sync",
  "/usr/bin/node",
];

/** The shared libraries `programs` load (ldd), as absolute paths. */
function libraries(programs: string[]): string[] {
  const libs = new Set<string>();
  for (const program of programs) {
    for (const m of execFileSync("ldd", [program], { encoding: "utf8" }).matchAll(/(\/\S+) \(0x/g))
      libs.add(m[1]!);
  }
  return [...libs];
}

/** A small Debian-compatible root filesystem: bash, coreutils bits and the C/C++ runtime. */
export function makeRootfs(root: string): void {
  for (const dir of ["usr/bin", "usr/lib", "usr/lib64", "etc", "root", "srv", "tmp"])
    mkdirSync(path.join(root, dir), { recursive: true });
  for (const [link, target] of [
    ["bin", "usr/bin"],
    ["lib", "usr/lib"],
    ["lib64", "usr/lib64"],
    ["sbin", "usr/bin"],
  ]) {
    symlinkSync(target!, path.join(root, link!));
  }
  // node itself comes from the host at run time; its libraries must be in the image
  for (const file of [...PROGRAMS.filter((p) => !p.endsWith("/node")), ...libraries(PROGRAMS)]) {
    const inside = path.join(root, file.replace(/^\/(lib|lib64|bin)\//, "/usr/$1/"));
    mkdirSync(path.dirname(inside), { recursive: true });
    copyFileSync(file, inside);
  }
  symlinkSync("dash", path.join(root, "usr/bin/sh"));
  writeFileSync(path.join(root, "etc/passwd"), "root:x:0:0:root:/root:/bin/bash\n");
  writeFileSync(path.join(root, "etc/group"), "root:x:0:\n");
  writeFileSync(path.join(root, "hello.txt"), "hello from oci\n");
}
