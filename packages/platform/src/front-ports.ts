/**
 * The platform's listening sockets, bound before anything else starts: a port that is taken
 * costs nothing (no sandbox booted, no firewall table made), and the start fails at once with
 * the reason. Until the platform is ready the API answers 503 with `Retry-After`, and sandbox
 * traffic waits for the orchestrator (a restart keeps adopted sandboxes reachable as soon as
 * they are adopted, rather than refusing connections for seconds).
 */
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import { sendError } from "./api/server-io.js";
import type { PlatformConfig } from "./config.js";
import { listen } from "./lib/http.js";
import type { Logger } from "./lib/log.js";
import type { Upstream } from "./network/dns-forwarder.js";
import { DomainDns, reachableAddress } from "./network/domain-dns.js";
import {
  createProxyServer,
  type HttpsListener,
  listenHttps,
  type ProxyServer,
  reportedDomain,
  type SandboxResolver,
  type TlsIdentity,
} from "./proxy/index.js";

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

export interface FrontPorts {
  apiPort: number;
  proxy: ProxyServer;
  https?: HttpsListener;
  dnsListenPort?: number;
  /** The domain the API tells clients: with the HTTPS port when it is not 443. */
  publicDomain: string;
  /** The platform is ready: the API serves with `handler`, traffic goes to `resolver`. */
  serve(handler: Handler, resolver: SandboxResolver): void;
  /** Stops listening and ends every connection; traffic still waiting for the platform fails. */
  close(): Promise<void>;
}

export async function bindFrontPorts(o: {
  config: PlatformConfig;
  tlsIdentity?: TlsIdentity;
  dnsListen?: Upstream;
  log: Logger;
}): Promise<FrontPorts> {
  const { config, log } = o;
  let handler: Handler | undefined;
  const api = http.createServer((req, res) => {
    if (handler) return handler(req, res);
    sendError(res, 503, "the platform is starting; try again in a moment", { "Retry-After": "1" });
  });
  api.keepAliveTimeout = 65_000;
  let serving: SandboxResolver | undefined;
  let ready!: (resolver: SandboxResolver) => void;
  let failed!: (err: unknown) => void;
  const resolver = new Promise<SandboxResolver>((resolve, reject) => {
    ready = resolve;
    failed = reject;
  });
  resolver.catch(() => undefined); // a start that failed with no traffic waiting
  // once ready, straight to the orchestrator (resolve runs on every request); until then, wait
  const via = <T>(use: (r: SandboxResolver) => Promise<T>): Promise<T> =>
    serving ? use(serving) : resolver.then(use);
  const proxy = createProxyServer({
    domain: config.domain,
    log: log.child({ component: "proxy" }),
    resolver: {
      resolve: (id) => via((r) => r.resolve(id)),
      resume: (id) => via(async (r) => r.resume?.(id)),
      checkHealth: (id) => via(async (r) => (await r.checkHealth?.(id)) ?? false),
      resolveSigned: (matches) => via(async (r) => r.resolveSigned?.(matches)),
    },
  });
  const bound: { close(): unknown }[] = [];
  let closed: Promise<void> | undefined;
  // once, however many parts of a stop ask for it
  const close = (): Promise<void> =>
    (closed ??= (async () => {
      failed(new Error("the platform stopped"));
      await Promise.all(bound.map((b) => b.close()));
      api.closeAllConnections();
    })());
  try {
    const apiPort = await listen(api, config.apiPort, config.host);
    bound.push({ close: () => new Promise<void>((resolve) => api.close(() => resolve())) });
    await proxy.listen(config.proxyPort, config.host);
    bound.push(proxy);
    const https =
      o.tlsIdentity &&
      (await listenHttps(proxy, { port: config.tlsPort!, host: config.host, identity: o.tlsIdentity }));
    if (https) bound.push(https);
    const domainDns =
      o.dnsListen &&
      new DomainDns({
        domain: config.domain,
        address: reachableAddress(config.host), // the proxy's, as clients reach it
        log: log.child({ component: "domain-dns" }),
      });
    const dnsListenPort = domainDns && (await domainDns.listen(o.dnsListen!.port, o.dnsListen!.host));
    if (domainDns) bound.push(domainDns);
    return {
      apiPort,
      proxy,
      ...(https ? { https } : {}),
      ...(dnsListenPort !== undefined ? { dnsListenPort } : {}),
      publicDomain: reportedDomain(config.domain, https),
      serve: (h, r) => {
        handler = h;
        serving = r;
        ready(r);
      },
      close,
    };
  } catch (err) {
    await close();
    throw portProblem(err, config);
  }
}

/** `listen EADDRINUSE` said with the port and the setting that chose it. */
function portProblem(err: unknown, config: PlatformConfig): unknown {
  const e = err as NodeJS.ErrnoException & { port?: number };
  if (e?.code !== "EADDRINUSE" && e?.code !== "EACCES") return err;
  const which =
    e.syscall === "bind" // UDP
      ? "--dns-listen"
      : e.port === config.apiPort
        ? "--port (the API)"
        : e.port === config.proxyPort
          ? "--proxy-port (the sandbox proxy)"
          : e.port === config.tlsPort
            ? "--tls-port (the proxy's HTTPS)"
            : "its setting";
  const why = e.code === "EADDRINUSE" ? "is in use (another x serve?)" : "may not be bound by this user";
  return new Error(`port ${e.port ?? "?"} on ${config.host} ${why}: choose another with ${which}`, {
    cause: err,
  });
}
