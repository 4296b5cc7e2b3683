import type { Io } from "./io.js";

const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/**
 * A status line on stderr: on a terminal a spinner with the time taken, redrawn in place;
 * otherwise plain lines, one per change of status. `log` prints a line above it.
 */
export interface Progress {
  /** `detail` (a step, say) is shown on a terminal only and does not count as a change. */
  status(text: string, detail?: string): void;
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
  const draw = () => {
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
    log(line) {
      if (!io.tty) {
        io.err(`${line}\n`);
        return;
      }
      clear();
      io.err(`${line}\n`);
      draw();
    },
    stop() {
      if (timer) clearInterval(timer);
      if (io.tty) clear();
    },
  };
}
