/**
 * `sudo` in a gVisor sandbox (bound over the template's, which cannot work there: see
 * server.ts). Parses sudo's options, hands the request to envd over its socket, relays stdin,
 * signals and the terminal's size one way and output the other, and exits as the command did.
 * Runs under the platform's Node at /opt/x/bin/node, which every sandbox has.
 */
import { readFileSync } from "node:fs";
import net from "node:net";
import { Frame, FrameReader, frame, SUDO_SOCKET, type SudoRequest } from "./frames.js";

const USAGE = `usage: sudo -h | -K | -k | -V
usage: sudo -v [-knS] [-u user]
usage: sudo -l [-knS] [-U user] [-u user] [command [arg ...]]
usage: sudo [-EHknS] [-i | -s] [-u user] [VAR=value] [command [arg ...]]
`;

const HELP = `sudo - execute a command as another user (this sandbox's stand-in: sudoers rules
of the form "who host=(runas) NOPASSWD: ALL" are honoured; nothing ever prompts)

${USAGE}
Options:
  -E, --preserve-env        preserve user environment when running command
  -H, --set-home            set HOME variable to target user's home dir
  -h, --help                display help message and exit
  -i, --login               run login shell as the target user
  -K, --remove-timestamp    remove timestamp file completely (no-op here)
  -k, --reset-timestamp     invalidate timestamp file (no-op here)
  -l, --list                list user's privileges
  -n, --non-interactive     non-interactive mode, no prompts are used
  -S, --stdin               read password from standard input (never needed here)
  -s, --shell               run shell as the target user
  -u, --user=user           run command as specified user name
  -V, --version             display version information and exit
  -v, --validate            update user's timestamp without running a command
  --                        stop processing command line arguments
`;

function fail(message: string, code = 1): never {
  process.stderr.write(message);
  process.exit(code);
}

/** sudo's command line, as sudo reads it. */
export function parseSudoArgs(
  argv: string[],
): SudoRequest & { help?: boolean; version?: boolean; noop?: boolean } {
  const req: ReturnType<typeof parseSudoArgs> = { uid: -1, argv: [], env: {}, cwd: "/" };
  let i = 0;
  const value = (flag: string, inline: string | undefined): string => {
    if (inline) return inline;
    const next = argv[++i];
    if (next === undefined) fail(`sudo: option requires an argument -- '${flag}'\n${USAGE}`);
    return next;
  };
  for (; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--") {
      i++;
      break;
    }
    if (arg.startsWith("--")) {
      const [name, inline] = arg.slice(2).split(/=(.*)/s, 2) as [string, string | undefined];
      const long: Record<string, () => void> = {
        "preserve-env": () => (req.preserveEnv = true),
        "set-home": () => (req.setHome = true),
        help: () => (req.help = true),
        login: () => (req.login = true),
        "remove-timestamp": () => (req.noop = true),
        "reset-timestamp": () => (req.noop = true),
        list: () => (req.list = true),
        "non-interactive": () => (req.nonInteractive = true),
        stdin: () => undefined,
        shell: () => (req.shell = true),
        user: () => (req.user = value("user", inline)),
        version: () => (req.version = true),
        validate: () => (req.validate = true),
      };
      const apply = long[name];
      if (!apply) fail(`sudo: unrecognized option '${arg}'\n${USAGE}`);
      apply();
      continue;
    }
    if (!arg.startsWith("-") || arg === "-") break;
    for (let j = 1; j < arg.length; j++) {
      const flag = arg[j]!;
      const rest = arg.slice(j + 1) || undefined;
      switch (flag) {
        case "E":
          req.preserveEnv = true;
          break;
        case "H":
          req.setHome = true;
          break;
        case "h":
          req.help = true;
          break;
        case "i":
          req.login = true;
          break;
        case "K":
        case "k":
          req.noop = true;
          break;
        case "l":
          req.list = true;
          break;
        case "n":
          req.nonInteractive = true;
          break;
        case "S":
        case "b":
          break;
        case "s":
          req.shell = true;
          break;
        case "u":
          req.user = value("u", rest);
          j = arg.length;
          break;
        case "V":
          req.version = true;
          break;
        case "v":
          req.validate = true;
          break;
        default:
          fail(`sudo: invalid option -- '${flag}'\n${USAGE}`);
      }
    }
  }
  // VAR=value before the command sets it for the command, as sudo allows for ALL rules
  while (i < argv.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(argv[i]!)) {
    const [k, v] = argv[i]!.split(/=(.*)/s, 2) as [string, string];
    req.env[k] = v;
    i++;
  }
  req.argv = argv.slice(i);
  return req;
}

