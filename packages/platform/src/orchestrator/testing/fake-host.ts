import path from "node:path";
import type { SandboxAgentPort } from "../../agent/agent-port.js";
import type { CommandResult } from "../../agent/commands.js";
import type { EnvdTarget } from "../../agent/envd-http.js";
import type { EnvdInit } from "../../agent/init.js";
import type { EgressPolicy } from "../../model/network.js";
import type { RuntimeName } from "../../model/sandbox.js";
import type { CgroupLife, ContainerStatus, SandboxHostPort, SandboxRef } from "../../sandbox/host-port.js";
import type { BootSpec, SandboxPaths } from "../../sandbox/sandbox-host.js";
import { StepScript } from "./steps.js";

export type { Gate, Step } from "./steps.js";

/** Where a fake sandbox's container is: the same conditions the real host moves them through. */
export type Condition = "running" | "frozen" | "checkpointed" | "stopped";

/** One sandbox as the fake host keeps it. */
export interface FakeSandbox {
  condition: Condition;
  runtime: RuntimeName;
  /** Set while it has a network (running or frozen). */
  address?: string;
  /** The token its envd answers to; unknown after a restore from another sandbox's image. */
  envdToken?: string;
  egress?: EgressPolicy;
  cpuShares?: number;
  /** What it was booted with (see BootSpec.patience). */
  patience?: AbortSignal;
  /** Its agent exited (see breakAgent): the cgroup holds no process. */
  broken?: { oomKill: boolean };
}

export interface FakeSandboxHostOptions {
  /** Runtimes that write memory images (gVisor's, in the real host). Default: runsc. */
  checkpointRuntimes?: RuntimeName[];
  /** What the agent says about saving the sandbox's sockets (see checkpointable.ts). Default true. */
  checkpointable?: boolean;
}

/**
 * The host side of sandboxes in memory, for unit tests: keeps each sandbox's condition and
 * refuses what the real host cannot do (freeze a container that is not running, restore
 * without an image, talk to envd at an address no running sandbox has, with a token it does
 * not answer to). `script` holds, delays or fails any step.
 */
export class FakeSandboxHost implements SandboxHostPort {
  readonly script = new StepScript();
  readonly sandboxes = new Map<string, FakeSandbox>();
  readonly agent: SandboxAgentPort;
  /** What the agent answers when asked whether the sandbox's sockets can be saved. */
  socketsSaveable: boolean;
  /** Environment the host gives every sandbox (the real one's: trust in the egress CA). */
  sandboxEnv: Record<string, string> = {};
  /** The variables each sandbox's envd was given through /init, by sandbox id. */
  readonly envdVars = new Map<string, Record<string, string>>();
  private addresses = 0;

  constructor(private readonly o: FakeSandboxHostOptions = {}) {
    this.agent = new FakeAgent(this);
    this.socketsSaveable = o.checkpointable ?? true;
  }

  /** The sandbox's condition, undefined once destroyed (or never booted). */
  conditionOf(id: string): Condition | undefined {
    return this.sandboxes.get(id)?.condition;
  }

  /** Its agent (envd, its init) exits: the health check finds its cgroup empty. */
  breakAgent(id: string, opts: { oomKill?: boolean } = {}): void {
    this.must(id, "running").broken = { oomKill: opts.oomKill ?? false };
  }

  /** The running sandbox serving at `address`. */
  servingAt(address: string): [string, FakeSandbox] | undefined {
    for (const entry of this.sandboxes)
      if (entry[1].address === address && entry[1].condition === "running" && !entry[1].broken) return entry;
    return undefined;
  }

  boot(spec: BootSpec): Promise<string> {
    return this.script.run("boot", spec.id, () => this.start(spec, spec.envdAccessToken));
  }

  bootFromImage(spec: BootSpec, _imageDir: string): Promise<string> {
    // the restored envd answers to the token in the image: the create's /init rotates it
    return this.script.run("bootFromImage", spec.id, () => this.start(spec, undefined));
  }

  restore(spec: BootSpec): Promise<string> {
    return this.script.run("restore", spec.id, () => {
      const sandbox = this.must(spec.id, "checkpointed");
      sandbox.condition = "running";
      sandbox.address = this.newAddress();
      return sandbox.address;
    });
  }

  freeze(ref: SandboxRef): Promise<void> {
    return this.script.run("freeze", ref.id, () => {
      this.must(ref.id, "running").condition = "frozen";
    });
  }

  thaw(ref: SandboxRef): Promise<void> {
    return this.script.run("thaw", ref.id, () => {
      this.must(ref.id, "frozen", "running").condition = "running";
    });
  }

  canCheckpoint(runtime: RuntimeName): boolean {
    return (this.o.checkpointRuntimes ?? ["runsc"]).includes(runtime);
  }

  checkpoint(ref: SandboxRef): Promise<void> {
    return this.script.run("checkpoint", ref.id, () => {
      if (!this.canCheckpoint(ref.runtime)) throw new Error(`runtime ${ref.runtime} has no checkpoint`);
      const sandbox = this.must(ref.id, "running");
      sandbox.condition = "checkpointed";
      delete sandbox.address;
    });
  }

  stop(ref: SandboxRef): Promise<void> {
    return this.script.run("stop", ref.id, () => {
      const sandbox = this.sandboxes.get(ref.id);
      // the real stop removes what is there and keeps the files, whatever the container's state
      if (!sandbox) return;
      sandbox.condition = "stopped";
      delete sandbox.address;
      delete sandbox.broken;
    });
  }

