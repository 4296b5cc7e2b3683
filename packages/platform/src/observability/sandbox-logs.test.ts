import { legacyLine, parseConsole } from "./sandbox-logs.js";

describe("parseConsole", () => {
  it("turns envd's JSON lines into entries and keeps other lines verbatim", () => {
    const text = [
      "runtime says hello",
      '{"t":"2026-01-01T00:00:01.000Z","level":"info","msg":"envd ready","port":49983,"version":"0.6.4"}',
      "",
      '{"t":"2026-01-01T00:00:02.500Z","level":"warn","msg":"slow","detail":{"ms":900}}',
      "a plain line after it",
      '{"level":"bogus","msg":"no time"}',
      '["json but not an entry"]',
    ].join("\n");
    expect(parseConsole(text, "2026-01-01T00:00:00.000Z")).toEqual([
      {
        timestamp: "2026-01-01T00:00:00.000Z",
        level: "info",
        message: "runtime says hello",
        fields: { source: "console" },
      },
      {
        timestamp: "2026-01-01T00:00:01.000Z",
        level: "info",
        message: "envd ready",
        fields: { port: "49983", version: "0.6.4", source: "envd" },
      },
      {
        timestamp: "2026-01-01T00:00:02.500Z",
        level: "warn",
        message: "slow",
        fields: { detail: '{"ms":900}', source: "envd" },
      },
      {
        timestamp: "2026-01-01T00:00:02.500Z",
        level: "info",
        message: "a plain line after it",
        fields: { source: "console" },
      },
      {
        timestamp: "2026-01-01T00:00:02.500Z",
        level: "info",
        message: "no time",
        fields: { source: "envd" },
      },
      {
        timestamp: "2026-01-01T00:00:02.500Z",
        level: "info",
        message: '["json but not an entry"]',
        fields: { source: "console" },
      },
    ]);
  });
});

describe("legacyLine", () => {
  it("is JSON with the string level and logger the e2b CLI reads, whatever the entry's source", () => {
    for (const entry of parseConsole(
      'plain text\n{"level":"warn","msg":"w","x":1}',
      "2026-01-01T00:00:00Z",
    )) {
      const line = JSON.parse(legacyLine(entry));
      expect(typeof line.level).toBe("string");
      expect(typeof line.logger).toBe("string");
      expect(line.message).toBe(entry.message);
    }
    const event = JSON.parse(
      legacyLine({
        timestamp: "2026-01-01T00:00:00.000Z",
        level: "info",
        message: "sandbox created",
        fields: { source: "platform", event: "sandbox.created", level: "spoofed" },
      }),
    );
    expect(event).toMatchObject({ level: "info", logger: "platform", event: "sandbox.created" });
  });
});
