/**
 * The gateway's log: lines with a time, on stderr (the log file, once it runs as a daemon).
 * Servers' own stderr is kept there too, each line under its server's name.
 */
export interface Log {
  info(message: string): void;
  server(key: string, text: string): void;
}

export function createLog(write: (line: string) => void = (line) => process.stderr.write(line)): Log {
  const stamp = () => new Date().toISOString();
  return {
    info: (message) => write(`${stamp()} ${message}\n`),
    server: (key, text) => {
      for (const line of text.split("\n")) if (line.trim()) write(`${stamp()} [${key}] ${line}\n`);
    },
  };
}
