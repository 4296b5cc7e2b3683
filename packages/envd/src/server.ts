import http from "node:http";
import type http2 from "node:http2";
import net from "node:net";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { Filesystem, Process } from "@x/envd-client";
import { accessTokenInterceptor } from "./auth.js";
import { Containment, type ContainmentSettings } from "./containment/containment.js";
import { createLogger, type EnvdContext, IdNames } from "./context.js";
import { createFilesystemService } from "./filesystem/service.js";
import { createHttpHandler } from "./http/routes.js";
import { ProcessManager } from "./process/manager.js";
import { createProcessService } from "./process/service.js";
import { arrivalValues } from "./server-timing.js";
import { createState, type EnvdState } from "./state.js";
import { SudoServer } from "./sudo/server.js";

export interface EnvdServerOptions {
  port: number;
  host?: string;
  state?: Partial<Omit<EnvdState, "version">>;
  /** Serve the sandbox's `sudo` stand-in (where setuid cannot work: gVisor). */
  sudo?: boolean;
  /** Keep what runs here from taking the sandbox down (see Containment); off outside sandboxes. */
  containment?: ContainmentSettings;
}

/** The first bytes of every HTTP/2 connection with prior knowledge (h2c). */
const H2_PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");

/**
 * envd's listener: Connect (HTTP/1.1 and h2c on the same port, told apart by the
 * connection preface) plus the plain-HTTP file routes. It can be quiesced, closing every
 * socket so the sandbox can be checkpointed, and woken again with processes intact.
 */
export class EnvdServer {
  readonly context: EnvdContext;
  private readonly listener: net.Server;
  private readonly sockets = new Set<net.Socket>();
  private readonly h1: http.Server;
  private readonly handler: Parameters<typeof http.createServer>[1] &
    Parameters<typeof http2.createServer>[1];
  /** Created on the first h2c connection: loading node:http2 costs ~30 ms of start-up. */
  private h2: http2.Http2Server | undefined;
  private listening = false;
  private holdOpen: NodeJS.Timeout | undefined;
  private readonly sudo: SudoServer | undefined;
  private readonly containment: Containment | undefined;

  constructor(private readonly options: EnvdServerOptions) {
    const state = createState(options.state);
    const log = createLogger();
    this.containment = options.containment ? new Containment(options.containment, log) : undefined;
    this.context = {
      state,
      names: new IdNames(),
      processes: new ProcessManager(state, this.containment),
      log,
    };
    this.handler = connectNodeAdapter({
      routes: (router) => {
        router.service(Filesystem, createFilesystemService(this.context));
        router.service(Process, createProcessService(this.context));
      },
      interceptors: [accessTokenInterceptor(state)],
      contextValues: arrivalValues,
      requireConnectProtocolHeader: true,
      // Sandbox traffic is local: gzip would cap streaming output at zlib speed (~35 MB/s).
      acceptCompression: [],
      fallback: createHttpHandler(this.context),
    });
    this.h1 = http.createServer(this.handler);
    this.h1.keepAliveTimeout = 65_000;
    this.listener = net.createServer((socket) => this.accept(socket));
    if (options.sudo) this.sudo = new SudoServer(this.context);
  }

  private accept(socket: net.Socket): void {
    this.sockets.add(socket);
    socket.once("close", () => this.sockets.delete(socket));
    socket.setNoDelay(true);
    // Until the first bytes tell which server takes it, nobody else listens for its errors: a
    // client that resets the connection first (a port probe) must not end envd.
    const early = () => socket.destroy();
    socket.on("error", early);
    socket.once("data", (chunk: Buffer) => {
      socket.off("error", early);
      socket.pause();
      socket.unshift(chunk);
      const n = Math.min(chunk.length, H2_PREFACE.length);
      const isH2 = chunk.subarray(0, n).equals(H2_PREFACE.subarray(0, n));
      (isH2 ? this.http2Server() : this.h1).emit("connection", socket);
      // http2 takes the pre-read bytes and then reads the handle itself: resuming would steal them.
      if (!isH2) socket.resume();
    });
  }

  private http2Server(): http2.Http2Server {
    this.h2 ??= process.getBuiltinModule("node:http2").createServer({}, this.handler);
    return this.h2;
  }

  get port(): number {
    const address = this.listener.address();
    return typeof address === "object" && address ? address.port : this.options.port;
  }

  async listen(): Promise<void> {
    if (this.listening) return;
    await new Promise<void>((resolve, reject) => {
      this.listener.once("error", reject);
      this.listener.listen(this.options.port, this.options.host ?? "0.0.0.0", () => {
        this.listener.off("error", reject);
        resolve();
      });
    });
    await this.sudo?.listen();
    this.containment?.start();
    this.listening = true;
  }

  /**
   * Closes every connection and the listener; processes keep running. Connections are reset
   * (RST), not closed: a graceful close from this side leaves the connection in TIME_WAIT in
   * gVisor's network stack for 60 s, and gVisor refuses to checkpoint while it is there. The
   * resets go out before the listener closes, so a refused connection attempt tells the host
   * that no connection of envd's is left.
   */
  async quiesce(): Promise<void> {
    if (!this.listening) return;
    this.listening = false;
    // With its listener closed, Node would exit if nothing else were pending: hold it open.
    this.holdOpen ??= setInterval(() => undefined, 1 << 30);
    const gone = [...this.sockets].map(
      (socket) =>
        new Promise<void>((resolve) => (socket.closed ? resolve() : socket.once("close", () => resolve()))),
    );
    for (const socket of this.sockets) {
      if (socket.destroyed) continue;
      // gVisor can refuse the reset (EINVAL) and Node reports that as an 'error' event: with
      // no listener that would end envd, and the sandbox with it. The socket is gone either way.
      socket.on("error", () => undefined);
      // resetAndDestroy needs the TCP handle; a socket already handed to http2 may lack it
      try {
        socket.resetAndDestroy();
      } catch {
        socket.destroy();
      }
    }
    const closed = new Promise<void>((resolve) => this.listener.close(() => resolve()));
    await Promise.all([closed, this.sudo?.close(), ...gone]);
  }

  /** Open connections (for tests and diagnostics). */
  get connections(): number {
    return this.sockets.size;
  }

  /** Re-opens the listener after a quiesce (for example after a restore). */
  async wake(): Promise<void> {
    await this.listen();
    clearInterval(this.holdOpen);
    this.holdOpen = undefined;
  }

  async close(): Promise<void> {
    this.containment?.stop();
    await this.quiesce();
    this.context.processes.killAll();
  }
}