  destroy(ref: SandboxRef): Promise<void> {
    return this.script.run("destroy", ref.id, () => {
      this.sandboxes.delete(ref.id);
    });
  }

  async status(ref: SandboxRef): Promise<ContainerStatus | undefined> {
    const condition = this.conditionOf(ref.id);
    return condition === "running" ? "running" : condition === "frozen" ? "paused" : undefined;
  }

  async address(id: string): Promise<string | undefined> {
    return this.sandboxes.get(id)?.address;
  }

  setEgress(id: string, egress: EgressPolicy): Promise<void> {
    return this.script.run("setEgress", id, () => {
      const sandbox = this.sandboxes.get(id);
      if (sandbox?.address) sandbox.egress = egress;
    });
  }

  async rememberEgress(id: string, egress: EgressPolicy): Promise<void> {
    const sandbox = this.sandboxes.get(id);
    if (sandbox?.address) sandbox.egress = egress;
  }

  async mountFiles(id: string): Promise<string> {
    return this.paths(id).upper;
  }

  paths(id: string): SandboxPaths {
    const dir = path.join("/fake-host/sandboxes", id);
    return {
      dir,
      disk: { image: path.join(dir, "disk.img"), mountPoint: path.join(dir, "disk") },
      upper: path.join(dir, "disk", "upper"),
      work: path.join(dir, "disk", "work"),
      rootfs: path.join(dir, "rootfs"),
      bundle: path.join(dir, "bundle"),
      consoleLog: path.join(dir, "console.log"),
      checkpoint: path.join(dir, "checkpoint"),
    };
  }

  async life(ref: Pick<BootSpec, "id">): Promise<CgroupLife> {
    const sandbox = this.sandboxes.get(ref.id);
    return {
      processes: await this.processes(ref),
      ...(sandbox?.broken?.oomKill ? { oomKills: 1 } : {}),
    };
  }

  async processes(ref: Pick<BootSpec, "id">): Promise<number | undefined> {
    const sandbox = this.sandboxes.get(ref.id);
    if (sandbox?.condition !== "running" && sandbox?.condition !== "frozen") return undefined;
    return sandbox.broken ? 0 : 1;
  }

  weigh(ref: Pick<BootSpec, "id">, cpuShares: number): Promise<void> {
    return this.script.run("weigh", ref.id, () => {
      const sandbox = this.sandboxes.get(ref.id);
      if (sandbox) sandbox.cpuShares = cpuShares;
    });
  }

  /** A container that runs: booted where there is none, or none but files left (stopped). */
  private start(spec: BootSpec, envdToken: string | undefined): string {
    const before = this.sandboxes.get(spec.id);
    if (before && before.condition !== "stopped") {
      throw new Error(`container ${spec.id} already exists (${before.condition})`);
    }
    const address = this.newAddress();
    this.sandboxes.set(spec.id, {
      condition: "running",
      runtime: spec.runtime,
      address,
      ...(envdToken ? { envdToken } : {}),
      egress: spec.egress,
      ...(spec.cpuShares !== undefined ? { cpuShares: spec.cpuShares } : {}),
      ...(spec.patience ? { patience: spec.patience } : {}),
    });
    return address;
  }

  private must(id: string, ...conditions: Condition[]): FakeSandbox {
    const sandbox = this.sandboxes.get(id);
    if (!sandbox || !conditions.includes(sandbox.condition)) {
      throw new Error(
        `sandbox ${id} is ${sandbox?.condition ?? "not on this host"}, not ${conditions.join(" or ")}`,
      );
    }
    return sandbox;
  }

  private newAddress(): string {
    this.addresses++;
    return `10.99.${this.addresses >> 8}.${this.addresses & 255}`;
  }
}

/** envd as the fake host's sandboxes run it: it answers only where a sandbox runs, to its token. */
class FakeAgent implements SandboxAgentPort {
  constructor(private readonly host: FakeSandboxHost) {}

  init(target: EnvdTarget, init: EnvdInit): Promise<void> {
    const [id, sandbox] = this.reach(target);
    return this.host.script.run("init", id, () => {
      if (init.accessToken) sandbox.envdToken = init.accessToken;
      this.host.envdVars.set(id, { ...this.host.envdVars.get(id), ...init.envVars });
    });
  }

  runStartCommand(target: EnvdTarget): Promise<void> {
    const [id] = this.reach(target);
    return this.host.script.run("runStartCommand", id, () => undefined);
  }

  runCommand(target: EnvdTarget): Promise<CommandResult> {
    const [id] = this.reach(target);
    return this.host.script.run("runCommand", id, () => ({ exitCode: 0, status: "exit status 0" }));
  }

  checkpointable(target: EnvdTarget): Promise<boolean> {
    const [id] = this.reach(target);
    return this.host.script.run("checkpointable", id, () => this.host.socketsSaveable);
  }

  async answers(address: string | undefined): Promise<boolean> {
    return address !== undefined && this.host.servingAt(address) !== undefined;
  }

  /** The sandbox whose envd this is; throws as a refused connection or a 401 would. */
  private reach(target: EnvdTarget): [string, FakeSandbox] {
    const found = this.host.servingAt(target.address);
    if (!found) throw new Error(`connect ECONNREFUSED ${target.address}:49983`);
    const token = found[1].envdToken;
    if (token !== undefined && token !== target.accessToken) {
      throw new Error(`envd of sandbox ${found[0]} answered 401: not its access token`);
    }
    return found;
  }
}
