import { mkdir, rm, stat } from "node:fs/promises";
import path from "node:path";
import { ENVD_PORT } from "@x/envd-client";
import { envdAgent } from "../agent/agent-port.js";
import { waitForEnvd, waitForEnvdQuiet } from "../agent/health.js";
import { spans } from "../lib/spans.js";
import type { EgressPolicy } from "../model/network.js";
import type { SandboxNetwork } from "../network/network-manager.js";
import { ensureDiskImage, mountDisk, unmountDisk } from "../rootfs/disk.js";
import { isOverlayMounted, mountOverlay, unmountOverlay } from "../rootfs/overlay.js";
import { type CgroupLife, cgroupLife, cgroupProcesses, setCgroupLimits } from "../runtime/cgroup-limits.js";
import type {
  ContainerRef,
  ContainerRuntime,
  ContainerState,
  RuntimeName,
} from "../runtime/container-runtime.js";
import { isFrozen, setFrozen } from "../runtime/freezer.js";
import { gvisorCompat, readyBindTargets } from "../runtime/gvisor-compat.js";
import {
  AGENT_ENVD_DIR,
  AGENT_NODE,
  type BindMount,
  containerCgroup,
  writeBundle,
  writeResolvConf,
} from "../runtime/oci-spec.js";
import { runcCompat } from "../runtime/runc-compat.js";
import { type RuncView, RuncViews } from "../runtime/runc-userns.js";
import { DEFAULT_CONSOLE_LOG_MAX_BYTES } from "./console-log.js";
import type { SandboxHostPort } from "./host-port.js";
import { type SandboxLimits, sandboxLimits } from "./resource-limits.js";
import { SandboxConsoles } from "./sandbox-consoles.js";
import type { BootSpec, SandboxHostOptions, SandboxPaths } from "./sandbox-spec.js";
import { TRUSTED_CA_ENV, trustEgressCa } from "./trusted-ca.js";

export type { BootSpec, SandboxHostOptions, SandboxPaths } from "./sandbox-spec.js";

/**
 * The host side of sandboxes: network namespace, overlay root filesystem, OCI bundle and the
 * container itself. It knows nothing about teams, timeouts or the store.
 */
export class SandboxHost implements SandboxHostPort {
  readonly agent = envdAgent;
  /** Sandboxes paused by their runtime because the cgroup freezer did not complete. */
  private readonly pausedByRuntime = new Set<string>();
  /** Containers being deleted after a checkpoint, by sandbox id. */
  private readonly deleting = new Map<string, Promise<void>>();

  readonly sandboxEnv: Readonly<Record<string, string>>;
  private readonly consoles: SandboxConsoles;
  /** What runc sandboxes run on: their user namespace's views of their files (runc-userns.ts). */
  private readonly runcViews = new RuncViews();

  constructor(private readonly o: SandboxHostOptions) {
    this.sandboxEnv = o.egressCa ? TRUSTED_CA_ENV : {};
    this.consoles = new SandboxConsoles({
      maxBytes: o.consoleLogMaxBytes ?? DEFAULT_CONSOLE_LOG_MAX_BYTES,
      paths: (id) => this.paths(id),
      netnsPrefix: o.network.netnsName(""),
      log: o.log,
    });
  }

  /** Keeps the console logs of this host's running sandboxes trimmed, adopted ones included, until close(). */
  watchConsoleLogs(): void {
    this.consoles.watch();
  }

  close(): void {
    this.consoles.close();
  }

  /** A sandbox's console logs, oldest first: what is kept of earlier runs, then the running one's. */
  consoleLogs(id: string): string[] {
    return this.consoles.logs(id);
  }

  /** Makes sure these layers (absolute paths) are here (beyond one machine: fetched from another node). */
  async ensureLayers(lowers: string[]): Promise<void> {
    await this.o.ensureLayers?.(lowers);
  }

  private limits(spec: Pick<BootSpec, "runtime" | "memoryMB">): SandboxLimits {
    return sandboxLimits(spec.runtime, { memoryMB: spec.memoryMB, processLimit: this.o.processLimit });
  }

  /**
   * Once the container runs: under gVisor the cgroup gets its headroom above the memory the
   * workload was started with (see resource-limits.ts).
   */
  private async afterStart(spec: Pick<BootSpec, "id" | "runtime" | "memoryMB">): Promise<void> {
    const limits = this.limits(spec);
    if (limits.cgroupMemoryBytes === limits.specMemoryBytes) return;
    await setCgroupLimits(containerCgroup(spec), { memoryBytes: limits.cgroupMemoryBytes });
  }

