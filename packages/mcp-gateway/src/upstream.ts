import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  type ServerCapabilities,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { BASH, type ServerPlan } from "./config.js";
import type { Log } from "./log.js";
import { GATEWAY_NAME, GATEWAY_VERSION } from "./options.js";

/** How much of a server's stderr is kept to explain its failure. */
const STDERR_TAIL = 4096;

/** A server that failed to start, with what it said. */
export class UpstreamError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UpstreamError";
  }
}

export type ListKind = "tools" | "prompts" | "resources";

/** The gateway's environment for its preparing commands: never its access token. */
function withoutToken(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const { GATEWAY_ACCESS_TOKEN: _token, ...rest } = env;
  return rest;
}

/** The newest bytes of a stream, as text. */
class Tail {
  private text = "";
  constructor(private readonly max: number) {}
  push(chunk: string): void {
    this.text = (this.text + chunk).slice(-this.max);
  }
  toString(): string {
    return this.text.trim();
  }
}

/**
 * One configured MCP server: its process (a stdio server) and the gateway's client of it. The
 * gateway's sessions share it, as a sandbox has one of each server.
 */
export class Upstream {
  readonly client = new Client({ name: GATEWAY_NAME, version: GATEWAY_VERSION }, { capabilities: {} });
  private readonly stderr = new Tail(STDERR_TAIL);
  private stopped: string | undefined;
  private readonly changeListeners = new Set<(kind: ListKind) => void>();

  constructor(
    readonly plan: ServerPlan,
    private readonly log: Log,
  ) {
    this.client.setNotificationHandler(ToolListChangedNotificationSchema, () => this.notify("tools"));
    this.client.setNotificationHandler(PromptListChangedNotificationSchema, () => this.notify("prompts"));
    this.client.setNotificationHandler(ResourceListChangedNotificationSchema, () => this.notify("resources"));
  }

  private notify(kind: ListKind): void {
    for (const listener of this.changeListeners) listener(kind);
  }

  get label(): string {
    return this.plan.label;
  }

  get capabilities(): ServerCapabilities {
    return this.client.getServerCapabilities() ?? {};
  }

  get instructions(): string | undefined {
    return this.client.getInstructions();
  }

  /** Why it no longer serves, once its process is gone. */
  get stoppedReason(): string | undefined {
    return this.stopped;
  }

  onListChanged(listener: (kind: ListKind) => void): void {
    this.changeListeners.add(listener);
  }

  /** Prepares (clone, install) and starts the server, and initializes the MCP session with it. */
  async start(timeoutMs: number): Promise<void> {
    const { plan } = this;
    const deadline = Date.now() + timeoutMs;
    if (plan.prepare) await this.prepare(plan.prepare, deadline);
    if (plan.cwd && !existsSync(plan.cwd))
      throw new UpstreamError(`${plan.key}: its directory ${plan.cwd} does not exist`);
    const transport = new StdioClientTransport({
      command: plan.command,
      args: plan.args,
      env: plan.env,
      ...(plan.cwd ? { cwd: plan.cwd } : {}),
      stderr: "pipe",
    });
    transport.stderr?.on("data", (chunk: Buffer) => {
      const text = chunk.toString("utf8");
      this.stderr.push(text);
      this.log.server(plan.key, text);
    });
    let exited = false;
    this.client.onclose = () => {
      exited = true;
      if (this.stopped) return;
      this.stopped = this.explain("its process ended");
      this.log.info(`${plan.key}: stopped (${this.stopped})`);
      // what it offered is gone from the lists
      for (const kind of ["tools", "prompts", "resources"] as const) this.notify(kind);
    };
    const remaining = Math.max(1000, deadline - Date.now());
    try {
      await this.client.connect(transport, { timeout: remaining });
    } catch (err) {
      const why = exited ? "it exited before it answered" : (err as Error).message;
      await this.close();
      // the process's last words may come after its stdout closed: give them a moment
      await new Promise((r) => setTimeout(r, 100));
      throw new UpstreamError(`${plan.key} did not start: ${this.explain(why)}`);
    }
  }

  private explain(why: string): string {
    const said = this.stderr.toString();
    return said ? `${why}; it said: ${said}` : why;
  }

  private async prepare(prepare: NonNullable<ServerPlan["prepare"]>, deadline: number): Promise<void> {
    const { key } = this.plan;
    if (prepare.cloneUrl && !existsSync(prepare.dir)) {
      await mkdir(path.dirname(prepare.dir), { recursive: true });
      await this.run(
        `cloning ${prepare.cloneUrl}`,
        "git",
        ["clone", "--depth", "1", prepare.cloneUrl, prepare.dir],
        "/",
        deadline,
      );
      if (prepare.installCmd)
        await this.run("installCmd", "/bin/bash", [...BASH, prepare.installCmd], prepare.dir, deadline);
    } else if (!prepare.cloneUrl && prepare.installCmd) {
      await this.run("installCmd", "/bin/bash", [...BASH, prepare.installCmd], prepare.dir, deadline);
    }
    this.log.info(`${key}: prepared in ${prepare.dir}`);
  }

  /** A preparing command; its output goes to the log, and its failure names its last words. */
  private run(what: string, command: string, args: string[], cwd: string, deadline: number): Promise<void> {
    const { key } = this.plan;
    const out = new Tail(STDERR_TAIL);
    return new Promise((resolve, reject) => {
      const child = spawn(command, args, {
        cwd,
        env: { ...withoutToken(process.env), ...this.plan.env },
        stdio: ["ignore", "pipe", "pipe"],
        timeout: Math.max(1000, deadline - Date.now()),
      });
      const take = (chunk: Buffer) => {
        out.push(chunk.toString("utf8"));
        this.log.server(key, chunk.toString("utf8"));
      };
      child.stdout.on("data", take);
      child.stderr.on("data", take);
      child.on("error", (err) => reject(new UpstreamError(`${key}: ${what} failed: ${err.message}`)));
      child.on("close", (code, signal) => {
        if (code === 0) return resolve();
        const how = signal ? `was ended by ${signal} (out of time?)` : `exited with ${code}`;
        const said = out.toString();
        reject(new UpstreamError(`${key}: ${what} ${how}${said ? `: ${said}` : ""}`));
      });
    });
  }

  async close(): Promise<void> {
    this.stopped ??= "the gateway stopped";
    await this.client.close().catch(() => undefined);
  }
}
