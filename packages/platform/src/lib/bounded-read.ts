import { type FileHandle, open } from "node:fs/promises";

/**
 * Reads of what a sandbox, a build or a registry controls, with a limit: the host never holds
 * more of such a body or file than it means to (a sandbox's root can answer in envd's place).
 */

/** A body or file longer than the host reads of it. */
export class TooLargeError extends Error {
  constructor(
    readonly what: string,
    readonly maxBytes: number,
  ) {
    super(`${what} is larger than the ${formatBytes(maxBytes)} the platform reads of it`);
    this.name = "TooLargeError";
  }
}

/** `1 MiB`, `64 KiB`, `512 B`: a limit as messages show it. */
export function formatBytes(n: number): string {
  if (n >= 2 ** 20 && n % 2 ** 20 === 0) return `${n / 2 ** 20} MiB`;
  if (n >= 1024 && n % 1024 === 0) return `${n / 1024} KiB`;
  return `${n} B`;
}

type Body = ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>;

/**
 * The whole body, at most `maxBytes` of it: past that, reading stops (the stream is cancelled)
 * and a TooLargeError names `what`. An absent body is empty.
 */
export async function readAtMost(
  body: Body | null | undefined,
  maxBytes: number,
  what: string,
): Promise<Buffer> {
  if (!body) return Buffer.alloc(0);
  const chunks: Uint8Array[] = [];
  let size = 0;
  // a web stream by its shape: jest's realm has ReadableStream classes of its own
  const iterable = "getReader" in body ? streamChunks(body) : body;
  for await (const chunk of iterable) {
    size += chunk.byteLength;
    // leaving the loop cancels the stream (or returns the iterator): nothing more is read
    if (size > maxBytes) throw new TooLargeError(what, maxBytes);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}

async function* streamChunks(stream: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  const reader = stream.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

/**
 * The body as it comes, for readers that take a stream (a library's `response.json()`): it
 * errors with a TooLargeError once more than `maxBytes` passed, and the source is cancelled.
 */
export function limitStream(
  body: ReadableStream<Uint8Array>,
  maxBytes: number,
  what: string,
): ReadableStream<Uint8Array> {
  let size = 0;
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        size += chunk.byteLength;
        if (size > maxBytes) controller.error(new TooLargeError(what, maxBytes));
        else controller.enqueue(chunk);
      },
    }),
  );
}

/** A file read whole, at most `maxBytes` of it (TooLargeError past that); undefined when it does not exist. */
export async function readFileAtMost(
  file: string,
  maxBytes: number,
  what: string,
): Promise<Buffer | undefined> {
  const handle = await open(file, "r").catch((err: NodeJS.ErrnoException) => {
    if (err.code === "ENOENT") return undefined;
    throw err;
  });
  if (!handle) return undefined;
  try {
    return await readAtMost(fileChunks(handle), maxBytes, what);
  } finally {
    await handle.close();
  }
}

async function* fileChunks(handle: FileHandle): AsyncGenerator<Uint8Array> {
  for (;;) {
    const buffer = Buffer.alloc(64 * 1024);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
    if (bytesRead === 0) return;
    yield buffer.subarray(0, bytesRead);
  }
}

/** The last `maxBytes` (at most) of a file, as it is now; empty when it does not exist. */
export async function readFileTail(file: string, maxBytes: number): Promise<{ bytes: Buffer; cut: boolean }> {
  const handle = await open(file, "r").catch((err: NodeJS.ErrnoException) => {
    if (err.code === "ENOENT") return undefined;
    throw err;
  });
  if (!handle) return { bytes: Buffer.alloc(0), cut: false };
  try {
    const { size } = await handle.stat();
    const start = Math.max(0, size - maxBytes);
    const buffer = Buffer.alloc(size - start);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, start);
    return { bytes: buffer.subarray(0, bytesRead), cut: start > 0 };
  } finally {
    await handle.close();
  }
}