  private async pendingDelete(id: string): Promise<void> {
    await this.deleting.get(id);
  }

  paths(id: string): SandboxPaths {
    const dir = path.join(this.o.dataDir, "sandboxes", id);
    const disk = { image: path.join(dir, "disk.img"), mountPoint: path.join(dir, "disk") };
    return {
      dir,
      disk,
      upper: path.join(disk.mountPoint, "upper"),
      work: path.join(disk.mountPoint, "work"),
      rootfs: path.join(dir, "rootfs"),
      bundle: path.join(dir, "bundle"),
      consoleLog: path.join(dir, "console.log"),
      checkpoint: path.join(dir, "checkpoint"),
    };
  }

  runtime(name: RuntimeName): ContainerRuntime {
    const runtime = this.o.runtimes.get(name);
    if (!runtime) {
      throw new Error(
        `runtime ${name} is not available on this host: install it with 'apt-get install ${name}'`,
      );
    }
    return runtime;
  }

  async ref(id: string): Promise<ContainerRef> {
    return { id, netnsPath: path.join("/run/netns", this.o.network.netnsName(id)) };
  }

  /** A fresh network namespace (gVisor consumes its addresses on every start). */
  private async freshNetwork(spec: BootSpec): Promise<SandboxNetwork> {
    await this.o.network.destroy(spec.id);
    return this.o.network.create(spec.id, { egress: spec.egress });
  }

  /** The sandbox's own disk (when capped) and the overlay of its layers on top of it. */
  private async mountRootfs(spec: BootSpec, p: SandboxPaths): Promise<void> {
    if (spec.diskSizeMB !== undefined) {
      await ensureDiskImage(p.disk, spec.diskSizeMB, path.join(this.o.dataDir, "disks"));
      await mountDisk(p.disk);
    }
    await this.o.ensureLayers?.(spec.lowers);
    // set-id never works here, under either runtime: this mount is the host's (the egress CA
    // is written through it); a runc sandbox runs on a view of its own (runc-userns.ts)
    await mountOverlay({ lowers: spec.lowers, upperDir: p.upper, workDir: p.work, target: p.rootfs });
  }

  /** The sandbox's root filesystem mounted afresh (its writable layer kept when it has one). */
  private async prepareRootfs(spec: BootSpec): Promise<SandboxPaths> {
    const p = this.paths(spec.id);
    await mkdir(p.dir, { recursive: true });
    await unmountOverlay(p.rootfs);
    await this.mountRootfs(spec, p);
    return p;
  }

  /** The sandbox's volumes as binds, each mounted on this host first. */
  private async volumeBinds(spec: BootSpec): Promise<BindMount[]> {
    const volumes = spec.volumes ?? [];
    if (volumes.length === 0) return [];
    const source = this.o.volumeSource;
    if (!source) throw new Error("this host has no volumes: the sandbox's mounts cannot be bound");
    return Promise.all(volumes.map(async (v) => ({ source: await source(v.volumeId), destination: v.path })));
  }

  /** The OCI bundle of the sandbox: its spec, envd's settings, and the files bound over the template's. */
  private async writeSandboxBundle(spec: BootSpec, p: SandboxPaths, nameserver?: string): Promise<void> {
    const volumeBinds = await this.volumeBinds(spec);
    const gvisor =
      spec.runtime === "runsc"
        ? await gvisorCompat(
            p.bundle,
            p.rootfs,
            this.o.envdDir,
            this.o.log,
            volumeBinds.map((b) => b.destination),
          )
        : undefined;
    const limits = this.limits(spec);
    const env = [
      "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
      "LANG=C.UTF-8",
      "HOME=/root",
      `ENVD_PORT=${ENVD_PORT}`,
      `ENVD_ACCESS_TOKEN=${spec.envdAccessToken}`,
      `ENVD_DEFAULT_USER=${spec.defaultUser}`,
      ...(spec.defaultWorkdir ? [`ENVD_DEFAULT_WORKDIR=${spec.defaultWorkdir}`] : []),
      ...(gvisor?.env ?? []),
      ...limits.envdEnv,
    ];
    if (this.o.egressCa && !spec.withoutEgressCa) await trustEgressCa(p.rootfs, this.o.egressCa);
    const ref = await this.ref(spec.id);
    const view = spec.runtime === "runc" ? await this.openRuncView(spec, p, ref, volumeBinds) : undefined;
    const runc = view ? await runcCompat(view.dir, view.rootfs) : undefined;
    await writeBundle(p.bundle, {
      rootfs: view?.rootfs ?? p.rootfs,
      args: [AGENT_NODE, path.join(AGENT_ENVD_DIR, "envd.cjs")],
      env,
      hostname: spec.id,
      netnsPath: ref.netnsPath,
      cpuCount: spec.cpuCount,
      ...(spec.cpuShares !== undefined ? { cpuShares: spec.cpuShares } : {}),
      memoryMB: limits.specMemoryBytes / 2 ** 20,
      pidsLimit: limits.pidsMax,
      oomScoreAdj: limits.initOomScoreAdj,
      envdDir: this.o.envdDir,
      binds: [...(gvisor?.binds ?? []), ...(view?.binds ?? volumeBinds)],
      createContainerHooks: runc?.hooks,
      ...(view ? { userNamespace: { ...view.userNamespace, sysfs: view.sysfs } } : {}),
      nameserver,
    });
  }

