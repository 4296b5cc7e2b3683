import type { MessageInitShape } from "@bufbuild/protobuf";
import { Code, ConnectError, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import { type Process, type ProcessEventSchema, type ProcessInput, Signal } from "@x/envd-client";
import { userForRpc } from "../auth.js";
import { type EnvdContext, keepaliveIntervalMs } from "../context.js";
import { ServerTiming } from "../server-timing.js";
import type { ManagedProcess, ProcessStreamItem, Subscription } from "./manager.js";

type EventMessage = { event: MessageInitShape<typeof ProcessEventSchema> };

function eventOf(item: ProcessStreamItem): EventMessage {
  if (item.type === "end") {
    const { exitCode, exited, status, error } = item;
    return { event: { event: { case: "end", value: { exitCode, exited, status, error } } } };
  }
  const value = { output: { case: item.stream, value: item.data }, offset: BigInt(item.offset) } as const;
  return { event: { event: { case: "data", value } } };
}

/**
 * A Start or Connect stream: `start` with the pid, then output in order, keepalives while the
 * process is quiet, and `end` last. Leaving it (client gone, deadline) only drops the subscription.
 */
async function* processEvents(
  proc: ManagedProcess,
  sub: Subscription,
  hc: HandlerContext,
): AsyncGenerator<EventMessage> {
  try {
    yield { event: { event: { case: "start", value: { pid: proc.pid } } } };
    const idleMs = keepaliveIntervalMs(hc.requestHeader);
    for (;;) {
      const item = await sub.next(hc.signal, idleMs);
      if (!item) {
        yield { event: { event: { case: "keepalive", value: {} } } };
        continue;
      }
      yield eventOf(item);
      if (item.type === "end") return;
    }
  } finally {
    sub.close();
  }
}

async function applyInput(
  proc: ManagedProcess,
  input: ProcessInput | undefined,
  signal: AbortSignal,
): Promise<void> {
  switch (input?.input.case) {
    case "stdin":
      return proc.writeStdin(input.input.value, signal);
    case "pty":
      return proc.writePty(input.input.value);
    default:
      throw new ConnectError("input must carry stdin or pty bytes", Code.InvalidArgument);
  }
}

export function createProcessService(ctx: EnvdContext): ServiceImpl<typeof Process> {
  const { processes } = ctx;
  return {
    list() {
      return {
        processes: processes.list().map((proc) => ({ config: proc.config, pid: proc.pid, tag: proc.tag })),
      };
    },

    async *connect(req, hc) {
      const proc = processes.find(req.process?.selector);
      // what the client missed first: from its offset, or all that is kept
      yield* processEvents(proc, proc.subscribe(Number(req.outputOffset ?? 0n)), hc);
    },

    async *start(req, hc) {
      const timing = new ServerTiming(hc);
      const user = await userForRpc(ctx.state, hc.requestHeader);
      timing.mark("user");
      if (!req.process)
        throw new ConnectError("process (cmd, args, envs, cwd) is required", Code.InvalidArgument);
      const { cmd, args, envs, cwd } = req.process;
      const { process: proc, subscription } = await processes.start({
        config: { cmd, args, envs, cwd },
        user,
        tag: req.tag,
        pty: req.pty ? { cols: req.pty.size?.cols ?? 0, rows: req.pty.size?.rows ?? 0 } : undefined,
        // Absent means true: older clients expect stdin to be open (seed 4.1 rule 6).
        stdin: req.stdin ?? true,
        // The Start call's Connect-Timeout-Ms bounds the process's life, as `commands.run` expects.
        timeoutMs: hc.timeoutMs(),
        timing,
      });
      ctx.log("info", "process started", {
        pid: proc.pid,
        cmd,
        user: user.name,
        pty: proc.isPty,
        tag: req.tag,
      });
      timing.mark("log");
      // sent with the start event, the stream's first message
      hc.responseHeader.set("server-timing", timing.header());
      yield* processEvents(proc, subscription, hc);
    },

    update(req) {
      const proc = processes.find(req.process?.selector);
      if (req.pty) {
        if (!req.pty.size)
          throw new ConnectError("pty.size (cols, rows) is required to resize", Code.InvalidArgument);
        proc.resize(req.pty.size.cols, req.pty.size.rows);
      }
      return {};
    },

    async streamInput(requests, hc) {
      let proc: ManagedProcess | undefined;
      for await (const req of requests) {
        switch (req.event.case) {
          case "start":
            proc = processes.find(req.event.value.process?.selector);
            break;
          case "data":
            if (!proc)
              throw new ConnectError(
                "send a start event naming the process before data",
                Code.InvalidArgument,
              );
            await applyInput(proc, req.event.value.input, hc.signal);
            break;
          case "keepalive":
            break;
          default:
            throw new ConnectError(
              "each message must be a start, data or keepalive event",
              Code.InvalidArgument,
            );
        }
      }
      return {};
    },

    async sendInput(req, hc) {
      await applyInput(processes.find(req.process?.selector), req.input, hc.signal);
      return {};
    },

    sendSignal(req) {
      const signal =
        req.signal === Signal.SIGTERM ? "SIGTERM" : req.signal === Signal.SIGKILL ? "SIGKILL" : undefined;
      if (!signal) {
        throw new ConnectError(
          `unsupported signal ${req.signal}: use SIGNAL_SIGTERM or SIGNAL_SIGKILL`,
          Code.InvalidArgument,
        );
      }
      processes.find(req.process?.selector).signal(signal);
      return {};
    },

    closeStdin(req) {
      processes.find(req.process?.selector).closeStdin();
      return {};
    },
  };
}
