/** Runs code the way an agent would: a file written into the sandbox, then a one-liner. */
import { CommandExitError, Sandbox } from "@x/sdk";
import type { ExampleOptions } from "./shared.js";

export async function main(options: ExampleOptions = {}): Promise<{ output: string; failedWith: number }> {
  const log = options.log ?? console.log;
  const sandbox = await Sandbox.create({ ...options, timeoutMs: 60_000 });
  try {
    await sandbox.files.write(
      "/home/user/agent.py",
      "import sys\nprint(sum(int(a) for a in sys.argv[1:]))\n",
    );
    const result = await sandbox.commands.run("python3 agent.py 1 2 3 && python3 -c 'print(6 * 7)'");
    log(`agent printed: ${result.stdout.trim().replace("\n", ", ")}`);

    // A failing command throws, with its output and exit code.
    let failedWith = 0;
    try {
      await sandbox.commands.run("python3 -c 'import sys; sys.exit(3)'");
    } catch (err) {
      if (!(err instanceof CommandExitError)) throw err;
      failedWith = err.exitCode;
      log(`the failing one exited with ${err.exitCode}`);
    }
    return { output: result.stdout, failedWith };
  } finally {
    await sandbox.kill();
  }
}
