import type http from "node:http";
import type http2 from "node:http2";
import type net from "node:net";
import tls from "node:tls";

/** Headers that describe one connection rather than the message (RFC 9110 7.6.1), never forwarded. */
function isHopByHop(lower: string): boolean {
  switch (lower) {
    case "connection":
    case "keep-alive":
    case "proxy-connection":
    case "transfer-encoding":
    case "te":
    case "upgrade":
    case "proxy-authenticate":
    case "proxy-authorization":
    case "http2-settings":
      return true;
    default:
      return false;
  }
}

/** Extra hop-by-hop names a sender listed in `Connection` (rare, so looked for only when present). */
function listedInConnection(value: string): Set<string> | undefined {
  let listed: Set<string> | undefined;
  for (const token of value.split(",")) {
    const name = token.trim().toLowerCase();
    if (!name || name === "close" || name === "keep-alive" || name === "upgrade") continue;
    listed ??= new Set();
    listed.add(name);
  }
  return listed;
}

export interface ForwardingInfo {
  /** The client's address as this proxy saw it. */
  clientAddress: string;
  /** Keep and extend the client's `X-Forwarded-*` (only behind a balancer that sets them). */
  trusted: boolean;
  /** Keep `Upgrade` and send `Connection: Upgrade`. */
  upgrade: boolean;
  /** The Host to send instead of the client's (a sandbox's `maskRequestHost`). */
  host?: string;
  /** How the client reached the proxy (default http). */
  proto?: "http" | "https";
}

/**
 * Request headers for the sandbox from a client's raw header list (the `rawHeaders` layout:
 * name, value, name, value): original case and order, minus hop-by-hop headers and `Expect`
 * (the proxy already answered it), plus `X-Forwarded-For/Proto/Host`.
 */
export function upstreamRequestHeaders(raw: readonly string[], info: ForwardingInfo): string[] {
  const out: string[] = [];
  let host: string | undefined;
  let forwardedFor: string | undefined;
  let forwardedProto: string | undefined;
  let forwardedHost: string | undefined;
  let listed: Set<string> | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    const value = raw[i + 1]!;
    const lower = name.toLowerCase();
    switch (lower) {
      case "host":
        host = value;
        if (info.host === undefined) break;
        out.push(name, info.host);
        continue;
      case "connection":
        listed = listedInConnection(value);
        continue;
      case "upgrade":
        if (info.upgrade) break;
        continue;
      case "expect":
        continue;
      case "x-forwarded-for":
        if (info.trusted) forwardedFor = forwardedFor ? `${forwardedFor}, ${value}` : value;
        continue;
      case "x-forwarded-proto":
        if (info.trusted) forwardedProto ??= value;
        continue;
      case "x-forwarded-host":
        if (info.trusted) forwardedHost ??= value;
        continue;
      default:
        if (isHopByHop(lower)) continue;
    }
    out.push(name, value);
  }
  if (listed) {
    for (let i = out.length - 2; i >= 0; i -= 2) if (listed.has(out[i]!.toLowerCase())) out.splice(i, 2);
  }
  if (info.upgrade) out.push("Connection", "Upgrade");
  out.push(
    "X-Forwarded-For",
    forwardedFor ? `${forwardedFor}, ${info.clientAddress}` : info.clientAddress,
    "X-Forwarded-Proto",
    forwardedProto ?? info.proto ?? "http",
  );
  const shownHost = forwardedHost ?? host;
  if (shownHost) out.push("X-Forwarded-Host", shownHost);
  return out;
}

/** An HTTP/2 request's headers in the raw layout for an HTTP/1.1 upstream: `:authority` becomes `Host`. */
export function rawFromH2(headers: http2.IncomingHttpHeaders): string[] {
  const raw: string[] = [];
  const authority = headers[":authority"];
  if (authority && headers.host === undefined) raw.push("host", authority);
  for (const name of Object.keys(headers)) {
    if (name.charCodeAt(0) === 58 /* ":" */) continue;
    const value = headers[name];
    if (typeof value === "string") raw.push(name, value);
    else if (value) for (const item of value) raw.push(name, item);
  }
  return raw;
}

/** A sandbox's response headers for an HTTP/1.1 client, in their original case and order. */
export function downstreamRawHeaders(raw: readonly string[]): string[] {
  const out: string[] = [];
  let listed: Set<string> | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    const lower = name.toLowerCase();
    if (lower === "connection") listed = listedInConnection(raw[i + 1]!);
    if (!isHopByHop(lower)) out.push(name, raw[i + 1]!);
  }
  if (listed) {
    for (let i = out.length - 2; i >= 0; i -= 2) if (listed.has(out[i]!.toLowerCase())) out.splice(i, 2);
  }
  return out;
}

/** A sandbox's response headers for an HTTP/2 client (which rejects connection-specific ones). */
export function downstreamH2Headers(res: http.IncomingMessage): http2.OutgoingHttpHeaders {
  const out: http2.OutgoingHttpHeaders = { ":status": res.statusCode };
  const listed = res.headers.connection ? listedInConnection(res.headers.connection) : undefined;
  for (const name of Object.keys(res.headers)) {
    if (!isHopByHop(name) && !listed?.has(name)) out[name] = res.headers[name];
  }
  return out;
}

/** The client's address as forwarded headers carry it (IPv4-mapped IPv6 unwrapped). */
export function clientAddress(socket: net.Socket | undefined): string {
  const address = socket?.remoteAddress ?? "";
  return address.startsWith("::ffff:") ? address.slice(7) : address;
}

/** How the client reached the proxy: over its HTTPS port or in plain HTTP. */
export function clientProto(socket: net.Socket | undefined): "http" | "https" {
  return socket instanceof tls.TLSSocket ? "https" : "http";
}
