import type { Logger } from "./log.js";

/**
 * What a start has set up, to be taken down in reverse: a failed start unwinds exactly what it
 * got to (so a taken port or a missing image leaves nothing running), and a stop runs the same
 * steps. Each step runs once; one that fails is logged and the rest still run.
 */
export class Teardown {
  private readonly steps: { name: string; run: () => unknown }[] = [];

  constructor(private readonly log: Logger) {}

  /** Adds a step, run before every step added earlier. */
  defer(name: string, run: () => unknown): void {
    this.steps.push({ name, run });
  }

  /** Runs every step added so far, the last added first. */
  async unwind(): Promise<void> {
    for (let step = this.steps.pop(); step; step = this.steps.pop()) {
      try {
        await step.run();
      } catch (err) {
        this.log.warn({ err, step: step.name }, "a step of the platform's stop failed; going on");
      }
    }
  }
}
