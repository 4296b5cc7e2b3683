import http from "node:http";
import type net from "node:net";
import type { ProxyTarget } from "./routing.js";
import type { ProxyErrorKind } from "./types.js";

/** An answer of the proxy's own: JSON `{code, message}` (with `sandboxID` and `port` where they apply). */
export interface ErrorReply {
  status: number;
  kind: ProxyErrorKind;
  body: { code: number; message: string; sandboxID?: string; sandboxId?: string; port?: number };
}

export const TRAFFIC_TOKEN_HEADER = "e2b-traffic-access-token";

/** 403 for a private sandbox's port without its traffic access token: the hosted service's bodies. */
export function trafficTokenReply(sandboxId: string, sent: boolean): ErrorReply {
  const why = sent
    ? `Provided token in header '${TRAFFIC_TOKEN_HEADER}' is invalid`
    : `Token header '${TRAFFIC_TOKEN_HEADER}' is missing`;
  return {
    status: 403,
    kind: "forbidden",
    body: { sandboxId, message: `Sandbox is secured with traffic access token. ${why}`, code: 403 },
  };
}

/** 403 for traffic that would wake a private paused sandbox without its token. */
export function resumeForbiddenReply(sandboxId: string): ErrorReply {
  return {
    status: 403,
    kind: "forbidden",
    body: {
      sandboxId,
      message:
        "This sandbox can't be resumed with the credentials provided. Check your access token and try again.",
      code: 403,
    },
  };
}

/** 429 for a client whose signed file URLs keep matching no sandbox: each costs a look at every token. */
export function signedMissesReply(): ErrorReply {
  return {
    status: 429,
    kind: "rate_limited",
    body: {
      code: 429,
      message:
        "Too many signed file URLs from this address matched no running sandbox; check the signature (or name the sandbox with E2b-Sandbox-Id) and try again in a few seconds",
    },
  };
}

/** 400 for a request that names no sandbox. */
export function noRouteReply(domain: string | undefined): ErrorReply {
  const host = `{port}-{sandboxID}.${domain ?? "{domain}"}`;
  return {
    status: 400,
    kind: "no_route",
    body: {
      code: 400,
      message: `No sandbox in the request: send the Host "${host}" or the headers E2b-Sandbox-Id and E2b-Sandbox-Port`,
    },
  };
}

/**
 * 502 for a sandbox that is unknown, killed or paused: e2b's `isRunning()` reads 502 as "not
 * running". The id goes under both the seed's key (`sandboxID`) and E2B's (`sandboxId`).
 */
export function notRunning(sandboxID: string, kind: ProxyErrorKind, message: string): ErrorReply {
  return { status: 502, kind, body: { code: 502, message, sandboxID, sandboxId: sandboxID } };
}

/** 502 for a sandbox the platform does not know or that is gone: E2B's body, word for word. */
export function notFoundReply(sandboxID: string): ErrorReply {
  return notRunning(sandboxID, "sandbox_not_found", "The sandbox was not found");
}

/** 502 for a sandbox that stopped working by itself (state `error`), saying what to do. */
export function brokenReply(sandboxID: string, reason: string): ErrorReply {
  return notRunning(
    sandboxID,
    "sandbox_broken",
    `The sandbox ${sandboxID} stopped working: ${reason}. Connect to it (Sandbox.connect) to boot it afresh from its files, or kill it`,
  );
}

/** 502 for a sandbox whose node stopped answering (beyond one machine): it may come back with its node. */
export function lostReply(sandboxID: string, reason: string): ErrorReply {
  return notRunning(
    sandboxID,
    "sandbox_lost",
    `The sandbox ${sandboxID} is lost: ${reason}. It is back when its node is; kill it to forget it`,
  );
}

/** 502 for a port of a running sandbox that refuses or cannot be reached. */
export function upstreamErrorReply(target: ProxyTarget, err: NodeJS.ErrnoException): ErrorReply {
  const { sandboxID, port } = target;
  if (err.code === "ECONNREFUSED") {
    const message = `The sandbox ${sandboxID} is running but nothing is listening on port ${port}`;
    return { status: 502, kind: "port_closed", body: { code: 502, message, sandboxID, port } };
  }
  const message = `The sandbox ${sandboxID} is not reachable on port ${port} (${err.code ?? err.message})`;
  return { status: 502, kind: "upstream_unreachable", body: { code: 502, message, sandboxID, port } };
}

/** Writes an error reply on a raw socket (an upgrade request's) and ends the connection. */
export function writeRawReply(socket: net.Socket, error: ErrorReply): void {
  if (socket.destroyed) return;
  const body = JSON.stringify(error.body);
  socket.write(
    `HTTP/1.1 ${error.status} ${http.STATUS_CODES[error.status]}\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
  socket.destroySoon();
}

/** Raw header pairs as an HTTP/1.1 header block. */
export function headerBlock(raw: readonly string[]): string {
  let block = "";
  for (let i = 0; i < raw.length; i += 2) block += `${raw[i]}: ${raw[i + 1]}\r\n`;
  return block;
}
