import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  AGENT_INIT,
  AGENT_NODE,
  buildSpec,
  CAPABILITIES,
  type SandboxSpecOptions,
  writeBundle,
} from "./oci-spec.js";

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

test("root holds Docker's capabilities but CAP_MKNOD, CAP_NET_RAW and CAP_SETFCAP, and no more", () => {
  const caps = (buildSpec(opts).process as { capabilities: Record<string, string[]> }).capabilities;
  for (const set of ["bounding", "effective", "permitted"]) {
    expect(caps[set]).toEqual(CAPABILITIES);
    expect(caps[set]).not.toEqual(expect.arrayContaining(["CAP_MKNOD"]));
    expect(caps[set]).not.toEqual(expect.arrayContaining(["CAP_NET_RAW"]));
    expect(caps[set]).not.toEqual(expect.arrayContaining(["CAP_SETFCAP"]));
  }
  expect([...CAPABILITIES].sort()).toEqual([
    "CAP_AUDIT_WRITE",
    "CAP_CHOWN",
    "CAP_DAC_OVERRIDE",
    "CAP_FOWNER",
    "CAP_FSETID",
    "CAP_KILL",
    "CAP_NET_BIND_SERVICE",
    "CAP_SETGID",
    "CAP_SETPCAP",
    "CAP_SETUID",
    "CAP_SYS_CHROOT",
  ]);
});

test("the allow-list seccomp profile is in every spec", () => {
  const seccomp = (buildSpec(opts).linux as { seccomp: { defaultAction: string } }).seccomp;
  expect(seccomp.defaultAction).toBe("SCMP_ACT_ERRNO");
});

describe("in a user namespace (runc)", () => {
  const userNamespace = { hostId: 0x7000_0000, size: 65_536, sysfs: "/run/x-runc/0/sys" };
  const spec = buildSpec({ ...opts, userNamespace });
  const linux = spec.linux as {
    namespaces: Array<{ type: string; path?: string }>;
    uidMappings: object[];
    gidMappings: object[];
  };

  test("the container's ids 0..size-1 are the host's from hostId", () => {
    expect(linux.namespaces).toContainEqual({ type: "user" });
    // the network stays the host's: root inside has no capability over it
    expect(linux.namespaces).toContainEqual({ type: "network", path: "/run/netns/x-s1" });
    const mapping = [{ containerID: 0, hostID: 0x7000_0000, size: 65_536 }];
    expect(linux.uidMappings).toEqual(mapping);
    expect(linux.gidMappings).toEqual(mapping);
  });

  test("/sys is the host's sysfs of the sandbox's netns, bound read-only", () => {
    expect(spec.mounts.filter((m) => m.destination === "/sys")).toEqual([
      {
        destination: "/sys",
        type: "bind",
        source: "/run/x-runc/0/sys",
        options: ["rbind", "nosuid", "noexec", "nodev", "ro"],
      },
    ]);
  });

  test("without one, no user namespace and sysfs mounted by the runtime", () => {
    const plain = buildSpec(opts);
    expect(
      (plain.linux as { namespaces: Array<{ type: string }> }).namespaces.map((n) => n.type),
    ).not.toContain("user");
    expect(plain.linux).not.toHaveProperty("uidMappings");
    expect(plain.mounts.find((m) => m.destination === "/sys")?.type).toBe("sysfs");
  });
});
