import type { ProcessOutput } from "./managed-process.js";

/** Output kept per process for clients that connect later: 512 KiB, the newest. */
export const OUTPUT_LOG_BYTES = 512 << 10;

/**
 * A process's recent output with byte offsets: every chunk (stdout, stderr or pty) gets the
 * offset of its first byte in the process's whole output, so a client that connects (again)
 * can say where it stopped and get what it missed, bounded to the newest `capacity` bytes.
 */
export class OutputLog {
  private readonly chunks: ProcessOutput[] = [];
  private retained = 0;
  private written = 0;

  constructor(private readonly capacity = OUTPUT_LOG_BYTES) {}

  /** Offset of the next byte. */
  get end(): number {
    return this.written;
  }

  /** Records a chunk; returns it with its offset. */
  append(stream: ProcessOutput["stream"], data: Uint8Array): ProcessOutput {
    const chunk: ProcessOutput = { type: "data", stream, data, offset: this.written };
    this.written += data.length;
    this.chunks.push(chunk);
    this.retained += data.length;
    while (this.retained > this.capacity && this.chunks.length > 1) {
      this.retained -= this.chunks.shift()!.data.length;
    }
    return chunk;
  }

  /** What is kept from `offset` on (from the oldest kept byte when that is gone), in order. */
  since(offset = 0): ProcessOutput[] {
    const out: ProcessOutput[] = [];
    for (const chunk of this.chunks) {
      const end = chunk.offset + chunk.data.length;
      if (end <= offset) continue;
      if (chunk.offset >= offset) out.push(chunk);
      else out.push({ ...chunk, data: chunk.data.subarray(offset - chunk.offset), offset });
    }
    return out;
  }
}
