/**
 * The sudo stand-in of gVisor sandboxes: its reading of sudo's command line and of sudoers.
 * The whole path (stand-in → envd → command as root) runs in the platform's base-tools e2e test.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { mayRunAs, sudoGrant } from "../src/sudo/policy.js";
import { parseSudoArgs } from "../src/sudo/shim.js";

describe("sudo's command line", () => {
  it("reads options until the command, combined or apart", () => {
    expect(parseSudoArgs(["-nE", "-u", "bob", "ls", "-l"])).toMatchObject({
      nonInteractive: true,
      preserveEnv: true,
      user: "bob",
      argv: ["ls", "-l"],
    });
    expect(parseSudoArgs(["-ubob", "--", "-x"])).toMatchObject({ user: "bob", argv: ["-x"] });
    expect(parseSudoArgs(["--user=bob", "--login"])).toMatchObject({ user: "bob", login: true, argv: [] });
    expect(parseSudoArgs(["-s", "echo", "$HOME"])).toMatchObject({ shell: true, argv: ["echo", "$HOME"] });
  });

  it("takes VAR=value before the command as the command's environment", () => {
    expect(parseSudoArgs(["A=1", "B=x=y", "env"])).toMatchObject({
      env: { A: "1", B: "x=y" },
      argv: ["env"],
    });
  });
});

describe("sudoers", () => {
  let dir: string;
  const sudoers = (text: string) => writeFile(path.join(dir, "sudoers"), text);

  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "sudoers-"));
    await mkdir(path.join(dir, "sudoers.d"));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it("grants what plain rules say, through includes, to users and groups", async () => {
    await sudoers(
      [
        "Defaults env_reset",
        "root ALL=(ALL:ALL) ALL",
        "%sudo ALL=(ALL:ALL) ALL",
        `@includedir ${path.join(dir, "sudoers.d")}`,
      ].join("\n"),
    );
    await writeFile(path.join(dir, "sudoers.d", "user"), "user ALL=(ALL:ALL) NOPASSWD: ALL\n");
    // names with a dot are skipped, as sudo does
    await writeFile(path.join(dir, "sudoers.d", "x.bak"), "eve ALL=(ALL) NOPASSWD: ALL\n");
    const file = path.join(dir, "sudoers");

    const user = await sudoGrant("user", ["user"], file);
    expect(user).toMatchObject({ allowed: true, nopasswd: true, rules: ["(ALL : ALL) NOPASSWD: ALL"] });
    expect(mayRunAs(user, "nobody")).toBe(true);

    const admin = await sudoGrant("alice", ["alice", "sudo"], file);
    expect(admin).toMatchObject({ allowed: true, nopasswd: false });

    expect(await sudoGrant("eve", ["eve"], file)).toMatchObject({ allowed: false });
  });

  it("ignores rules limited to commands and keeps the run-as list", async () => {
    await sudoers("bob ALL=(root) NOPASSWD: /usr/bin/apt\ncarol ALL=(postgres) NOPASSWD: ALL\n");
    const file = path.join(dir, "sudoers");
    expect(await sudoGrant("bob", [], file)).toMatchObject({ allowed: false });
    const carol = await sudoGrant("carol", [], file);
    expect(mayRunAs(carol, "postgres")).toBe(true);
    expect(mayRunAs(carol, "root")).toBe(false);
  });
});
