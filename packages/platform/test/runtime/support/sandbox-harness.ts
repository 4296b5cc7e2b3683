import { access, readdir, readFile, rm, rmdir } from "node:fs/promises";
import { join, resolve } from "node:path";
import { type EgressPolicy, OPEN_EGRESS } from "../../../src/model/network.js";
import type { NetworkManager, SandboxNetwork } from "../../../src/network/network-manager.js";
import { isOverlayMounted, mountOverlay, unmountOverlay } from "../../../src/rootfs/overlay.js";
import type { ContainerRef, ContainerRuntime } from "../../../src/runtime/container-runtime.js";
import { AGENT_ENVD_DIR, AGENT_NODE, writeBundle } from "../../../src/runtime/oci-spec.js";
import { runcCompat } from "../../../src/runtime/runc-compat.js";
import { RuncViews } from "../../../src/runtime/runc-userns.js";
import { getJson, waitFor } from "./http.js";

/** Everything denied: how the harness starts sandboxes unless told otherwise. */
export const NO_INTERNET: EgressPolicy = { allowInternetAccess: false, allowOut: [], denyOut: [] };

export const ENVD_PORT = 49983;
export const FIXTURES = resolve(__dirname, "..", "fixtures");

export interface StartOptions {
  memoryMB?: number;
  pidsLimit?: number;
  internet?: boolean;
}

export interface TestSandbox {
  id: string;
  ref: ContainerRef;
  net: SandboxNetwork;
  dir: string;
  upperDir: string;
  rootfs: string;
  bundleDir: string;
  cgroupsPath: string;
  /** http://<sandbox ip>:49983 */
  url: string;
  /** From the runtime's run call to the stand-in envd answering over the veth. */
  startMs: number;
  /** Under runc: the sandbox's view of its files in its user namespace (runc-userns.ts). */
  viewDir?: string;
}

/**
 * Starts and tears down sandboxes the way the orchestrator will: netns, overlay, bundle, runtime.
 * Every sandbox it starts is remembered so afterAll can remove it even when a test failed midway.
 */
export class SandboxHarness {
  private readonly live = new Map<string, TestSandbox>();
  /** runc sandboxes run in a user namespace, on their views of the files (as SandboxHost does). */
  private readonly views = new RuncViews();

  constructor(
    readonly runtime: ContainerRuntime,
    readonly network: NetworkManager,
    readonly lowers: string[],
    readonly workDir: string,
    /** cgroup parent, e.g. `xt`: sandboxes go to /sys/fs/cgroup/<controller>/<parent>/<id>. */
    readonly cgroupParent: string,
  ) {}

  async start(id: string, opts: StartOptions = {}): Promise<TestSandbox> {
    const dir = join(this.workDir, id);
    const net = await this.network.create(id, { egress: opts.internet ? OPEN_EGRESS : NO_INTERNET });
    const sb: TestSandbox = {
      id,
      ref: { id, netnsPath: net.netnsPath },
      net,
      dir,
      upperDir: join(dir, "upper"),
      rootfs: join(dir, "rootfs"),
      bundleDir: join(dir, "bundle"),
      cgroupsPath: `/${this.cgroupParent}/${id}`,
      url: `http://${net.sandboxIp}:${ENVD_PORT}`,
      startMs: 0,
    };
    this.live.set(id, sb);
    await mountOverlay({
      lowers: this.lowers,
      upperDir: sb.upperDir,
      workDir: join(dir, "work"),
      target: sb.rootfs,
    });
    let rootfs = sb.rootfs;
    let runc: Pick<Parameters<typeof writeBundle>[1], "userNamespace" | "createContainerHooks"> = {};
    if (this.runtime.name === "runc") {
      await unmountOverlay(sb.rootfs);
      const view = await this.views.open({
        sandboxDir: dir,
        lowers: this.lowers,
        disk: dir,
        upper: "upper",
        work: "work",
        netnsPath: net.netnsPath,
        binds: [],
      });
      rootfs = view.rootfs;
      sb.viewDir = view.dir;
      runc = {
        userNamespace: { ...view.userNamespace, sysfs: view.sysfs },
        createContainerHooks: (await runcCompat(view.dir, view.rootfs)).hooks,
      };
    }
    await writeBundle(sb.bundleDir, {
      ...runc,
      rootfs,
      args: [AGENT_NODE, `${AGENT_ENVD_DIR}/stand-in-envd.cjs`],
      hostname: id,
      netnsPath: net.netnsPath,
      cpuCount: 1,
      memoryMB: opts.memoryMB ?? 512,
      pidsLimit: opts.pidsLimit,
      envdDir: FIXTURES,
      cgroupsPath: sb.cgroupsPath,
    });
    const t0 = performance.now();
    await this.runtime.run(sb.ref, { bundleDir: sb.bundleDir, consoleLog: join(dir, "console.log") });
    await this.waitServing(sb);
    sb.startMs = performance.now() - t0;
    return sb;
  }

