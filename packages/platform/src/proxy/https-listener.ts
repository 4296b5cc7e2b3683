import type net from "node:net";
import tls from "node:tls";
import type { TlsIdentity } from "./certificates.js";
import type { ProxyServer } from "./proxy-server.js";

export interface HttpsListener {
  /** The bound port (the one chosen when asked for 0). */
  readonly port: number;
  /** Stops listening and ends every connection, handshakes under way included. */
  close(): Promise<void>;
}

/**
 * The sandbox domain as clients are told it (`getHost(port)` is `{port}-{id}.{domain}`): the
 * client opens `https://{port}-{id}.{domain}`, so with HTTPS on a port other than 443 the
 * domain carries that port.
 */
export function reportedDomain(domain: string, https: HttpsListener | undefined): string {
  return https && https.port !== 443 ? `${domain}:${https.port}` : domain;
}

/**
 * The proxy's HTTPS port: `https://{port}-{id}.{domain}`, the URLs the public client builds
 * when it is given no `E2B_SANDBOX_URL`. TLS ends here and the decrypted connection goes to
 * the proxy's own HTTP/1.1 or HTTP/2 server, as ALPN chose, so routing, tokens, auto-resume
 * and metrics are the plain port's.
 */
export function listenHttps(
  proxy: ProxyServer,
  o: { port: number; host: string; identity: TlsIdentity },
): Promise<HttpsListener> {
  const server = tls.createServer(
    { cert: o.identity.cert, key: o.identity.key, ALPNProtocols: ["h2", "http/1.1"], allowHalfOpen: true },
    (socket) => proxy.serveDecrypted(socket),
  );
  // a client that does not trust the certificate, or speaks no TLS, is its own problem
  server.on("tlsClientError", (_err, socket) => socket.destroy());
  const connections = new Set<net.Socket>();
  server.on("connection", (socket: net.Socket) => {
    connections.add(socket);
    socket.once("close", () => connections.delete(socket));
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(o.port, o.host, () => {
      server.off("error", reject);
      resolve({
        port: (server.address() as net.AddressInfo).port,
        close: () => {
          const closed = new Promise<void>((done) => server.close(() => done()));
          for (const socket of connections) socket.destroy();
          return closed;
        },
      });
    });
  });
}
