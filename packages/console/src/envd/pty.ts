import type { EnvdClient, StartResponse } from "@x/envd-client";
import { Signal } from "@x/envd-client";

export interface PtySize {
  cols: number;
  rows: number;
}

export interface PtyHandlers {
  onData(data: Uint8Array): void;
  /** The shell ended (exit code, or an error envd reported), or the stream broke. */
  onExit(result: { exitCode?: number; error?: unknown }): void;
}

/**
 * A login bash in a pseudo-terminal through envd, as `x sandbox shell` opens it: output streamed
 * by Process.Start, keystrokes by Process.SendInput (in order, coalesced while one is in
 * flight), size by Process.Update.
 */
export class PtySession {
  private pid: number | undefined;
  private readonly controller = new AbortController();
  private pending: Uint8Array[] = [];
  private sending = false;
  private closed = false;

  private constructor(private readonly envd: EnvdClient) {}

  /** Starts the shell; resolves once envd reports its pid. */
  static async open(envd: EnvdClient, size: PtySize, handlers: PtyHandlers): Promise<PtySession> {
    const session = new PtySession(envd);
    const stream = envd.process.start(
      {
        process: {
          cmd: "/bin/bash",
          args: ["-i", "-l"],
          envs: { TERM: "xterm-256color", LANG: "C.UTF-8", COLORTERM: "truecolor" },
        },
        pty: { size },
      },
      { signal: session.controller.signal },
    );
    const iterator = stream[Symbol.asyncIterator]();
    const first = await iterator.next();
    const event = first.done ? undefined : first.value.event?.event;
    if (event?.case !== "start") {
      session.controller.abort();
      throw new Error("envd did not report the shell's start");
    }
    session.pid = event.value.pid;
    void session.pump(iterator, handlers);
    return session;
  }

  private async pump(iterator: AsyncIterator<StartResponse>, handlers: PtyHandlers): Promise<void> {
    let exitCode: number | undefined;
    let error: unknown;
    try {
      for (;;) {
        const next = await iterator.next();
        if (next.done) break;
        const event = next.value.event?.event;
        if (event?.case === "data") {
          const output = event.value.output;
          if (output.case === "pty") handlers.onData(output.value);
        } else if (event?.case === "end") {
          exitCode = event.value.exitCode;
          if (event.value.error) error = new Error(event.value.error);
        }
      }
    } catch (err) {
      if (!this.controller.signal.aborted) error = err;
    }
    this.closed = true;
    if (!this.controller.signal.aborted) handlers.onExit({ exitCode, error });
  }

  get processId(): number | undefined {
    return this.pid;
  }

  /** Queues keystrokes; they go out in order, batched while a send is under way. */
  write(data: Uint8Array): void {
    if (this.closed || this.pid === undefined) return;
    this.pending.push(data);
    if (!this.sending) void this.flush();
  }

  private async flush(): Promise<void> {
    this.sending = true;
    try {
      while (this.pending.length > 0 && !this.closed) {
        const parts = this.pending;
        this.pending = [];
        const size = parts.reduce((n, p) => n + p.length, 0);
        const bytes = new Uint8Array(size);
        let at = 0;
        for (const p of parts) {
          bytes.set(p, at);
          at += p.length;
        }
        await this.envd.process.sendInput({
          process: { selector: { case: "pid", value: this.pid! } },
          input: { input: { case: "pty", value: bytes } },
        });
      }
    } catch {
      // the stream reports why the shell is gone; a lost keystroke adds nothing to that
    } finally {
      this.sending = false;
    }
  }

  async resize(size: PtySize): Promise<void> {
    if (this.closed || this.pid === undefined) return;
    await this.envd.process.update({
      process: { selector: { case: "pid", value: this.pid } },
      pty: { size },
    });
  }

  /** Ends the shell (SIGKILL) and the stream. */
  async close(): Promise<void> {
    const wasOpen = !this.closed;
    this.closed = true;
    if (wasOpen && this.pid !== undefined) {
      await this.envd.process
        .sendSignal({ process: { selector: { case: "pid", value: this.pid } }, signal: Signal.SIGKILL })
        .catch(() => undefined);
    }
    this.controller.abort();
  }
}
