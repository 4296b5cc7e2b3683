import type { PlatformEvent } from "../store/index.js";
import { replayActivity, stepFor } from "./team-metrics.js";

const at = (s: number) => new Date(s * 1000).toISOString();
let n = 0;
const event = (type: string, sandboxId: string, s: number): PlatformEvent => ({
  id: String(n++).padStart(6, "0"),
  at: at(s),
  teamId: "t",
  sandboxId,
  type,
  data: {},
});

describe("team metrics", () => {
  it("steps 5 s, longer for long ranges so an answer has at most 1000 points", () => {
    expect(stepFor(60)).toBe(5);
    expect(stepFor(7 * 24 * 3600)).toBe(605);
  });

  it("counts the most sandboxes running in each step, creates per second and running seconds", () => {
    const events = [
      event("sandbox.created", "a", 990), // before the range: running at its start
      event("sandbox.created", "b", 1001),
      event("sandbox.created", "c", 1002),
      event("sandbox.killed", "c", 1003),
      event("sandbox.paused", "a", 1007),
      event("sandbox.paused", "a", 1008), // a pause deepened: no change
      event("sandbox.resumed", "a", 1012),
      event("sandbox.killed", "b", 1016),
      event("sandbox.created", "d", 1030), // after the range
    ];
    const { points, sandboxSeconds } = replayActivity(events, 1000, 1020);
    expect(points).toEqual([
      { at: 1000, concurrent: 3, startRate: 2 / 5 },
      { at: 1005, concurrent: 2, startRate: 0 },
      { at: 1010, concurrent: 2, startRate: 0 },
      { at: 1015, concurrent: 2, startRate: 0 },
    ]);
    // a: 1000-1007 and 1012-1020 (15 s); b: 1001-1016 (15 s); c: 1 s
    expect(sandboxSeconds).toBe(31);
  });

  it("holds the count through steps without events", () => {
    const { points } = replayActivity([event("sandbox.created", "a", 100)], 100, 120);
    expect(points.map((p) => p.concurrent)).toEqual([1, 1, 1, 1]);
  });
});
