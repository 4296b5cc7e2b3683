import { randomBytes } from "node:crypto";
import { chmod, chown, lstat, mkdir, rm, writeFile } from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import type { EnvdContext } from "../context.js";
import type { ManagedProcess, ProcessStreamItem } from "../process/manager.js";
import { groupNamesOf, lookupUser, lookupUserById, type User } from "../users.js";
import { Frame, FrameReader, frame, SUDO_SOCKET, type SudoRequest } from "./frames.js";
import { mayRunAs, sudoGrant } from "./policy.js";

/** sudo's secure_path on Debian: commands run as root never take the caller's PATH. */
const SECURE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
/** What sudo's env_reset keeps of the caller's environment. */
const KEPT_VARS = /^(TERM|COLORTERM|COLORS|DISPLAY|HOSTNAME|LANG|LANGUAGE|LC_.+|LS_COLORS|TZ|XAUTHORITY)$/;

/** Where the proofs of identity are written (see challenge()); /run is root's on every system. */
const CHALLENGE_DIR = "/run/x-sudo";
/** A caller that has not proven who it is by then is dropped. */
const PROOF_TIMEOUT_MS = 10_000;

/** Thrown for what sudo refuses: the message goes to the caller's stderr, sudo exits 1. */
class Refusal extends Error {}

/** How sudo hands a command to `shell -c` for -s and -i: every character but [A-Za-z0-9_$-] escaped. */
function sudoEscape(arg: string): string {
  return arg.replace(/[^A-Za-z0-9_$-]/g, (c) => `\\${c}`);
}

/**
 * Stands in for sudo where setuid cannot work: gVisor runs every process with no_new_privs, so
 * the real sudo refuses ("The no new privileges flag is set"). The sandbox's `sudo` is then a
 * small client of this server, which runs as root: the caller proves its uid (see challenge()),
 * /etc/sudoers' plain rules are applied, and the command runs as the target account with the
 * caller's input and output relayed.
 */
export class SudoServer {
  private readonly server = net.createServer((socket) => this.serve(socket));
  private listening = false;

  constructor(private readonly ctx: EnvdContext) {}

  async listen(): Promise<void> {
    if (this.listening) return;
    await new Promise<void>((resolve, reject) => {
      this.server.once("error", reject);
      this.server.listen(SUDO_SOCKET, () => {
        this.server.off("error", reject);
        resolve();
      });
    });
    this.listening = true;
  }

