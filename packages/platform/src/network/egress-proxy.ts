import net from "node:net";
import type { Logger } from "../lib/log.js";
import type { StoredEgressProxy } from "../model/network.js";
import { socksTunnel, splitAddress } from "./byop.js";
import { originalDestination } from "./conntrack.js";
import type { NewDecision } from "./egress-log.js";
import { addressVerdict, allowedDomain, type EgressRules } from "./egress-rules.js";
import { type OutboundConnect, outboundConnector } from "./outbound.js";
import { SNIFF_LIMIT, sniffName } from "./sniff.js";
import type { HeaderTransformer } from "./transform-proxy.js";
import { matchTransform } from "./transforms.js";

export interface EgressProxyOptions {
  /** The sandbox at a client address, with its rules; undefined for anyone else. */
  egressAt(ip: string): { id: string; rules: EgressRules } | undefined;
  /** The name this sandbox last resolved to this address (see NameMemory). */
  nameOf(sandboxId: string, ip: string): string | undefined;
  /** IPv4 addresses of a name, from the platform's upstream resolvers. */
  resolve(name: string): Promise<string[]>;
  /**
   * Why a sandbox may never reach this address (`private range`, `host address`, `sandbox
   * pool`, `cluster node`), or undefined when it may.
   */
  refusal(ip: string): string | undefined;
  record(decision: NewDecision): void;
  /** How connections out are opened (marked for the firewall); plain sockets by default. */
  connect?: OutboundConnect;
  /** Rewrites the requests of connections to names with header transforms. */
  transformer?: HeaderTransformer;
  log: Logger;
  /** How long a client that named nothing yet may take to send its first bytes. */
  firstBytesMs?: number;
  /** The same, when the address has a resolved name to fall back on (server-first protocols). */
  fallbackAfterMs?: number;
  connectTimeoutMs?: number;
  /** How long a client of a sandbox with its own SOCKS5 proxy may take to send its first bytes, on ports but 80 and 443. */
  socksFirstBytesMs?: number;
}

/** Why the last upstream of a connection could not be had (for the decision log). */
interface Failure {
  reason?: string;
}

/**
 * The egress proxy: TCP connections of sandboxes with allowed names, that their addresses
 * alone would refuse, are redirected here by the firewall. It reads the name the connection
 * is for (TLS SNI, HTTP Host, or the name the sandbox resolved the address from, for
 * protocols that name nothing), and only when that name is allowed dials it, by name through
 * the platform's resolvers (so /etc/hosts or a forged answer inside the sandbox gains nothing),
 * never to a private address. Every other connection is reset at once: nothing is ever
 * accepted and then left hanging.
 *
 * TCP to ports 80 and 443 of sandboxes with header transforms comes here too, whatever its
 * address: the same decision is taken (an allowed name, else the address rules), then a
 * connection to a name with a rule is intercepted (transform-proxy.ts) and any other is passed
 * through untouched, to the name it was allowed by or to the address it was sent to.
 *
 * Every TCP connection of a sandbox with its own SOCKS5 proxy (`network.egressProxy`) comes
 * here too: the same decision is taken, then what is let out (intercepted or not) goes through
 * that proxy, by name (ATYP=domain) when an allowed name decided, else to the address it was
 * let out by; a proxy that is down, refuses or is no SOCKS5 proxy gets the sandbox's
 * connection reset, never sent directly.
 */
export class EgressProxy {
  private server?: net.Server;
  private readonly sockets = new Set<net.Socket>();
  private port = 0;
  private readonly connect: OutboundConnect;

  constructor(private readonly o: EgressProxyOptions) {
    this.connect = o.connect ?? outboundConnector();
  }

  private forbidden(ip: string): boolean {
    return this.o.refusal(ip) !== undefined;
  }

