import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import {
  formatBytes,
  limitStream,
  readAtMost,
  readFileAtMost,
  readFileTail,
  TooLargeError,
} from "./bounded-read.js";

/** A web stream of `count` chunks of `size` bytes, counting how many were pulled and whether it was cancelled. */
function source(count: number, size: number) {
  const seen = { pulled: 0, cancelled: false };
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (seen.pulled === count) return controller.close();
      seen.pulled++;
      controller.enqueue(new Uint8Array(size).fill(0x61));
    },
    cancel() {
      seen.cancelled = true;
    },
  });
  return { stream, seen };
}

describe("readAtMost", () => {
  it("reads a body up to the limit whole", async () => {
    const { stream } = source(4, 256);
    const body = await readAtMost(stream, 1024, "envd's answer");
    expect(body.length).toBe(1024);
    expect(body.every((b) => b === 0x61)).toBe(true);
  });

  it("stops reading past the limit, cancels the source and names what it read", async () => {
    const { stream, seen } = source(1_000_000, 1024);
    const err = await readAtMost(stream, 4096, "envd's answer to /init").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TooLargeError);
    expect((err as Error).message).toBe(
      "envd's answer to /init is larger than the 4 KiB the platform reads of it",
    );
    // the fifth chunk went past the limit: nothing after it was pulled (one more may be queued)
    expect(seen.pulled).toBeLessThanOrEqual(6);
    expect(seen.cancelled).toBe(true);
  });

  it("takes async iterables (a Node stream) and an absent body", async () => {
    async function* chunks() {
      yield Buffer.from("ab");
      yield Buffer.from("cd");
    }
    expect((await readAtMost(chunks(), 4, "x")).toString()).toBe("abcd");
    await expect(readAtMost(chunks(), 3, "x")).rejects.toBeInstanceOf(TooLargeError);
    expect((await readAtMost(null, 0, "x")).length).toBe(0);
  });
});

describe("limitStream", () => {
  it("passes a body within the limit on unchanged", async () => {
    const { stream } = source(3, 100);
    expect((await new Response(limitStream(stream, 300, "x")).arrayBuffer()).byteLength).toBe(300);
  });

  it("errors the stream a library reads once the limit is passed", async () => {
    const { stream, seen } = source(1_000_000, 1000);
    const err = await new Response(limitStream(stream, 10_000, "envd's answer"))
      .text()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TooLargeError);
    expect(seen.pulled).toBeLessThan(20);
  });
});

describe("files", () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "bounded-read-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("reads a file whole up to the limit, and refuses a longer one", async () => {
    const file = path.join(dir, "blob");
    writeFileSync(file, Buffer.alloc(200_000, 1));
    expect((await readFileAtMost(file, 200_000, "blob"))?.length).toBe(200_000);
    await expect(readFileAtMost(file, 199_999, "the blob")).rejects.toThrow(
      "the blob is larger than the 199999 B the platform reads of it",
    );
    expect(await readFileAtMost(path.join(dir, "missing"), 10, "x")).toBeUndefined();
  });

  it("reads a file's tail", async () => {
    const file = path.join(dir, "log");
    writeFileSync(file, "0123456789");
    expect(await readFileTail(file, 4)).toEqual({ bytes: Buffer.from("6789"), cut: true });
    expect(await readFileTail(file, 40)).toEqual({ bytes: Buffer.from("0123456789"), cut: false });
    expect(await readFileTail(path.join(dir, "missing"), 4)).toEqual({ bytes: Buffer.alloc(0), cut: false });
  });

  it("formats limits", () => {
    expect([formatBytes(2 ** 20), formatBytes(64 * 1024), formatBytes(1000)]).toEqual([
      "1 MiB",
      "64 KiB",
      "1000 B",
    ]);
  });
});
