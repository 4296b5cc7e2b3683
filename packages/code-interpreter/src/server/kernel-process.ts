import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import { EVENTS_FD, endMarker, type KernelEvent, type KernelRequest } from "../kernels/protocol.js";

/** How to start one kernel process. */
export interface KernelSpec {
  argv: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** How long the kernel may take to say it is ready. */
  startTimeoutMs?: number;
  /**
   * Also send SIGINT on interrupt: a kernel busy in synchronous code (a JavaScript loop) cannot
   * read its stdin, but its evaluator stops on the signal.
   */
  interruptBySignal?: boolean;
  /**
   * Where events come from: fd 3 (the default), or the kernel's stdout for a kernel that
   * captures its cells' output itself and cannot write to a descriptor by number (the JVM's).
   */
  events?: "fd3" | "stdout";
}

export type ExecutionEvent = Exclude<KernelEvent, { ev: "ready" } | { ev: "done" } | { ev: "fatal" }>;

interface Running {
  id: string;
  onEvent: (e: ExecutionEvent) => void;
  resolve: () => void;
  reject: (err: Error) => void;
  /** What must still arrive before the execution ends: its `done` and each stream's end marker. */
  awaiting: Set<"done" | "stdout" | "stderr">;
}

export class KernelDiedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "KernelDiedError";
  }
}

let nextExecution = 1;

/**
 * One kernel process: requests on its stdin, events on fd 3, and whatever it writes to stdout
 * and stderr is the running cell's output. One execution at a time (the context serialises).
 */
export class KernelProcess {
  private child: ChildProcess | undefined;
  private running: Running | undefined;
  private exited = false;
  private readonly stderrTail: string[] = [];

  constructor(private readonly spec: KernelSpec) {}

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get alive(): boolean {
    return !!this.child && !this.exited;
  }

