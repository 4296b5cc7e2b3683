import { CommandExitError, Sandbox } from "@x/sdk";
import { parse, required } from "../commands/args.js";
import { CliError, CONNECTION_HELP, connect, explain, sdkOptions } from "../connection.js";
import type { Io } from "../output/io.js";

const HELP = `x sandbox shell ID: an interactive terminal (a login bash) in the sandbox

Keys go to the sandbox as typed (the local terminal is in raw mode), the remote terminal follows
the local window's size, and x exits with the shell's exit code when it ends ('exit' or Ctrl-D).

${CONNECTION_HELP}`;

/** The local terminal: the process's own by default. */
export interface Terminal {
  input: NodeJS.ReadStream;
  output: NodeJS.WriteStream;
}

/** `x sandbox shell ID`; returns the shell's exit code. */
export async function shell(
  argv: string[],
  io: Io,
  term: Terminal = { input: process.stdin, output: process.stdout },
): Promise<number> {
  const name = "x sandbox shell";
  const { values, positionals } = parse(name, argv, {});
  if (values.help) {
    io.out(HELP);
    return 0;
  }
  const id = required(name, positionals, 0, "the sandbox ID");
  const conn = connect(values);
  const size = () => ({ cols: term.output.columns || 80, rows: term.output.rows || 24 });
  let sandbox: Sandbox;
  try {
    sandbox = await Sandbox.connect(id, sdkOptions(conn));
  } catch (err) {
    throw new CliError(`${name}: ${explain(err, conn)}`);
  }
  if (!term.input.isTTY) {
    throw new CliError(`${name}: needs a terminal; for scripts use 'x sandbox exec ${id} -- CMD'`, 2);
  }
  const handle = await sandbox.pty
    .create({ ...size(), onData: (data) => term.output.write(data) })
    .catch((err: unknown) => {
      throw new CliError(`${name}: ${explain(err, conn)}`);
    });

  // keystrokes in order, one request at a time
  let chain = Promise.resolve();
  const onData = (chunk: Buffer) => {
    const bytes = new Uint8Array(chunk);
    chain = chain.then(() => sandbox.pty.sendInput(handle.pid, bytes)).catch(() => undefined);
  };
  const onResize = () => {
    chain = chain.then(() => sandbox.pty.resize(handle.pid, size())).catch(() => undefined);
  };
  const wasRaw = term.input.isRaw;
  term.input.setRawMode(true);
  term.input.on("data", onData);
  term.input.resume();
  // Node re-reads the window size on SIGWINCH and then emits 'resize'
  term.output.on("resize", onResize);
  try {
    await handle.wait();
    return 0;
  } catch (err) {
    if (err instanceof CommandExitError) return err.exitCode;
    throw new CliError(`${name}: ${explain(err, conn)}`);
  } finally {
    term.output.off("resize", onResize);
    term.input.off("data", onData);
    term.input.setRawMode(wasRaw);
    term.input.pause();
  }
}