  async listen(port = 0, host = "0.0.0.0"): Promise<number> {
    const server = net.createServer({ pauseOnConnect: false }, (socket) => void this.handle(socket));
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, host, () => resolve());
    });
    this.server = server;
    this.port = (server.address() as net.AddressInfo).port;
    return this.port;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private track(socket: net.Socket): void {
    this.sockets.add(socket);
    socket.once("close", () => this.sockets.delete(socket));
    socket.on("error", () => socket.destroy());
  }

  private async handle(client: net.Socket): Promise<void> {
    this.track(client);
    const clientIp = client.remoteAddress?.replace(/^::ffff:/, "") ?? "";
    const sandbox = this.o.egressAt(clientIp);
    const destination = sandbox
      ? await originalDestination({ ip: clientIp, port: client.remotePort ?? 0 }, this.port).catch(
          () => undefined,
        )
      : undefined;
    if (!sandbox || !destination) {
      client.resetAndDestroy();
      return;
    }
    const base = {
      sandboxId: sandbox.id,
      protocol: "tcp" as const,
      destination: destination.ip,
      port: destination.port,
    };
    const deny = (rule: string, name?: string) => {
      this.o.record({ ...base, ...(name ? { name } : {}), verdict: "denied", rule });
      if (!client.destroyed) client.resetAndDestroy();
    };

    // An address resolved from an allowed name is dialled by that name at once, while the
    // client's first bytes are awaited: a server that speaks first (SSH, SMTP, MySQL) then
    // answers without delay, and its greeting is what decides.
    const socks = sandbox.rules.socks;
    const failure: Failure = {};
    const resolvedName = this.o.nameOf(sandbox.id, destination.ip);
    const resolvedPattern = resolvedName ? allowedDomain(sandbox.rules, resolvedName) : undefined;
    const early =
      resolvedName && resolvedPattern
        ? socks
          ? this.tunnel(socks, resolvedName, destination.port, failure)
          : this.dial(resolvedName, destination.port, failure)
        : undefined;
    const spoke = early ? serverSpeaks(early) : undefined;
    const webPort = destination.port === 80 || destination.port === 443;
    const first = await this.firstBytes(
      client,
      early
        ? (this.o.fallbackAfterMs ?? 1000)
        : socks && !webPort
          ? (this.o.socksFirstBytesMs ?? 300)
          : (this.o.firstBytesMs ?? 5000),
      spoke?.promise,
    );
    spoke?.stop();
    const named = sniffName(first).name?.toLowerCase();
    // a connection that names a host is judged by that name; one that names none by the name
    // its address was resolved from
    const name = named ?? resolvedName;
    const pattern = name ? allowedDomain(sandbox.rules, name) : undefined;
    const upstream = name === resolvedName ? early : undefined;
    if (early && !upstream) void early.then((up) => up?.destroy());
    if (client.destroyed) return;
    // names decide first; a connection no name allows may still go by its address (sandboxes
    // with header transforms send every connection to ports 80 and 443 here)
    const byAddress = pattern ? undefined : this.addressDecision(sandbox.rules, destination.ip);
    if (!pattern && !byAddress?.allowed) {
      if (early) void early.then((up) => up?.destroy());
      if (byAddress?.always) return deny(byAddress.rule, name);
      if (!name)
        return deny("no allowed name: the connection names no host and its address was not resolved");
      return deny(`not an allowed name (${named ? "named in the connection" : "resolved"})`, name);
    }
    const allowedBy = pattern ? `allowOut ${pattern}` : byAddress!.rule;
    // through the sandbox's proxy by name (ATYP=domain, the proxy resolves it) only when the
    // name decided; a connection its address let out goes to that address, the one the rules
    // and the private ranges were checked against: a name it merely carries (a Host header or
    // SNI the sandbox wrote, a name the proxy's resolver may not know) is never sent
    const byName = (n: string | undefined) => (pattern !== undefined ? n : undefined);
    const via = socks ? `, via SOCKS5 ${socks.address}` : "";
    const tunnelFailed = (f: Failure, what = allowedBy) =>
      `${what}, but the SOCKS5 proxy ${socks?.address} failed: ${f.reason ?? "no answer"}`;
    const port = destination.port;
    const rule =
      named && (port === 80 || port === 443) && this.o.transformer
        ? matchTransform(sandbox.rules.transforms, named)
        : undefined;
    if (rule && named && this.o.transformer) {
      if (upstream) void upstream.then((up) => up?.destroy());
      const found: Failure = {};
      const ip = await this.publicAddress(named, pattern ? undefined : sandbox.rules, found);
      if (!ip)
        return deny(
          `${allowedBy}, transform ${rule.domain}, but ${named} has no allowed public address${found.reason ? ` (${found.reason})` : ""}`,
          named,
        );
      if (client.destroyed) return;
      this.o.record({
        ...base,
        name: named,
        verdict: "allowed",
        rule: `${allowedBy}, transform ${rule.domain}${via}`,
      });
      await this.o.transformer.serve(client, first, {
        sandboxId: sandbox.id,
        name: named,
        ip,
        port,
        tls: port === 443,
        base: { ...base, name: named },
        ...(socks
          ? {
              tunnel: async () => {
                const f: Failure = {};
                const up = await this.tunnel(socks, byName(named) ?? ip, port, f);
                if (!up) {
                  this.o.record({
                    ...base,
                    name: named,
                    verdict: "denied",
                    rule: tunnelFailed(f, `${allowedBy}, transform ${rule.domain}`),
                  });
                  throw new Error(`the SOCKS5 proxy ${socks.address} failed`);
                }
                up.resume();
                return up;
              },
            }
          : {}),
      });
      return;
    }
    const connected = await (upstream ??
      (socks
        ? this.tunnel(socks, byName(name) ?? destination.ip, port, failure)
        : pattern && name
          ? this.dial(name, port, failure)
          : this.dialAddress(destination.ip, port)));
    if (!connected) {
      if (socks) return deny(tunnelFailed(failure), name);
      return deny(
        pattern
          ? `allowOut ${pattern}, but ${name} has no public address that answers${failure.reason ? ` (${failure.reason})` : ""}`
          : `${allowedBy}, but no answer`,
        name,
      );
    }
    if (client.destroyed) {
      connected.destroy();
      return;
    }
    this.o.record({ ...base, ...(name ? { name } : {}), verdict: "allowed", rule: `${allowedBy}${via}` });
    connected.write(first);
    client.pipe(connected);
    connected.pipe(client);
    client.resume();
    // an upstream that fails resets the sandbox's side as well
    connected.once("close", (hadError) => {
      if (hadError && !client.destroyed) client.resetAndDestroy();
    });
    client.once("close", () => connected.destroy());
  }

  /**
   * The address rules' verdict on a destination; what no sandbox may reach (private ranges not
   * opened, this host, the pool, the cluster's nodes) refused first, `always`.
   */
  private addressDecision(rules: EgressRules, ip: string): { allowed: boolean; rule: string; always?: true } {
    const refused = this.o.refusal(ip);
    if (refused) return { allowed: false, rule: `${refused} (always denied)`, always: true };
    return addressVerdict(rules, ip);
  }

  /** The first of a name's addresses a sandbox may reach; why none, in `failure`. */
  private reachable(name: string, ips: readonly string[], failure?: Failure, rules?: EgressRules) {
    const ip = ips.find((a) => !this.forbidden(a) && (!rules || addressVerdict(rules, a).allowed));
    if (!ip && failure) {
      const refused = ips.map((a) => [a, this.o.refusal(a)] as const).find(([, why]) => why);
      failure.reason = refused
        ? `${name} resolves to ${refused[0]} (${refused[1]}), which sandboxes may never reach`
        : ips.length === 0
          ? `${name} has no address`
          : `${name}'s addresses are denied`;
    }
    return ip;
  }

  /**
   * A public address of a name through the platform's resolvers; with `rules` (the connection
   * was allowed by its address, not its name) only one the address rules allow.
   */
  private async publicAddress(
    name: string,
    rules: EgressRules | undefined,
    failure: Failure,
  ): Promise<string | undefined> {
    try {
      return this.reachable(name, await this.o.resolve(name), failure, rules);
    } catch (err) {
      this.o.log.debug({ name, err }, "egress proxy could not resolve a name");
      return undefined;
    }
  }

  /**
   * A connection to a name, by the platform's resolvers and never to a private address;
   * undefined when it has no such address or none answers in time. It is paused: nothing it
   * receives is read before it is piped.
   */
  private async dial(name: string, port: number, failure: Failure): Promise<net.Socket | undefined> {
    let ip: string | undefined;
    try {
      ip = this.reachable(name, await this.o.resolve(name), failure);
    } catch (err) {
      this.o.log.debug({ name, err }, "egress proxy could not resolve an allowed name");
    }
    if (!ip) return undefined;
    return this.dialAddress(ip, port);
  }

  /**
   * A connection to `host` (a name, sent as ATYP=domain, or an address) through a sandbox's
   * own SOCKS5 proxy, paused as dial's; undefined (and why, in `failure`) when the proxy's
   * address is not allowed, it does not answer, refuses, or speaks no SOCKS5. The proxy's name
   * is resolved again for each connection, and none of its addresses may be private.
   */
  private async tunnel(
    proxy: StoredEgressProxy,
    host: string,
    port: number,
    failure: Failure,
  ): Promise<net.Socket | undefined> {
    const { host: proxyHost } = splitAddress(proxy.address);
    let proxyIp: string | undefined;
    try {
      const ips = net.isIP(proxyHost) ? [proxyHost] : await this.o.resolve(proxyHost);
      const refused = ips.map((ip) => [ip, this.o.refusal(ip)] as const).find(([, why]) => why);
      if (refused) {
        failure.reason = `${proxyHost} resolves to ${refused[0]} (${refused[1]}), which sandboxes may never reach`;
        return undefined;
      }
      proxyIp = ips[0];
    } catch {
      failure.reason = `${proxyHost} does not resolve`;
      return undefined;
    }
    if (!proxyIp) return undefined;
    try {
      const socket = await socksTunnel({
        proxy,
        proxyIp,
        password: proxy.password,
        host,
        port,
        timeoutMs: this.o.connectTimeoutMs ?? 10_000,
        connect: this.connect,
      });
      socket.pause();
      this.track(socket);
      return socket;
    } catch (err) {
      failure.reason = (err as Error).message;
      return undefined;
    }
  }

  /** A connection to an address (paused, as dial's), undefined when it does not answer in time. */
  private dialAddress(ip: string, port: number): Promise<net.Socket | undefined> {
    // checked here too, whatever the caller decided: the last step before the host dials
    if (this.forbidden(ip)) return Promise.resolve(undefined);
    const upstream = this.connect(ip, port);
    upstream.pause();
    this.track(upstream);
    return new Promise((resolve) => {
      const timer = setTimeout(() => upstream.destroy(), this.o.connectTimeoutMs ?? 10_000);
      upstream.once("connect", () => {
        clearTimeout(timer);
        resolve(upstream);
      });
      upstream.once("close", () => {
        clearTimeout(timer);
        resolve(undefined);
      });
    });
  }

  /**
   * The client's first bytes: until they name a host (or cannot), `waitMs` passes, or `until`
   * settles (the server spoke first).
   */
  private firstBytes(client: net.Socket, waitMs: number, until?: Promise<unknown>): Promise<Buffer> {
    return new Promise((resolve) => {
      let data = Buffer.alloc(0);
      let finished = false;
      const done = () => {
        if (finished) return;
        finished = true;
        clearTimeout(timer);
        client.off("data", onData);
        client.off("close", done);
        client.pause();
        resolve(data);
      };
      const onData = (chunk: Buffer) => {
        data = Buffer.concat([data, chunk]);
        if (sniffName(data).complete || data.length >= SNIFF_LIMIT) done();
      };
      const timer = setTimeout(done, waitMs);
      client.on("data", onData);
      client.once("close", done);
      void until?.then(done, done);
    });
  }
}

/**
 * Settles when a server we dialled early sends its first bytes (or closes); `stop` takes the
 * listener off again, since a socket with a `readable` listener does not flow when piped.
 */
function serverSpeaks(upstream: Promise<net.Socket | undefined>): { promise: Promise<void>; stop(): void } {
  let stopped = false;
  let off = () => {};
  const promise = upstream.then(
    (socket) =>
      new Promise<void>((resolve) => {
        if (!socket || stopped) return resolve();
        const onReadable = () => resolve();
        socket.once("readable", onReadable);
        off = () => socket.off("readable", onReadable);
      }),
  );
  return {
    promise,
    stop: () => {
      stopped = true;
      off();
    },
  };
}
