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
 * SIGTERM and SIGINT, listened for from the very start: one that arrives while the platform
 * is still starting stops the start (nothing is left behind, its firewall table included)
 * instead of killing the process half-started, and one that arrives later stops it.
 */
export function stopSignal(): StopSignal {
  const controller = new AbortController();
  const requested = new Promise<void>((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      process.off("SIGTERM", stop);
      process.off("SIGINT", stop);
      controller.abort(new Error(`stopped by ${signal}`));
      resolve();
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
