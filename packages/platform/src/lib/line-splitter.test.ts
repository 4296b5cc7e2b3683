import { LineSplitter, lineCutMark, MAX_LINE_BYTES } from "./line-splitter.js";

function split(chunks: Array<string | Uint8Array>, maxLineBytes?: number, cr = false): string[] {
  const lines: string[] = [];
  const splitter = new LineSplitter((line) => lines.push(line), { maxLineBytes, cr });
  for (const chunk of chunks) splitter.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk);
  splitter.end();
  return lines;
}

describe("LineSplitter", () => {
  it("splits on LF and CRLF, across chunks, and hands on the last partial line at the end", () => {
    expect(split(["one\ntw", "o\r", "\nthree\n\nfour"])).toEqual(["one", "two", "three", "", "four"]);
  });

  it("ends lines at a lone CR too when asked, CRLF still once", () => {
    expect(split(["10%\r20%\r", "\ndone\r\nnext\n"], undefined, true)).toEqual([
      "10%",
      "20%",
      "done",
      "next",
    ]);
    expect(split(["a\rb\n"])).toEqual(["a\rb"]);
    expect(split([`${"x".repeat(12)}\r`, "\nafter\r"], 10, true)).toEqual([
      `xxxxxxxxxx${lineCutMark(10)}`,
      "after",
    ]);
  });

  it("keeps a UTF-8 character split between chunks whole", () => {
    const bytes = Buffer.from("grüße\n");
    expect(split([bytes.subarray(0, 3), bytes.subarray(3)])).toEqual(["grüße"]);
  });

  it("cuts a line at the limit, marks the cut, and skips the rest of it up to its newline", () => {
    const long = "a".repeat(25);
    expect(split([`${long}\nshort\n`], 10)).toEqual([`aaaaaaaaaa${lineCutMark(10)}`, "short"]);
    // the long line arriving in small pieces is cut the same way, once
    expect(split([...long].concat(["\n", "next"]), 10)).toEqual([`aaaaaaaaaa${lineCutMark(10)}`, "next"]);
    // a line of exactly the limit is whole
    expect(split(["0123456789\n"], 10)).toEqual(["0123456789"]);
    expect(lineCutMark(MAX_LINE_BYTES)).toBe(" [line cut at 64 KiB]");
  });

  it("never cuts inside a UTF-8 character", () => {
    // "ü" is two bytes: the cut at 4 bytes would fall between them
    expect(split(["abcü and more\n"], 4)).toEqual([`abc${lineCutMark(4)}`]);
  });

  it("holds at most one line's worth of a stream without newlines, however long it is", () => {
    const lines: string[] = [];
    const splitter = new LineSplitter((line) => lines.push(line));
    const chunk = new Uint8Array(64 * 1024);
    // 512 MiB of zeros without a newline: one cut line, and nothing gathered past it
    for (let i = 0; i < 8192; i++) splitter.push(chunk);
    const held = (splitter as unknown as { partialBytes: number }).partialBytes;
    splitter.push(Buffer.from("\nafter\n"));
    splitter.end();
    expect(held).toBe(0);
    expect(lines.length).toBe(2);
    expect(Buffer.byteLength(lines[0]!)).toBe(MAX_LINE_BYTES + lineCutMark(MAX_LINE_BYTES).length);
    expect(lines[1]).toBe("after");
  });
});
