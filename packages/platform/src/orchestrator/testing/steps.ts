/** A step of the fake host or its agent: one method of the ports. */
export type Step =
  | "boot"
  | "bootFromImage"
  | "restore"
  | "freeze"
  | "thaw"
  | "checkpoint"
  | "stop"
  | "destroy"
  | "setEgress"
  | "weigh"
  | "init"
  | "runStartCommand"
  | "runCommand"
  | "checkpointable";

/** The next call of a step, held: the test sees it arrive, then lets it go on or fail. */
export interface Gate {
  /** Resolves once the held call has arrived: the operation is in the middle of this step. */
  reached: Promise<void>;
  open(): void;
  /** The held call throws this (a runtime error, a timeout, …). */
  fail(err?: Error): void;
}

interface HeldCall {
  arrived(): void;
  /** Settles when the test opens or fails the gate. */
  released: Promise<void>;
}

/**
 * What a test scripts per step: delays, gates that hold the next call mid-step, failures of
 * the next call or of every call. Also records each call and how many of a step ran at once.
 */
export class StepScript {
  readonly calls: Array<{ step: Step; id: string }> = [];
  private readonly delays = new Map<Step, number>();
  private readonly gates = new Map<Step, HeldCall[]>();
  private readonly nextFailures = new Map<Step, Error[]>();
  private readonly alwaysFailing = new Map<Step, Error>();
  private readonly running = new Map<Step, number>();
  private readonly mostAtOnce = new Map<Step, number>();

  /** Every call of `step` takes `ms` (real time: for tests of concurrency, not of order). */
  delay(step: Step, ms: number): void {
    this.delays.set(step, ms);
  }

  /** Holds the next call of `step` until the returned gate is opened or failed. */
  hold(step: Step): Gate {
    let arrived!: () => void;
    const reached = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    let open!: () => void;
    let fail!: (err: Error) => void;
    const released = new Promise<void>((resolve, reject) => {
      open = resolve;
      fail = reject;
    });
    const queue = this.gates.get(step) ?? [];
    queue.push({ arrived, released });
    this.gates.set(step, queue);
    return { reached, open, fail: (err = new Error(`${step} failed`)) => fail(err) };
  }

  /** The next call of `step` throws `err`. */
  failNext(step: Step, err = new Error(`${step} failed`)): void {
    this.nextFailures.set(step, [...(this.nextFailures.get(step) ?? []), err]);
  }

  /** Every call of `step` throws `err` until `heal`. */
  failAlways(step: Step, err = new Error(`${step} failed`)): void {
    this.alwaysFailing.set(step, err);
  }

  heal(step: Step): void {
    this.alwaysFailing.delete(step);
    this.nextFailures.delete(step);
  }

  /** Calls of `step` so far, by sandbox id. */
  idsOf(step: Step): string[] {
    return this.calls.filter((c) => c.step === step).map((c) => c.id);
  }

  /** The most calls of `step` that ran at once. */
  mostAtOnceOf(step: Step): number {
    return this.mostAtOnce.get(step) ?? 0;
  }

  /** Runs one call of `step` as scripted, then `effect` (which checks and changes the fake's state). */
  async run<T>(step: Step, id: string, effect: () => T): Promise<T> {
    this.calls.push({ step, id });
    const now = (this.running.get(step) ?? 0) + 1;
    this.running.set(step, now);
    this.mostAtOnce.set(step, Math.max(now, this.mostAtOnceOf(step)));
    try {
      const ms = this.delays.get(step);
      if (ms) await new Promise((resolve) => setTimeout(resolve, ms));
      const held = this.gates.get(step)?.shift();
      if (held) {
        held.arrived();
        await held.released;
      }
      const failure = this.nextFailures.get(step)?.shift() ?? this.alwaysFailing.get(step);
      if (failure) throw failure;
      return effect();
    } finally {
      this.running.set(step, (this.running.get(step) ?? 1) - 1);
    }
  }
}
