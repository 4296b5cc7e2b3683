import { formatBytes } from "./bounded-read.js";

/** The longest output line the host keeps: a longer one is cut there, and the rest of it dropped. */
export const MAX_LINE_BYTES = 64 * 1024;

/** What ends a line that was cut at `maxBytes`. */
export const lineCutMark = (maxBytes: number) => ` [line cut at ${formatBytes(maxBytes)}]`;

export interface LineSplitterOptions {
  maxLineBytes?: number;
  /** A lone CR ends a line too (progress bars redraw with it); CRLF is still one end. */
  cr?: boolean;
}

/**
 * Splits a byte stream into lines, holding back a partial last line until more arrives. A line
 * longer than `maxLineBytes` is handed on at that length with `lineCutMark`, and the rest of it
 * is skipped up to its end: what a command prints without a newline (`head -c 1G /dev/zero`)
 * is never gathered whole. A trailing CR is dropped (CRLF ends a line as LF does).
 */
export class LineSplitter {
  private partial: Buffer[] = [];
  private partialBytes = 0;
  /** Inside a line that was cut: its bytes are dropped until its end. */
  private skipping = false;
  /** The last line ended with a CR: an LF right after it is that same end. */
  private afterCr = false;
  private readonly maxLineBytes: number;
  private readonly cr: boolean;
  private readonly mark: string;

  constructor(
    private readonly emit: (line: string) => void,
    opts: LineSplitterOptions = {},
  ) {
    this.maxLineBytes = opts.maxLineBytes ?? MAX_LINE_BYTES;
    this.cr = opts.cr ?? false;
    this.mark = lineCutMark(this.maxLineBytes);
  }

  push(bytes: Uint8Array): void {
    const chunk = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    let from = 0;
    for (let end = this.nextEnd(chunk, from); end !== -1; end = this.nextEnd(chunk, from)) {
      const isCr = chunk[end] === 0x0d;
      // the LF of a CRLF whose CR ended the line already
      const secondHalf = !isCr && this.afterCr && end === from;
      this.afterCr = isCr;
      const piece = chunk.subarray(from, end);
      from = end + 1;
      if (secondHalf) continue;
      if (this.skipping) this.skipping = false;
      else this.take(piece, true);
    }
    if (from < chunk.length) {
      this.afterCr = false;
      if (!this.skipping) this.take(chunk.subarray(from), false);
    }
  }

  end(): void {
    if (this.partialBytes > 0) this.emit(Buffer.concat(this.partial, this.partialBytes).toString("utf8"));
    this.reset();
    this.skipping = false;
    this.afterCr = false;
  }

  private nextEnd(chunk: Buffer, from: number): number {
    const lf = chunk.indexOf(0x0a, from);
    if (!this.cr) return lf;
    const cr = chunk.indexOf(0x0d, from);
    return cr === -1 ? lf : lf === -1 ? cr : Math.min(cr, lf);
  }

  /** Adds a piece of the current line; `complete` when a line end followed it. */
  private take(piece: Buffer, complete: boolean): void {
    const room = this.maxLineBytes - this.partialBytes;
    if (piece.length > room) {
      // at most maxLineBytes, not in the middle of a UTF-8 character
      let cut = room;
      while (cut > 0 && (piece[cut]! & 0xc0) === 0x80) cut--;
      this.partial.push(piece.subarray(0, cut));
      this.emit(Buffer.concat(this.partial, this.partialBytes + cut).toString("utf8") + this.mark);
      this.reset();
      this.skipping = !complete;
      return;
    }
    if (!complete) {
      // a copy: the chunk's buffer is not ours to keep
      this.partial.push(Buffer.from(piece));
      this.partialBytes += piece.length;
      return;
    }
    const line = this.partialBytes > 0 ? Buffer.concat([...this.partial, piece]) : piece;
    this.reset();
    this.emit(line.toString("utf8", 0, line[line.length - 1] === 0x0d ? line.length - 1 : line.length));
  }

  private reset(): void {
    this.partial = [];
    this.partialBytes = 0;
  }
}