  /** Stops taking requests (before a checkpoint); commands already running go on. */
  async close(): Promise<void> {
    if (!this.listening) return;
    this.listening = false;
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private serve(socket: net.Socket): void {
    socket.on("error", () => undefined);
    let stage: "request" | "proof" | "running" = "request";
    let req: SudoRequest | undefined;
    let challenge: Promise<{ file: string; nonce: string }> | undefined;
    let proc: ManagedProcess | undefined;
    const pending: Array<[number, Buffer]> = [];
    const refuse = (err: unknown) => {
      const message =
        err instanceof Refusal ? err.message : `sudo: ${err instanceof Error ? err.message : String(err)}\n`;
      socket.write(frame(Frame.stderr, message));
      socket.end(frame(Frame.exit, JSON.stringify({ code: 1 })));
    };
    const timer = setTimeout(() => stage !== "running" && socket.destroy(), PROOF_TIMEOUT_MS);
    const reader = new FrameReader((type, payload) => {
      if (stage === "request") {
        if (type !== Frame.request) return socket.destroy();
        req = JSON.parse(payload.toString("utf8")) as SudoRequest;
        stage = "proof";
        challenge = this.challenge(req.uid);
        challenge.then(({ file }) => socket.write(frame(Frame.challenge, file)), refuse);
        return;
      }
      if (stage === "proof" && type === Frame.proof) {
        stage = "running";
        clearTimeout(timer);
        const asked = req!;
        challenge!
          .then(async ({ file, nonce }) => {
            await rm(file, { force: true });
            if (payload.toString("utf8") !== nonce)
              throw new Refusal("sudo: could not confirm who is asking\n");
            return this.start(socket, asked);
          })
          .then((p) => {
            proc = p;
            if (p) for (const [t, data] of pending.splice(0)) this.input(p, t, data);
          }, refuse);
        return;
      }
      if (proc) this.input(proc, type, payload);
      else pending.push([type, payload]);
    });
    socket.on("data", (chunk: Buffer) => reader.push(chunk));
    // the caller went away (killed, or its terminal closed): so does its command, as with a hangup
    socket.once("close", () => {
      clearTimeout(timer);
      if (proc && !proc.hasEnded) proc.signal("SIGHUP");
    });
  }

  /**
   * Who is asking cannot be learnt from the socket here (this gVisor answers SO_PEERCRED with
   * the asker's own credentials, envd's), so the caller proves its uid: envd writes a random
   * nonce into a file only that uid (and root) may read, in a directory only root may list.
   */
  private async challenge(uid: number): Promise<{ file: string; nonce: string }> {
    if (!Number.isInteger(uid) || uid < 0) throw new Refusal("sudo: bad request\n");
    await mkdir(CHALLENGE_DIR, { recursive: true, mode: 0o711 });
    const dir = await lstat(CHALLENGE_DIR);
    if (!dir.isDirectory() || dir.uid !== 0) throw new Error(`${CHALLENGE_DIR} is not root's directory`);
    await chmod(CHALLENGE_DIR, 0o711);
    const file = path.join(CHALLENGE_DIR, randomBytes(16).toString("hex"));
    const nonce = randomBytes(32).toString("hex");
    await writeFile(file, nonce, { mode: 0o600, flag: "wx" });
    await chown(file, uid, 0);
    return { file, nonce };
  }

  private input(proc: ManagedProcess, type: number, payload: Buffer): void {
    try {
      if (type === Frame.stdin) {
        if (proc.isPty) proc.writePty(payload);
        else void proc.writeStdin(payload, AbortSignal.timeout(60_000)).catch(() => undefined);
      } else if (type === Frame.stdinEnd && !proc.isPty) proc.closeStdin();
      else if (type === Frame.signal) proc.signal(payload.toString("utf8") as NodeJS.Signals);
      else if (type === Frame.resize && proc.isPty) {
        const { cols, rows } = JSON.parse(payload.toString("utf8")) as { cols: number; rows: number };
        proc.resize(cols, rows);
      }
    } catch {
      // input for a command that has ended, or a bad resize: nothing to tell the caller
    }
  }

  /**
   * Checks the caller's rights, starts the command and relays its output; returns it running
   * (or nothing, for -l and -v, which run no command).
   */
  private async start(socket: net.Socket, req: SudoRequest): Promise<ManagedProcess | undefined> {
    const { uid } = req;
    const caller = await lookupUserById(uid);
    if (!caller) throw new Refusal(`sudo: you do not exist in the passwd database (uid ${uid})\n`);
    const targetName = req.user ?? "root";
    const target = await lookupUser(targetName).catch(() => {
      throw new Refusal(`sudo: unknown user ${targetName}\n`);
    });
    const host = os.hostname();
    if (uid !== 0) {
      const grant = await sudoGrant(caller.name, await groupNamesOf(caller));
      if (!grant.allowed) throw new Refusal(`${caller.name} is not in the sudoers file.\n`);
      if (req.list) {
        socket.write(
          frame(
            Frame.stdout,
            `User ${caller.name} may run the following commands on ${host}:\n${grant.rules.map((r) => `    ${r}\n`).join("")}`,
          ),
        );
      }
      if (!grant.nopasswd) throw new Refusal("sudo: a password is required\n");
      if (!mayRunAs(grant, target.name)) {
        const what = req.argv.length ? req.argv.join(" ") : "a shell";
        throw new Refusal(
          `Sorry, user ${caller.name} is not allowed to execute '${what}' as ${target.name} on ${host}.\n`,
        );
      }
    }
    if (req.list || req.validate) {
      socket.end(frame(Frame.exit, JSON.stringify({ code: 0 })));
      return undefined;
    }
    const { cmd, args, cwd, env } = commandOf(req, caller, target);
    const { process: proc, subscription } = await this.ctx.processes
      .start({
        config: { cmd, args, envs: env, cwd },
        user: target,
        pty: req.tty,
        stdin: !req.tty,
        unlisted: true,
      })
      .catch((err: unknown) => {
        const reason = err instanceof Error ? err.message : String(err);
        throw new Refusal(
          /not found/.test(reason) ? `sudo: ${cmd}: command not found\n` : `sudo: ${reason}\n`,
        );
      });
    void (async () => {
      const never = new AbortController().signal;
      for (;;) {
        const item: ProcessStreamItem | undefined = await subscription.next(never, 60_000);
        if (!item) continue;
        if (item.type === "data") {
          socket.write(frame(item.stream === "stderr" ? Frame.stderr : Frame.stdout, Buffer.from(item.data)));
          continue;
        }
        const signo = item.signal ? (os.constants.signals[item.signal as NodeJS.Signals] ?? 0) : 0;
        const code = item.exited ? item.exitCode : 128 + signo;
        socket.end(frame(Frame.exit, JSON.stringify({ code })));
        subscription.close();
        return;
      }
    })();
    return proc;
  }
}

/** The program, arguments, directory and environment sudo would run for `req`. */
function commandOf(
  req: SudoRequest,
  caller: User,
  target: User,
): { cmd: string; args: string[]; cwd: string; env: Record<string, string> } {
  const kept = Object.fromEntries(Object.entries(req.env).filter(([k]) => KEPT_VARS.test(k)));
  const env: Record<string, string> = {
    ...(req.preserveEnv ? req.env : kept),
    PATH: SECURE_PATH,
    HOME: req.preserveEnv && !req.setHome ? (req.env.HOME ?? target.home) : target.home,
    SHELL: target.shell,
    USER: target.name,
    LOGNAME: target.name,
    MAIL: `/var/mail/${target.name}`,
    SUDO_USER: caller.name,
    SUDO_UID: String(caller.uid),
    SUDO_GID: String(caller.gid),
    SUDO_COMMAND: req.argv.join(" ") || target.shell,
  };
  const joined = req.argv.map(sudoEscape).join(" ");
  if (req.login) {
    return { cmd: target.shell, args: ["-l", ...(joined ? ["-c", joined] : [])], cwd: target.home, env };
  }
  if (req.shell) {
    const shell = req.env.SHELL || target.shell;
    return { cmd: shell, args: joined ? ["-c", joined] : [], cwd: req.cwd, env };
  }
  const [cmd, ...args] = req.argv;
  if (!cmd) throw new Refusal("usage: sudo [-nEHis] [-u user] command [args...]\n");
  return { cmd, args, cwd: req.cwd, env };
}