  /**
   * A runc sandbox's root filesystem, sysfs and volumes as its user namespace sees them, in
   * place of the host's own mount of its overlay (through which the egress CA was just written).
   */
  private async openRuncView(
    spec: BootSpec,
    p: SandboxPaths,
    ref: ContainerRef,
    volumeBinds: BindMount[],
  ): Promise<RuncView> {
    return this.runcViews.open({
      hostMount: p.rootfs,
      sandboxDir: p.dir,
      lowers: spec.lowers,
      disk: p.disk.mountPoint,
      upper: path.relative(p.disk.mountPoint, p.upper),
      work: path.relative(p.disk.mountPoint, p.work),
      netnsPath: ref.netnsPath,
      binds: volumeBinds,
    });
  }

  /** Boots the sandbox from its files and waits until envd answers. Returns its address. */
  async boot(spec: BootSpec): Promise<string> {
    const span = spans(this.o.log, "sandbox booted", { sandboxId: spec.id, runtime: spec.runtime });
    // network and root filesystem are independent: both at once, then the bundle
    const [net, p] = await Promise.all([this.freshNetwork(spec), this.prepareRootfs(spec)]);
    span.mark("network+rootfs");
    await this.writeSandboxBundle(spec, p, net.hostIp);
    span.mark("bundle");
    const runtime = this.runtime(spec.runtime);
    const consoleLog = this.consoles.runningLog(spec);
    await runtime.run(await this.ref(spec.id), {
      bundleDir: p.bundle,
      consoleLog,
      ...(spec.patience ? { patience: spec.patience } : {}),
    });
    this.consoles.started(consoleLog);
    await this.afterStart(spec);
    span.mark("runtime");
    await waitForEnvd(net.sandboxIp, 30_000);
    span.mark("envd");
    span.end();
    return net.sandboxIp;
  }

  /** Stops every process of the sandbox where it is, memory kept (the cgroup freezer). */
  async freeze(spec: Pick<BootSpec, "id" | "runtime">): Promise<void> {
    if (await setFrozen(containerCgroup(spec), true)) return;
    await this.runtime(spec.runtime).pause(await this.ref(spec.id));
    this.pausedByRuntime.add(spec.id);
  }

  async thaw(spec: Pick<BootSpec, "id" | "runtime">): Promise<void> {
    const byRuntime = this.pausedByRuntime.delete(spec.id);
    if (!byRuntime && (await setFrozen(containerCgroup(spec), false))) return;
    await this.runtime(spec.runtime).resume(await this.ref(spec.id));
  }

  /**
   * The container's status. A sandbox frozen through its cgroup is "paused" without asking its
   * runtime: a frozen gVisor sentry cannot answer runsc, which would wait for it forever.
   */
  async status(spec: Pick<BootSpec, "id" | "runtime">): Promise<ContainerState["status"] | undefined> {
    if (await isFrozen(containerCgroup(spec))) return "paused";
    const status = (await this.runtime(spec.runtime).state(await this.ref(spec.id)))?.status;
    if (status === "paused") this.pausedByRuntime.add(spec.id);
    return status;
  }

