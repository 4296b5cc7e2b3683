import cliProgress from "cli-progress";
import type { Io } from "./io.js";

const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/**
 * A status line on stderr: on a terminal a spinner with the time taken, redrawn in place, or a
 * progress bar once the work says how much of it there is; otherwise plain lines, one per
 * change of status. `log` prints a line above it.
 */
export interface Progress {
  /** `detail` (a step, say) is shown on a terminal only and does not count as a change. */
  status(text: string, detail?: string): void;
  /** `done` of `total` units of `text`: a bar on a terminal (a status line otherwise). */
  advance(text: string, done: number, total: number, detail?: string): void;
  log(line: string): void;
  /** Clears the status line. */
  stop(): void;
}

export function createProgress(io: Io): Progress {
  const started = Date.now();
  let current = "";
  let shown = "";
  let frame = 0;
  let timer: NodeJS.Timeout | undefined;
  let bar: cliProgress.SingleBar | undefined;
  const stream = { write: (text: string) => io.err(text), isTTY: true } as unknown as NodeJS.WriteStream;
  const draw = () => {
    if (bar) return;
    const seconds = Math.round((Date.now() - started) / 1000);
    io.err(`\r\x1b[K${FRAMES[frame++ % FRAMES.length]} ${current} (${seconds} s)`);
  };
  const clear = () => io.err("\r\x1b[K");
  if (io.tty) {
    timer = setInterval(draw, 100);
    timer.unref();
  }
  return {
    status(text, detail) {
      if (io.tty) {
        current = detail ? `${text}, ${detail}` : text;
        draw();
      } else if (text !== shown) io.err(`${text}\n`);
      shown = text;
    },
    advance(text, done, total, detail) {
      if (!io.tty) return this.status(text, detail);
      if (!bar) {
        clear();
        bar = new cliProgress.SingleBar(
          {
            stream,
            format: "{bar} {percentage}% | {text} | ETA {eta_formatted} {detail}",
            barsize: 30,
            hideCursor: true,
            clearOnComplete: true,
            etaBuffer: 50,
            fps: 10,
          },
          cliProgress.Presets.shades_classic,
        );
        bar.start(total, done, { text, detail: detail ?? "" });
      }
      bar.setTotal(total);
      bar.update(done, { text, detail: (detail ?? "").slice(0, 60) });
    },
    log(line) {
      if (!io.tty) {
        io.err(`${line}\n`);
        return;
      }
      clear();
      io.err(`${line}\n`);
      if (bar) bar.render();
      else draw();
    },
    stop() {
      if (timer) clearInterval(timer);
      bar?.stop();
      bar = undefined;
      if (io.tty) clear();
    },
  };
}
