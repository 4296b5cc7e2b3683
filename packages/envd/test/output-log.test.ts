import { OutputLog } from "../src/process/output-log.js";

const bytes = (s: string) => new TextEncoder().encode(s);
const text = (chunks: Array<{ data: Uint8Array }>) =>
  chunks.map((c) => new TextDecoder().decode(c.data)).join("");

describe("OutputLog", () => {
  it("gives each chunk its offset and replays from any byte", () => {
    const log = new OutputLog(1024);
    expect(log.append("stdout", bytes("hello ")).offset).toBe(0);
    expect(log.append("stderr", bytes("world")).offset).toBe(6);
    expect(log.end).toBe(11);
    expect(text(log.since())).toBe("hello world");
    const from = log.since(3);
    expect(text(from)).toBe("lo world");
    expect(from.map((c) => [c.stream, c.offset])).toEqual([
      ["stdout", 3],
      ["stderr", 6],
    ]);
    expect(log.since(11)).toEqual([]);
    expect(log.since(99)).toEqual([]);
  });

  it("keeps only the newest bytes, whole chunks, and replays from the oldest it has", () => {
    const log = new OutputLog(10);
    log.append("stdout", bytes("aaaa"));
    log.append("stdout", bytes("bbbb"));
    log.append("stdout", bytes("cccc"));
    expect(text(log.since(0))).toBe("bbbbcccc");
    expect(log.since(0)[0]!.offset).toBe(4);
    // one chunk larger than the whole log is still kept (the newest output is never dropped)
    log.append("pty", bytes("x".repeat(20)));
    expect(text(log.since(0))).toBe("x".repeat(20));
  });
});
