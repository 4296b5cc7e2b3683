import { keys } from "./keys.js";
import { serve } from "./serve.js";

const USAGE = `usage: x <command> [options]

commands:
  serve     run the platform in this process (x serve --help)
  keys      create, list and revoke API keys (x keys --help)
`;

/** The x command; returns the process exit code. */
export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case "serve":
      return serve(rest);
    case "keys":
      return keys(rest);
    case undefined:
    case "help":
    case "--help":
    case "-h":
      process.stdout.write(USAGE);
      return command === undefined ? 1 : 0;
    default:
      process.stderr.write(`x: unknown command '${command}'\n${USAGE}`);
      return 2;
  }
}
