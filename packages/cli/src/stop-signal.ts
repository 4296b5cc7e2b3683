import { CliError } from "./connection.js";

export interface StopSignal {
  /** Aborted by the first SIGTERM or SIGINT: a start under way takes down what it set up. */
  signal: AbortSignal;
  /** Resolves at the first SIGTERM or SIGINT, however early it came. */
  requested: Promise<void>;
  /** For a start's rejection: one caused by the signal ends the command quietly. */
  explain(err: unknown): never;
}

/**
 * How long after the first signal another one is the same request. One Ctrl-C arrives more
 * than once: the terminal sends SIGINT to the whole foreground group, and `pnpm x …` passes
 * its own on to the command as well.
 */
export const REPEAT_WINDOW_MS = 2000;

const SIGNAL_NUMBERS = { SIGINT: 2, SIGTERM: 15 } as const;

/**
 * SIGTERM and SIGINT, listened for from the very start: one that arrives while the platform
 * is still starting stops the start (nothing is left behind, its firewall table included)
 * instead of killing the process half-started, and one that arrives later stops it; either way
 * the command then exits 0. They stay listened for while it stops: a repeat within
 * REPEAT_WINDOW_MS is the same request, and a later one ends the process at once (128 + the
 * signal's number), leaving the rest to the watcher that runs `x cleanup` for it.
 */
export function stopSignal(): StopSignal {
  const controller = new AbortController();
  let first: number | undefined;
  const requested = new Promise<void>((resolve) => {
    const stop = (signal: "SIGINT" | "SIGTERM") => {
      if (first === undefined) {
        first = Date.now();
        controller.abort(new Error(`stopped by ${signal}`));
        resolve();
        return;
      }
      if (Date.now() - first < REPEAT_WINDOW_MS) return;
      process.stderr.write(`x: ${signal} again while stopping: ending now\n`);
      process.exit(128 + SIGNAL_NUMBERS[signal]);
    };
    process.on("SIGTERM", stop);
    process.on("SIGINT", stop);
  });
  return {
    signal: controller.signal,
    requested,
    explain: (err) => {
      if (controller.signal.aborted && err === controller.signal.reason)
        throw new CliError(`x: ${(err as Error).message} while starting; nothing is left running`, 0);
      throw err;
    },
  };
}