function main(): void {
  const parsed = parseSudoArgs(process.argv.slice(2));
  if (parsed.help) fail(HELP, 0);
  if (parsed.version) fail("Sudo version 1.9.13p3 (sandbox stand-in)\n", 0);
  if (parsed.login && parsed.shell) fail(`sudo: you may not specify both the -i and -s options\n${USAGE}`);
  if (parsed.noop && !parsed.argv.length && !parsed.validate && !parsed.list) process.exit(0);
  if (!parsed.argv.length && !parsed.login && !parsed.shell && !parsed.list && !parsed.validate) {
    fail(USAGE);
  }
  const tty = process.stdin.isTTY && process.stdout.isTTY;
  const req: SudoRequest = {
    uid: process.getuid?.() ?? -1,
    argv: parsed.argv,
    env: { ...(process.env as Record<string, string>), ...parsed.env },
    cwd: process.cwd(),
    user: parsed.user,
    login: parsed.login,
    shell: parsed.shell,
    preserveEnv: parsed.preserveEnv,
    setHome: parsed.setHome,
    nonInteractive: parsed.nonInteractive,
    list: parsed.list,
    validate: parsed.validate,
    ...(tty ? { tty: { cols: process.stdout.columns || 80, rows: process.stdout.rows || 24 } } : {}),
  };
  const socket = net.connect(SUDO_SOCKET);
  socket.on("error", (err) => fail(`sudo: the sandbox's agent cannot be reached: ${err.message}\n`));
  let exitCode: number | undefined;
  const reader = new FrameReader((type, payload) => {
    if (type === Frame.stdout) process.stdout.write(payload);
    else if (type === Frame.stderr) process.stderr.write(payload);
    else if (type === Frame.exit) exitCode = (JSON.parse(payload.toString("utf8")) as { code: number }).code;
    else if (type === Frame.challenge) {
      // proves this process runs as the uid it claims: only that uid (or root) can read the file
      let proof = "";
      try {
        proof = readFileSync(payload.toString("utf8"), "utf8");
      } catch {
        // an empty proof fails
      }
      socket.write(frame(Frame.proof, proof));
    }
  });
  socket.on("data", (chunk: Buffer) => reader.push(chunk));
  socket.on("close", () => {
    if (tty) process.stdin.setRawMode(false);
    // stdout may still be flushing to a pipe: exit once it has
    process.stdout.write("", () => process.exit(exitCode ?? 1));
  });
  socket.write(frame(Frame.request, JSON.stringify(req)));
  if (tty) {
    process.stdin.setRawMode(true);
    process.stdout.on("resize", () =>
      socket.write(
        frame(Frame.resize, JSON.stringify({ cols: process.stdout.columns, rows: process.stdout.rows })),
      ),
    );
  }
  process.stdin.on("data", (chunk: Buffer) => socket.write(frame(Frame.stdin, chunk)));
  process.stdin.on("end", () => socket.write(frame(Frame.stdinEnd)));
  process.stdin.on("error", () => socket.write(frame(Frame.stdinEnd)));
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2"] as const) {
    process.on(signal, () => socket.write(frame(Frame.signal, signal)));
  }
}

if (require.main === module) main();
