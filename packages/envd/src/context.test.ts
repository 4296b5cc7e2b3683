import { createLogger } from "./context.js";

describe("envd's log", () => {
  it("writes one JSON line per entry, a client's long values clipped", () => {
    const lines: string[] = [];
    createLogger((line) => lines.push(line))("info", "process started", {
      pid: 7,
      tag: "t".repeat(1024 * 1024),
    });
    expect(lines.length).toBe(1);
    const entry = JSON.parse(lines[0]!) as Record<string, unknown>;
    expect(entry).toMatchObject({ level: "info", msg: "process started", pid: 7 });
    expect(entry.tag).toBe(`${"t".repeat(1024)}… (1048576 characters)`);
    expect(lines[0]!.length).toBeLessThan(2048);
  });
});
