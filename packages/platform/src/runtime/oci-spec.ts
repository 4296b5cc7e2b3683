import { chown, mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { defaultSeccomp, type SeccompProfile } from "./seccomp.js";

/** Where the platform's own files appear inside every sandbox (a small tmpfs with read-only binds). */
export const AGENT_DIR = "/opt/x";
export const AGENT_NODE = `${AGENT_DIR}/bin/node`;
export const AGENT_INIT = `${AGENT_DIR}/bin/tini`;
export const AGENT_ENVD_DIR = `${AGENT_DIR}/envd`;

export interface BindMount {
  source: string;
  destination: string;
  readonly?: boolean;
}

/** A program runc runs at a point of the container's creation (OCI runtime spec, hooks). */
export interface OciHook {
  path: string;
  args?: string[];
}

export interface SandboxSpecOptions {
  /** Absolute path of the (overlay-mounted) root filesystem. */
  rootfs: string;
  /** The process tini supervises as pid 1's child, e.g. [AGENT_NODE, `${AGENT_ENVD_DIR}/envd.js`]. */
  args: string[];
  env?: string[];
  cwd?: string;
  hostname: string;
  /** /run/netns/NAME to join; the sandbox gets that namespace's network. */
  netnsPath: string;
  cpuCount: number;
  /** Relative CPU weight against other sandboxes (cpu.shares scale, 1024 = default). */
  cpuShares?: number;
  memoryMB: number;
  /** Max tasks in the sandbox; default 4096. */
  pidsLimit?: number;
  /** oom_score_adj of the container's init (and envd); default 500. */
  oomScoreAdj?: number;
  /** Host directory holding the envd bundle, shown read-only at AGENT_ENVD_DIR. */
  envdDir: string;
  /** Host Node binary used to run envd; default /usr/bin/node. */
  nodeBinary?: string;
  /** A statically linked tini; default /usr/bin/tini-static (Debian package tini). */
  initBinary?: string;
  /** cgroup path (relative to each controller root), default `/x/<hostname>`. */
  cgroupsPath?: string;
  binds?: BindMount[];
  /** The resolver the sandbox's /etc/resolv.conf names (the platform's DNS service on its gateway). */
  nameserver?: string;
  /** Run in the container's mount namespace before pivot_root (runc). */
  createContainerHooks?: OciHook[];
  /**
   * Runs the container in a user namespace of its own (runc): container uids and gids
   * 0..size-1 are the host's hostId..hostId+size-1. The rootfs and the binds whose files the
   * sandbox owns must then be idmapped views (see runc-userns.ts), and /sys is `sysfs`, a
   * sysfs of the sandbox's netns mounted by the host: the netns belongs to the host's user
   * namespace, so one cannot be mounted from inside.
   */
  userNamespace?: UserNamespace & { sysfs: string };
}

/** A range of host ids a container's 0..size-1 stand for. */
export interface UserNamespace {
  hostId: number;
  size: number;
}

/**
 * Docker's default capability set without CAP_MKNOD (device nodes), CAP_NET_RAW (raw sockets:
 * ping uses ICMP datagram sockets instead, see runc-userns.ts) and CAP_SETFCAP (file
 * capabilities): enough for root inside to chown, bind low ports and run setuid sudo. Under
 * runc these are capabilities of the sandbox's own user namespace only.
 */
export const CAPABILITIES = [
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
];

const DEFAULT_ENV = [
  "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
  "LANG=C.UTF-8",
  "HOME=/root",
];

export interface OciSpec {
  ociVersion: string;
  process: Record<string, unknown>;
  root: { path: string; readonly: boolean };
  hostname: string;
  mounts: Array<{ destination: string; type: string; source: string; options?: string[] }>;
  hooks?: { createContainer: OciHook[] };
  linux: Record<string, unknown> & { seccomp?: SeccompProfile };
}

export function buildSpec(o: SandboxSpecOptions): OciSpec {
  const pidsLimit = o.pidsLimit ?? 4096;
  const periodUs = 100_000;
  const memoryBytes = o.memoryMB * 1024 * 1024;
  return {
    ociVersion: "1.0.2",
    process: {
      terminal: false,
      user: { uid: 0, gid: 0 },
      // tini reaps orphans (Node as pid 1 would not) and forwards signals to envd alone,
      // so the checkpoint quiesce signals reach envd and not the processes it runs
      args: [AGENT_INIT, "-s", "--", ...o.args],
      env: o.env ?? DEFAULT_ENV,
      cwd: o.cwd ?? "/",
      capabilities: {
        bounding: CAPABILITIES,
        effective: CAPABILITIES,
        permitted: CAPABILITIES,
      },
      // no rlimits: the sandbox inherits the platform's; raising a hard limit needs
      // CAP_SYS_RESOURCE, which root on these hosts does not have
      // sudo is setuid: no_new_privs would make it fail for the sandbox user
      noNewPrivileges: false,
      oomScoreAdj: o.oomScoreAdj ?? 500,
    },
    root: { path: o.rootfs, readonly: false },
    hostname: o.hostname,
    ...(o.createContainerHooks?.length ? { hooks: { createContainer: o.createContainerHooks } } : {}),
    mounts: [
      { destination: "/proc", type: "proc", source: "proc", options: ["nosuid", "noexec", "nodev"] },
      {
        destination: "/dev",
        type: "tmpfs",
        source: "tmpfs",
        options: ["nosuid", "strictatime", "mode=755", "size=65536k"],
      },
      {
        destination: "/dev/pts",
        type: "devpts",
        source: "devpts",
        options: ["nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", "gid=5"],
      },
      {
        destination: "/dev/shm",
        type: "tmpfs",
        source: "shm",
        options: ["nosuid", "nodev", "mode=1777", "size=65536k"],
      },
      {
        destination: "/dev/mqueue",
        type: "mqueue",
        source: "mqueue",
        options: ["nosuid", "noexec", "nodev"],
      },
      o.userNamespace
        ? {
            destination: "/sys",
            type: "bind",
            source: o.userNamespace.sysfs,
            options: ["rbind", "nosuid", "noexec", "nodev", "ro"],
          }
        : {
            destination: "/sys",
            type: "sysfs",
            source: "sysfs",
            options: ["nosuid", "noexec", "nodev", "ro"],
          },
      {
        destination: "/sys/fs/cgroup",
        type: "cgroup",
        source: "cgroup",
        options: ["nosuid", "noexec", "nodev", "relatime", "ro"],
      },
      {
        destination: AGENT_DIR,
        type: "tmpfs",
        source: "tmpfs",
        options: ["nosuid", "nodev", "mode=755", "size=1m"],
      },
      bind(o.envdDir, AGENT_ENVD_DIR, true),
      bind(o.nodeBinary ?? "/usr/bin/node", AGENT_NODE, true),
      bind(o.initBinary ?? "/usr/bin/tini-static", AGENT_INIT, true),
      ...(o.binds ?? []).map((b) => bind(b.source, b.destination, b.readonly ?? false)),
    ],
    linux: {
      namespaces: [
        { type: "pid" },
        { type: "ipc" },
        { type: "uts" },
        { type: "mount" },
        { type: "network", path: o.netnsPath },
        ...(o.userNamespace ? [{ type: "user" }] : []),
      ],
      ...(o.userNamespace ? idMappings(o.userNamespace) : {}),
      cgroupsPath: o.cgroupsPath ?? containerCgroup({ id: o.hostname }),
      resources: {
        devices: [{ allow: false, access: "rwm" }],
        cpu: {
          quota: Math.round(o.cpuCount * periodUs),
          period: periodUs,
          ...(o.cpuShares !== undefined ? { shares: o.cpuShares } : {}),
        },
        // memory+swap equal to memory: no swapping past the limit
        memory: { limit: memoryBytes, swap: memoryBytes },
        pids: { limit: pidsLimit },
      },
      maskedPaths: [
        "/proc/acpi",
        "/proc/asound",
        "/proc/kcore",
        "/proc/keys",
        "/proc/latency_stats",
        "/proc/timer_list",
        "/proc/timer_stats",
        "/proc/sched_debug",
        "/proc/scsi",
        "/sys/firmware",
      ],
      readonlyPaths: ["/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"],
      seccomp: defaultSeccomp(),
    },
  };
}

function idMappings(ns: UserNamespace) {
  const mapping = [{ containerID: 0, hostID: ns.hostId, size: ns.size }];
  return { uidMappings: mapping, gidMappings: mapping };
}

function bind(source: string, destination: string, readonly: boolean) {
  const options = ["rbind", "nosuid", "nodev", readonly ? "ro" : "rw"];
  return { destination, type: "bind", source, options };
}

/**
 * Writes a bundle: config.json plus the sandbox's own /etc/hosts, /etc/hostname and
 * /etc/resolv.conf, bound over the template's (tools such as sudo resolve the hostname and
 * stall on DNS when it is missing; the template's resolver would be the host's, which
 * sandboxes may not reach). The rootfs stays wherever `o.rootfs` points. Returns the spec written.
 */
export async function writeBundle(bundleDir: string, o: SandboxSpecOptions): Promise<OciSpec> {
  await mkdir(bundleDir, { recursive: true });
  const hosts = join(bundleDir, "hosts");
  const hostname = join(bundleDir, "hostname");
  await writeFile(hosts, hostsFile(o.hostname));
  await writeFile(hostname, `${o.hostname}\n`);
  const resolvConf = await writeResolvConf(bundleDir, o.nameserver);
  // in a user namespace, root inside may edit them as before (`echo … >> /etc/hosts`)
  if (o.userNamespace) {
    const { hostId } = o.userNamespace;
    await Promise.all([hosts, hostname, resolvConf].map((f) => chown(f, hostId, hostId)));
  }
  const spec = buildSpec({
    ...o,
    binds: [
      { source: hosts, destination: "/etc/hosts" },
      { source: hostname, destination: "/etc/hostname" },
      { source: resolvConf, destination: "/etc/resolv.conf" },
      ...(o.binds ?? []),
    ],
  });
  await writeFile(join(bundleDir, "config.json"), JSON.stringify(spec, null, 2));
  return spec;
}

/**
 * The sandbox's /etc/resolv.conf in its bundle; rewritten when the sandbox comes back on
 * another network (a restore). Queries to any address on port 53 reach the platform's DNS
 * service anyway: the firewall redirects them.
 */
export async function writeResolvConf(bundleDir: string, nameserver?: string): Promise<string> {
  const file = join(bundleDir, "resolv.conf");
  await writeFile(file, nameserver ? `nameserver ${nameserver}\noptions timeout:2 attempts:2\n` : "");
  return file;
}

function hostsFile(hostname: string): string {
  return [
    "127.0.0.1\tlocalhost",
    `127.0.1.1\t${hostname}`,
    "::1\tlocalhost ip6-localhost ip6-loopback",
    "",
  ].join("\n");
}

/** The cgroup above every sandbox's, relative to each controller's root. */
export const SANDBOXES_CGROUP = "/x";

/** Where a container's cgroup is, relative to each controller's root (the bundles' default). */
export function containerCgroup(c: { id: string }): string {
  return `${SANDBOXES_CGROUP}/${c.id}`;
}
