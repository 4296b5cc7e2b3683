import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AGENT_INIT, AGENT_NODE, buildSpec, type SandboxSpecOptions, writeBundle } from "./oci-spec.js";

const opts: SandboxSpecOptions = {
  rootfs: "/data/sandboxes/s1/rootfs",
  args: [AGENT_NODE, "/opt/x/envd/envd.cjs"],
  hostname: "s1",
  netnsPath: "/run/netns/x-s1",
  cpuCount: 2,
  memoryMB: 512,
  envdDir: "/data/envd",
};

test("envd runs under tini as root, with setuid allowed for sudo", () => {
  const p = buildSpec(opts).process as { args: string[]; user: object; noNewPrivileges: boolean };
  expect(p.args).toEqual([AGENT_INIT, "-s", "--", AGENT_NODE, "/opt/x/envd/envd.cjs"]);
  expect(p.user).toEqual({ uid: 0, gid: 0 });
  expect(p.noNewPrivileges).toBe(false);
});

test("limits follow cpuCount, memoryMB and pidsLimit", () => {
  const r = (buildSpec({ ...opts, pidsLimit: 100 }).linux as { resources: Record<string, unknown> })
    .resources;
  expect(r.cpu).toEqual({ quota: 200_000, period: 100_000 });
  expect(r.memory).toEqual({ limit: 512 * 2 ** 20, swap: 512 * 2 ** 20 });
  expect(r.pids).toEqual({ limit: 100 });
});

test("joins the given netns and gets private pid, ipc, uts and mount namespaces", () => {
  const linux = buildSpec(opts).linux as { namespaces: object[]; cgroupsPath: string };
  expect(linux.namespaces).toEqual([
    { type: "pid" },
    { type: "ipc" },
    { type: "uts" },
    { type: "mount" },
    { type: "network", path: "/run/netns/x-s1" },
  ]);
  expect(linux.cgroupsPath).toBe("/x/s1");
});

test("the agent files are bound read-only into a tmpfs of their own", () => {
  const mounts = buildSpec(opts).mounts;
  expect(mounts.find((m) => m.destination === "/opt/x")?.type).toBe("tmpfs");
  for (const [source, destination] of [
    ["/data/envd", "/opt/x/envd"],
    ["/usr/bin/node", AGENT_NODE],
    ["/usr/bin/tini-static", AGENT_INIT],
  ]) {
    expect(mounts).toContainEqual({
      destination,
      type: "bind",
      source,
      options: ["rbind", "nosuid", "nodev", "ro"],
    });
  }
  expect(mounts.map((m) => m.destination)).toEqual(
    expect.arrayContaining(["/proc", "/dev", "/dev/pts", "/dev/shm", "/sys"]),
  );
});

test("writeBundle writes config.json with its own hosts and hostname bound in", async () => {
  const dir = await mkdtemp(join(tmpdir(), "bundle-"));
  try {
    const spec = await writeBundle(dir, opts);
    expect(JSON.parse(await readFile(join(dir, "config.json"), "utf8"))).toEqual(spec);
    expect(await readFile(join(dir, "hosts"), "utf8")).toMatch(/^127\.0\.1\.1\ts1$/m);
    expect(await readFile(join(dir, "hostname"), "utf8")).toBe("s1\n");
    expect(spec.mounts).toContainEqual({
      destination: "/etc/hosts",
      type: "bind",
      source: join(dir, "hosts"),
      options: ["rbind", "nosuid", "nodev", "rw"],
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
