export { type ProxyCertificate, proxyCertificate, type TlsIdentity } from "./certificates.js";
export { type HttpsListener, listenHttps, reportedDomain } from "./https-listener.js";
export { registerProxyMetrics } from "./metrics.js";
export type { ProxyServer, ProxyServerOptions } from "./proxy-server.js";
export { createProxyServer } from "./proxy-server.js";
export type { ProxyTarget } from "./routing.js";
export { ENVD_PORT, parseTarget } from "./routing.js";
export type {
  ProxyErrorKind,
  ProxyMetrics,
  SandboxLocation,
  SandboxResolver,
} from "./types.js";