  start(): Promise<void> {
    const child = spawn(this.spec.argv[0]!, this.spec.argv.slice(1), {
      cwd: this.spec.cwd,
      env: this.spec.env,
      stdio: ["pipe", "pipe", "pipe", "pipe"],
      // its own process group, so the kernel and what it started end together
      detached: true,
    });
    this.child = child;
    child.stdin!.on("error", () => undefined);
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(
          new KernelDiedError(
            `the kernel did not start within ${(this.spec.startTimeoutMs ?? 60_000) / 1000} s`,
          ),
        );
        this.kill();
      }, this.spec.startTimeoutMs ?? 60_000);
      const onStdout = this.spec.events === "stdout";
      const events = createInterface({
        input: (onStdout ? child.stdout : child.stdio[EVENTS_FD]) as Readable,
      });
      events.on("line", (line) => {
        let event: KernelEvent;
        try {
          event = JSON.parse(line) as KernelEvent;
        } catch {
          return;
        }
        if (event.ev === "ready") {
          clearTimeout(timer);
          resolve();
        } else this.onEvent(event);
      });
      if (onStdout) {
        child.stderr!.setEncoding("utf8");
        child.stderr!.on("data", (text: string) => this.keepTail("stderr", text));
      } else {
        this.forward(child.stdout!, "stdout");
        this.forward(child.stderr!, "stderr");
      }
      child.on("error", (err) => {
        clearTimeout(timer);
        reject(new KernelDiedError(`the kernel could not be started: ${err.message}`));
      });
      child.on("exit", (code, signal) => {
        this.exited = true;
        clearTimeout(timer);
        const why = `the kernel exited (${signal ?? code})${this.stderrTail.length ? `: ${this.stderrTail.join("").trim().slice(-2000)}` : ""}`;
        reject(new KernelDiedError(why));
        this.finish(new KernelDiedError(why));
      });
    });
  }

  /** Runs `code`; resolves when the kernel is done with it, with its events on the way. */
  execute(code: string, opts: { silent?: boolean }, onEvent: (e: ExecutionEvent) => void): Promise<void> {
    if (!this.alive) return Promise.reject(new KernelDiedError("the kernel is not running"));
    if (this.running) return Promise.reject(new Error("the kernel is busy"));
    const id = `x${nextExecution++}`;
    // Output and the execution count come through different pipes when events are on fd 3:
    // what the cell printed is held until its count is out, so the count always comes first.
    const ordered = countFirst(onEvent, !opts.silent && this.spec.events !== "stdout");
    return new Promise<void>((resolve, reject) => {
      const awaiting = new Set<"done" | "stdout" | "stderr">(
        this.spec.events === "stdout" ? ["done"] : ["done", "stdout", "stderr"],
      );
      this.running = {
        id,
        onEvent: ordered.deliver,
        resolve: () => {
          ordered.flush();
          resolve();
        },
        reject: (err) => {
          ordered.flush();
          reject(err);
        },
        awaiting,
      };
      this.send({ op: "execute", id, code, ...(opts.silent ? { silent: true } : {}) });
    });
  }

  /** Interrupts the running cell (SIGINT for our kernels, the bridge's own interrupt for Jupyter's). */
  interrupt(): void {
    this.send({ op: "interrupt" });
    if (this.spec.interruptBySignal && this.alive) this.child!.kill("SIGINT");
  }

  /** Ends the kernel: asked first, killed when it does not go. */
  async close(): Promise<void> {
    const child = this.child;
    if (!child || this.exited) return;
    this.send({ op: "shutdown" });
    child.stdin?.end();
    const gone = new Promise<void>((r) => child.once("exit", () => r()));
    const timer = setTimeout(() => this.kill(), 3000);
    await gone;
    clearTimeout(timer);
  }

  private kill(): void {
    if (!this.child || this.exited) return;
    // the kernel's own children (a Jupyter kernel under the bridge) are in its process group
    try {
      process.kill(-this.child.pid!, "SIGKILL");
    } catch {
      this.child.kill("SIGKILL");
    }
  }

  private send(req: KernelRequest): void {
    if (!this.alive) return;
    this.child!.stdin!.write(`${JSON.stringify(req)}\n`);
  }

  /**
   * A stream's text goes to the running execution up to its end marker; a marker split across
   * chunks is held back until it is whole.
   */
  private forward(stream: Readable, name: "stdout" | "stderr"): void {
    stream.setEncoding("utf8");
    let held = "";
    stream.on("data", (chunk: string) => {
      let text = held + chunk;
      held = "";
      for (;;) {
        const r = this.running;
        if (!r?.awaiting.has(name)) {
          // between executions: kept only to explain a kernel that dies
          this.keepTail(name, text);
          return;
        }
        const marker = endMarker(r.id);
        const at = text.indexOf(marker);
        if (at >= 0) {
          if (at > 0) r.onEvent({ ev: "stream", id: r.id, name, text: text.slice(0, at) });
          text = text.slice(at + marker.length);
          this.arrived(name);
          continue;
        }
        const partial = text.lastIndexOf("\u0000");
        if (partial >= 0 && marker.startsWith(text.slice(partial))) {
          held = text.slice(partial);
          text = text.slice(0, partial);
        }
        if (text) r.onEvent({ ev: "stream", id: r.id, name, text });
        return;
      }
    });
  }

  private keepTail(name: "stdout" | "stderr", text: string): void {
    if (name !== "stderr" || !text) return;
    this.stderrTail.push(text);
    if (this.stderrTail.length > 20) this.stderrTail.shift();
  }

  private arrived(what: "done" | "stdout" | "stderr"): void {
    const r = this.running;
    if (!r) return;
    r.awaiting.delete(what);
    if (r.awaiting.size === 0) this.finish();
  }

  private onEvent(event: KernelEvent): void {
    if (event.ev === "fatal") {
      this.finish(new KernelDiedError(event.message));
      this.kill();
      return;
    }
    const r = this.running;
    if (!r || !("id" in event) || event.id !== r.id) return;
    if (event.ev === "done") this.arrived("done");
    else r.onEvent(event);
  }

  private finish(err?: Error): void {
    const r = this.running;
    if (!r) return;
    this.running = undefined;
    if (err) r.reject(err);
    else r.resolve();
  }
}

/**
 * Passes events on, holding back what the cell printed until its execution count has been
 * passed (when `hold`): stdout arrives on another pipe than the count and may overtake it.
 * Anything else (a result, an error) or the end of the execution lets what is held go.
 */
function countFirst(
  onEvent: (e: ExecutionEvent) => void,
  hold: boolean,
): { deliver(e: ExecutionEvent): void; flush(): void } {
  const held: ExecutionEvent[] = [];
  let waiting = hold;
  const flush = () => {
    waiting = false;
    for (const e of held.splice(0)) onEvent(e);
  };
  return {
    deliver: (e) => {
      if (!waiting) return onEvent(e);
      if (e.ev === "stream") {
        held.push(e);
        return;
      }
      if (e.ev === "count") {
        waiting = false;
        onEvent(e);
      }
      flush();
      if (e.ev !== "count") onEvent(e);
    },
    flush,
  };
}
