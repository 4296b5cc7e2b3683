import http from "node:http";
import { Readable } from "node:stream";
import { createEnvdClient, ENVD_PORT, type EnvdClient } from "@x/envd-client";

/** A sandbox's envd as the platform reaches it: the sandbox address, not the proxy. */
export interface EnvdTarget {
  address: string;
  accessToken: string;
}

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
        const stream = bodiless ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>);
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

export function envdClient(target: EnvdTarget): EnvdClient {
  return createEnvdClient({
    baseUrl: `http://${target.address}:${ENVD_PORT}`,
    accessToken: target.accessToken,
    fetch: envdFetch,
  });
}
