import { performance } from "node:perf_hooks";
import { createContextKey, createContextValues, type HandlerContext } from "@connectrpc/connect";

/** When the request's head reached envd's HTTP server (set per request, see `arrivalValues`). */
const ARRIVED_AT = createContextKey<number | undefined>(undefined, { description: "envd request arrival" });

/** The Connect adapter's `contextValues`: stamps each request's arrival. */
export function arrivalValues() {
  return createContextValues().set(ARRIVED_AT, performance.now());
}

/**
 * Where a request's time went inside envd, as a `Server-Timing` response header (W3C): each
 * `mark(name)` closes the step since the previous mark. Clients and the bench read it beside
 * their own clock to tell envd's share from the transport's.
 */
export class ServerTiming {
  private last: number;
  private readonly steps: string[] = [];

  /** The first step ("request": body, interceptors, routing) starts at the request's arrival. */
  constructor(hc: HandlerContext) {
    this.last = hc.values.get(ARRIVED_AT) ?? performance.now();
    this.mark("request");
  }

  mark(name: string): void {
    const t = performance.now();
    this.steps.push(`${name};dur=${(t - this.last).toFixed(2)}`);
    this.last = t;
  }

  header(): string {
    return this.steps.join(", ");
  }
}
