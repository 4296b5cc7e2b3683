import { EgressLog } from "./egress-log.js";

const decision = (sandboxId: string, verdict: "allowed" | "denied" = "allowed") => ({
  sandboxId,
  protocol: "tcp" as const,
  destination: "198.51.100.1",
  port: 80,
  verdict,
  rule: "default (not denied)",
});

describe("EgressLog", () => {
  it("keeps the newest decisions per sandbox, read on from a cursor", () => {
    const log = new EgressLog(3, 2);
    for (let i = 0; i < 5; i++) log.record(decision("a", i % 2 ? "denied" : "allowed"));
    const all = log.since("a");
    expect(all.map((d) => d.seq)).toEqual([3, 4, 5]);
    expect(log.since("a", 4).map((d) => d.seq)).toEqual([5]);
    expect(log.since("a", 0, 1).map((d) => d.seq)).toEqual([3]);
    expect(log.counts()).toEqual(
      expect.arrayContaining([
        { verdict: "allowed", protocol: "tcp", count: 3 },
        { verdict: "denied", protocol: "tcp", count: 2 },
      ]),
    );
  });

  it("lets go of the sandbox heard from least recently", () => {
    const log = new EgressLog(10, 2);
    log.record(decision("a"));
    log.record(decision("b"));
    log.record(decision("a"));
    log.record(decision("c"));
    expect(log.since("b")).toEqual([]);
    expect(log.since("a")).toHaveLength(2);
    expect(log.since("c")).toHaveLength(1);
  });
});