  waitServing(sb: TestSandbox, timeoutMs = 15_000): Promise<{ counter: number }> {
    return waitFor(() => getJson<{ counter: number }>(`${sb.url}/health`, 1000), timeoutMs);
  }

  /** Deletes the container, unmounts, removes the network and the sandbox's files. */
  async stop(sb: TestSandbox): Promise<void> {
    await this.runtime.delete(sb.ref);
    await this.views.close(sb.dir);
    await unmountOverlay(sb.rootfs);
    await this.network.destroy(sb.id);
    await rm(sb.dir, { recursive: true, force: true });
    this.live.delete(sb.id);
  }

  async stopAll(): Promise<void> {
    const errors: unknown[] = [];
    for (const sb of [...this.live.values()]) {
      await this.stop(sb).catch((e: unknown) => errors.push(e));
      await removeCgroups(sb.cgroupsPath);
    }
    await removeCgroups(`/${this.cgroupParent}`);
    if (errors.length) throw new AggregateError(errors, "sandbox teardown failed");
  }

  /** Anything of `sb` still on the host; empty after a clean stop(). */
  async leftovers(sb: TestSandbox): Promise<string[]> {
    const found: string[] = [];
    if (await exists(sb.net.netnsPath)) found.push(`netns ${sb.net.netns}`);
    if (await exists(`/sys/class/net/${sb.net.hostIf}`)) found.push(`veth ${sb.net.hostIf}`);
    if (await isOverlayMounted(sb.rootfs)) found.push(`overlay ${sb.rootfs}`);
    if (sb.viewDir && (await exists(sb.viewDir))) found.push(`runc view ${sb.viewDir}`);
    if ((await this.runtime.list()).includes(sb.id)) found.push(`${this.runtime.name} container ${sb.id}`);
    if (await this.network.firewallEntry(sb.net)) found.push(`firewall entry ${sb.net.hostIf}`);
    for (const c of await cgroupDirs(sb.cgroupsPath)) found.push(`cgroup ${c}`);
    return found;
  }

  /** The sandbox's memory charge on the host, from its memory cgroup. */
  async memoryUsage(sb: TestSandbox): Promise<{ usage: number; rss: number; oomKills: number }> {
    const dir = `/sys/fs/cgroup/memory${sb.cgroupsPath}`;
    const stat = parseKv(await readFile(`${dir}/memory.stat`, "utf8"));
    const oom = parseKv(await readFile(`${dir}/memory.oom_control`, "utf8"));
    return {
      usage: Number(await readFile(`${dir}/memory.usage_in_bytes`, "utf8")),
      rss: stat.get("total_rss") ?? 0,
      oomKills: oom.get("oom_kill") ?? 0,
    };
  }
}

function parseKv(text: string): Map<string, number> {
  return new Map(
    text
      .trim()
      .split("\n")
      .map((l) => l.split(" "))
      .map(([k, v]) => [k!, Number(v)] as const),
  );
}

async function cgroupDirs(path: string): Promise<string[]> {
  const controllers = await readdir("/sys/fs/cgroup");
  const found: string[] = [];
  for (const c of controllers) {
    const dir = `/sys/fs/cgroup/${c}${path}`;
    if (await exists(dir)) found.push(dir);
  }
  return found;
}

/** Removes empty cgroup directories (a cgroup with no tasks can be rmdir'ed). */
async function removeCgroups(path: string): Promise<void> {
  for (const dir of await cgroupDirs(path)) await rmdir(dir).catch(() => undefined);
}

async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}