  /** A frozen sandbox cannot be signalled or deleted by gVisor (its sentry is stopped): thaw first. */
  private async thawForDelete(id: string): Promise<void> {
    // (a runtime-paused sandbox is resumed by the runtime's own delete)
    this.pausedByRuntime.delete(id);
    await setFrozen(containerCgroup({ id }), false).catch(() => undefined);
  }

  /** Sets the sandbox's CPU weight (cpu.shares scale), e.g. a pool member's once it is handed out. */
  async weigh(spec: Pick<BootSpec, "id">, cpuShares: number): Promise<void> {
    await setCgroupLimits(containerCgroup(spec), { cpuShares });
  }

  /** What the sandbox's cgroup shows: its processes (none once its init exited) and OOM kills. */
  life(spec: Pick<BootSpec, "id">): Promise<CgroupLife> {
    return cgroupLife(containerCgroup(spec));
  }

  /** Processes in the sandbox's cgroup: 0 once its init exited (see life()). */
  processes(spec: Pick<BootSpec, "id">): Promise<number | undefined> {
    return cgroupProcesses(containerCgroup(spec));
  }

  canCheckpoint(runtime: RuntimeName): boolean {
    return Boolean(this.runtime(runtime).checkpoint);
  }

  /**
   * Saves memory to disk: envd closes its sockets first (gVisor refuses to save open
   * connections, and the 2022 build listening sockets too), then the runtime checkpoints and
   * the container goes away. Throws if gVisor refused, which ends the sandbox; the caller then
   * falls back to another depth.
   */
  async checkpoint(spec: Pick<BootSpec, "id" | "runtime">): Promise<void> {
    const runtime = this.runtime(spec.runtime);
    const ref = await this.ref(spec.id);
    const p = this.paths(spec.id);
    await rm(p.checkpoint, { recursive: true, force: true });
    const address = await this.address(spec.id);
    const t0 = performance.now();
    await runtime.kill(ref, "SIGUSR1");
    let quietMs = 0;
    try {
      // envd resets its connections before it closes its listener: once a connection attempt
      // is refused, none of envd's is left in gVisor's network stack to block the save
      if (address) await waitForEnvdQuiet(address, 5_000);
      quietMs = performance.now() - t0;
      // one attempt only: gVisor ends the sandbox when it refuses to save it (an open connection)
      await runtime.checkpoint!(ref, p.checkpoint);
    } catch (err) {
      await rm(p.checkpoint, { recursive: true, force: true });
      await runtime.kill(ref, "SIGUSR2").catch(() => undefined);
      throw err;
    }
    // the stopped container's record would block a restore under the same id: it goes now,
    // in the background (a full `runsc delete` takes 1–2 s), not when resuming
    // (runsc joins the sandbox's netns for that: the network goes after it)
    const deleting = (runtime.forgetCheckpointed?.(ref) ?? runtime.delete(ref))
      .catch((err) => this.o.log.warn({ err }, "deleting a checkpointed container failed"))
      .then(() => this.o.network.destroy(spec.id))
      .catch((err) => this.o.log.warn({ err }, "removing a checkpointed sandbox's network failed"))
      .finally(() => this.deleting.delete(spec.id));
    this.deleting.set(spec.id, deleting);
    this.o.log.info(
      {
        sandboxId: spec.id,
        quiesceMs: Math.round(quietMs),
        checkpointMs: Math.round(performance.now() - t0 - quietMs),
      },
      "sandbox checkpointed",
    );
  }

  /** Restores a checkpointed sandbox with its processes, and wakes envd. */
  async restore(spec: BootSpec): Promise<string> {
    const p = this.paths(spec.id);
    // after a host reboot the mounts are gone; the checkpoint expects the same root filesystem
    if (!(await isOverlayMounted(p.rootfs))) await this.mountRootfs(spec, p);
    await this.volumeBinds(spec); // the bundle binds them: mounted again after a host restart
    const address = await this.restoreImage(spec, p.checkpoint);
    await rm(p.checkpoint, { recursive: true, force: true });
    return address;
  }

  /**
   * Boots a new sandbox from another one's memory image (a memory snapshot): its own root
   * filesystem of `spec.lowers` (which hold the files as they were at the checkpoint), its own
   * network, and the processes of the image continuing. The image stays for more sandboxes.
   */
  async bootFromImage(spec: BootSpec, imageDir: string): Promise<string> {
    await this.o.ensureLayers?.([imageDir]);
    await this.writeSandboxBundle(spec, await this.prepareRootfs(spec));
    return this.restoreImage(spec, imageDir);
  }

