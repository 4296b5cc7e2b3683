import { createEnvdClient, type EnvdClient } from "@x/envd-client";
import { CliError, CONNECTION_HELP, call, connect, explain } from "../connection.js";
import type { Io } from "../output/io.js";
import { pairs, parse, required } from "./args.js";

const HELP = `x sandbox exec ID [--cwd DIR] [--env K=V]... -- CMD [ARGS...]

Runs CMD with ARGS in the sandbox (a paused one is resumed), streaming its stdout and stderr as
they come, and exits with its exit code. Input piped to x (not a terminal) is forwarded to it.

  --cwd DIR          working directory (the user's home by default)
  --env K=V          environment variable, repeatable

${CONNECTION_HELP}`;

/** One word for bash, quoted unless it is plainly safe. */
export function shellQuote(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", `'\\''`)}'`;
}

/** `x sandbox exec ID -- CMD ARGS…`; returns the command's exit code. */
export async function exec(argv: string[], io: Io): Promise<number> {
  const name = "x sandbox exec";
  const dash = argv.indexOf("--");
  const own = dash < 0 ? argv : argv.slice(0, dash);
  const { values, positionals } = parse(name, own, {
    cwd: { type: "string" },
    env: { type: "string", multiple: true },
  });
  if (values.help) {
    io.out(HELP);
    return 0;
  }
  const id = required(name, positionals, 0, "the sandbox ID");
  const words = dash < 0 ? positionals.slice(1) : [...positionals.slice(1), ...argv.slice(dash + 1)];
  if (words.length === 0)
    throw new CliError(`${name}: give the command after '--', e.g. x sandbox exec ${id} -- ls -l`, 2);
  const envs = pairs(name, "env", values.env as string[] | undefined);
  const conn = connect(values);
  // resumes a paused sandbox, and gives the token for its agent
  const { data: sandbox } = await call(
    conn,
    `${name}: connecting to sandbox ${id}`,
    conn.api.POST("/v2/sandboxes/{sandboxID}/connect", { params: { path: { sandboxID: id } }, body: {} }),
  );
  const envd = createEnvdClient({
    baseUrl: conn.proxyUrl,
    sandboxId: id,
    accessToken: sandbox.envdAccessToken,
  });
  const controller = new AbortController();
  let stop: (() => void) | undefined;
  try {
    // the output's bytes as they come, unchanged: binary output survives a pipe
    for await (const res of envd.process.start(
      {
        process: {
          cmd: "/bin/bash",
          args: ["-l", "-c", words.map(shellQuote).join(" ")],
          envs,
          cwd: values.cwd as string | undefined,
        },
        stdin: Boolean(io.stdin),
      },
      { signal: controller.signal },
    )) {
      const event = res.event?.event;
      if (event?.case === "start" && io.stdin) stop = forwardStdin(io.stdin, envd, event.value.pid);
      else if (event?.case === "data") {
        const output = event.value.output;
        if (output.case === "stdout") io.out(output.value);
        else if (output.case === "stderr") io.err(output.value);
      } else if (event?.case === "end") {
        if (event.value.error && event.value.exitCode === 0) io.err(`${name}: ${event.value.error}\n`);
        return event.value.exitCode;
      }
    }
    throw new CliError(`${name}: the output stream ended before the command did (was sandbox ${id} killed?)`);
  } catch (err) {
    if (err instanceof CliError) throw err;
    throw new CliError(`${name}: ${explain(err, conn)}`);
  } finally {
    stop?.();
    controller.abort();
  }
}

function forwardStdin(stdin: NodeJS.ReadableStream, envd: EnvdClient, pid: number): () => void {
  const target = { selector: { case: "pid" as const, value: pid } };
  // in order, one request at a time; the command may end before its input does
  let chain = Promise.resolve();
  const send = (step: () => Promise<void>) => {
    chain = chain.then(step).catch(() => undefined);
  };
  const onData = (chunk: Buffer) =>
    send(async () => {
      await envd.process.sendInput({
        process: target,
        input: { input: { case: "stdin", value: new Uint8Array(chunk) } },
      });
    });
  const onEnd = () =>
    send(async () => {
      await envd.process.closeStdin({ process: target });
    });
  stdin.on("data", onData);
  stdin.on("end", onEnd);
  return () => {
    stdin.off("data", onData);
    stdin.off("end", onEnd);
    stdin.pause();
  };
}
