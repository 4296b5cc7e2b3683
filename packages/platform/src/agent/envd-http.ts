import http from "node:http";
import { Readable } from "node:stream";
import { createEnvdClient, ENVD_PORT, type EnvdClient } from "@x/envd-client";
import { limitStream, TooLargeError } from "../lib/bounded-read.js";

/** A sandbox's envd as the platform reaches it: the sandbox address, not the proxy. */
export interface EnvdTarget {
  address: string;
  accessToken: string;
}

/**
 * What the host reads of envd's answers. A sandbox's root can put its own server on envd's
 * port: a plain answer (/init, a unary call) is at most ENVD_ANSWER_MAX_BYTES, and each message
 * of a stream (process output: envd sends what one read of a pipe gives, 64 KiB at most) at
 * most ENVD_MESSAGE_MAX_BYTES; a stream as a whole is not capped, its readers keep only bounded
 * parts of it (see commands.ts).
 */
export const ENVD_ANSWER_MAX_BYTES = 1024 * 1024;
export const ENVD_MESSAGE_MAX_BYTES = 4 * 1024 * 1024;

/**
 * An agent for one request whose connection the host closes itself once the response has
 * been read. `agent: false` would send `Connection: close`, and envd would then close first:
 * its side of the connection would sit in TIME_WAIT in gVisor's network stack for 60 s, which
 * makes `runsc checkpoint` fail ("endpoint cannot be saved in connected state"). Closing from
 * the host leaves the TIME_WAIT on the host and envd's side closed.
 */
export function hostClosedAgent(): { agent: http.Agent; done(): void } {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  let closed = false;
  return {
    agent,
    done: () => {
      if (closed) return;
      closed = true;
      // after the response's own bookkeeping, so the socket is not reused or half-read
      setImmediate(() => agent.destroy());
    },
  };
}

/**
 * fetch over node:http with a connection of its own per request. Sandbox addresses are
 * reused, and the global fetch's pooled keep-alive sockets then race the next sandbox's first
 * request into a reset (seen under gVisor): a fresh connection each time has no such history.
 * The host closes that connection itself once the response ends (see hostClosedAgent): a
 * close from envd's side would block a later gVisor checkpoint for a minute.
 */
export const envdFetch: typeof fetch = async (input, init) => {
  const request = new Request(input, init);
  const url = new URL(request.url);
  const body = request.body ? Buffer.from(await request.arrayBuffer()) : undefined;
  const headers: Record<string, string> = {};
  request.headers.forEach((value, name) => {
    headers[name] = value;
  });
  const { agent, done } = hostClosedAgent();
  let answered = false;
  return new Promise<Response>((resolve, reject) => {
    const req = http.request(
      {
        hostname: url.hostname,
        port: url.port,
        path: `${url.pathname}${url.search}`,
        method: request.method,
        headers,
        agent,
        signal: request.signal,
      },
      (res) => {
        answered = true;
        res.once("end", done);
        res.once("close", done);
        const received = new Headers();
        for (const [name, value] of Object.entries(res.headers)) {
          for (const v of Array.isArray(value) ? value : value === undefined ? [] : [value])
            received.append(name, v);
        }
        const status = res.statusCode ?? 502;
        const bodiless = [204, 205, 304].includes(status);
        // read to its end even without a body, so 'end' fires and the host closes the connection
        if (bodiless) res.resume();
        const what = `envd's answer to ${request.method} ${url.pathname}`;
        const stream = bodiless
          ? null
          : bounded(Readable.toWeb(res) as ReadableStream<Uint8Array>, received, what);
        resolve(new Response(stream, { status, statusText: res.statusMessage, headers: received }));
      },
    );
    req.on("error", (err) => {
      done();
      reject(err);
    });
    req.on("close", () => {
      // a request that never got a response (aborted, failed) leaves nothing open either
      if (!answered) done();
    });
    req.end(body);
  });
};

/** The body with its limit: per message for a Connect stream, whole for anything else. */
function bounded(
  body: ReadableStream<Uint8Array>,
  headers: Headers,
  what: string,
): ReadableStream<Uint8Array> {
  const streaming = (headers.get("content-type") ?? "").startsWith("application/connect+");
  return streaming
    ? limitEnvelopes(body, ENVD_MESSAGE_MAX_BYTES, `a message of ${what}`)
    : limitStream(body, ENVD_ANSWER_MAX_BYTES, what);
}

/**
 * A Connect stream checked as it passes: each message is a flags byte, a 4-byte big-endian
 * length and that many bytes. A length past `maxBytes` errors the stream at its header, before
 * anyone gathers the message (the Connect client would, up to 4 GiB).
 */
export function limitEnvelopes(
  body: ReadableStream<Uint8Array>,
  maxBytes: number,
  what: string,
): ReadableStream<Uint8Array> {
  const header = new Uint8Array(5);
  let headerFilled = 0;
  let remaining = 0;
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        for (let i = 0; i < chunk.length; ) {
          if (remaining > 0) {
            const n = Math.min(remaining, chunk.length - i);
            i += n;
            remaining -= n;
            continue;
          }
          header[headerFilled++] = chunk[i++]!;
          if (headerFilled < header.length) continue;
          headerFilled = 0;
          remaining = new DataView(header.buffer).getUint32(1);
          if (remaining > maxBytes) return controller.error(new TooLargeError(what, maxBytes));
        }
        controller.enqueue(chunk);
      },
    }),
  );
}

export function envdClient(target: EnvdTarget): EnvdClient {
  return createEnvdClient({
    baseUrl: `http://${target.address}:${ENVD_PORT}`,
    accessToken: target.accessToken,
    fetch: envdFetch,
  });
}