  private async restoreImage(spec: BootSpec, imageDir: string): Promise<string> {
    await this.pendingDelete(spec.id);
    const net = await this.freshNetwork(spec);
    const p = this.paths(spec.id);
    // the sandbox may have reshaped what its bundle binds over since it was written
    if (spec.runtime === "runsc") {
      await readyBindTargets(
        p.rootfs,
        (spec.volumes ?? []).map((v) => v.path),
        this.o.log,
      );
    }
    await writeResolvConf(p.bundle, net.hostIp);
    const runtime = this.runtime(spec.runtime);
    if (!runtime.restore) throw new Error(`runtime ${spec.runtime} cannot restore memory images`);
    const ref = await this.ref(spec.id);
    const t0 = performance.now();
    const consoleLog = this.consoles.runningLog(spec);
    await runtime.restore(ref, { bundleDir: p.bundle, consoleLog, imageDir });
    this.consoles.started(consoleLog);
    await this.afterStart(spec);
    const restoredMs = performance.now() - t0;
    await runtime.kill(ref, "SIGUSR2");
    await waitForEnvd(net.sandboxIp, 30_000);
    this.o.log.info(
      {
        sandboxId: spec.id,
        restoreMs: Math.round(restoredMs),
        envdAnsweringMs: Math.round(performance.now() - t0),
      },
      "sandbox restored",
    );
    return net.sandboxIp;
  }

  /** Stops the container and frees its network; the writable layer stays for a later boot. */
  async stop(spec: Pick<BootSpec, "id" | "runtime">): Promise<void> {
    await this.thawForDelete(spec.id);
    await this.pendingDelete(spec.id);
    await this.runtime(spec.runtime).delete(await this.ref(spec.id));
    await this.runcViews.close(this.paths(spec.id).dir);
    await unmountOverlay(this.paths(spec.id).rootfs);
    await this.consoles.keep(spec.id);
    await unmountDisk(this.paths(spec.id).disk);
    await this.o.network.destroy(spec.id);
  }

  /** Makes a sandbox's writable layer readable on the host, also while it is stopped. */
  async mountFiles(id: string): Promise<string> {
    const p = this.paths(id);
    if (await stat(p.disk.image).catch(() => undefined)) await mountDisk(p.disk);
    return p.upper;
  }

  /**
   * After a crash: removes every sandbox of this platform (its network namespaces carry the
   * platform's prefix) that `keep` does not name, whichever runtime it was under: a create, a
   * template build's sandbox or a warm pool boot the previous process did not finish.
   * Resolves the ids removed.
   */
  async sweepOrphans(keep: ReadonlySet<string>): Promise<string[]> {
    const orphans = (await this.o.network.ids()).filter((id) => !keep.has(id));
    for (const id of orphans) {
      for (const runtime of this.o.runtimes.keys()) await this.destroy({ id, runtime });
      this.o.log.info({ sandboxId: id }, "removed a sandbox left by a previous run");
    }
    return orphans;
  }

  /** Removes every trace of the sandbox from the host. */
  async destroy(spec: Pick<BootSpec, "id" | "runtime">): Promise<void> {
    const runtime = this.o.runtimes.get(spec.runtime);
    await this.thawForDelete(spec.id);
    await this.pendingDelete(spec.id);
    if (runtime) await runtime.delete(await this.ref(spec.id));
    this.consoles.forget(spec.id);
    await this.runcViews.close(this.paths(spec.id).dir);
    await unmountOverlay(this.paths(spec.id).rootfs);
    await unmountDisk(this.paths(spec.id).disk);
    await this.o.network.destroy(spec.id);
    await rm(this.paths(spec.id).dir, { recursive: true, force: true });
  }

  /** Replaces the egress policy of a sandbox that has a network (running or frozen). */
  async setEgress(id: string, egress: EgressPolicy): Promise<void> {
    const net = await this.o.network.get(id);
    if (net) await this.o.network.setEgress(net, egress);
  }

  /** After a restart: the egress of a sandbox kept running, for the firewall the platform installs. */
  async rememberEgress(id: string, egress: EgressPolicy): Promise<void> {
    const net = await this.o.network.get(id);
    if (net) this.o.network.remember(net, egress);
  }

  async address(id: string): Promise<string | undefined> {
    return (await this.o.network.get(id))?.sandboxIp;
  }
}
