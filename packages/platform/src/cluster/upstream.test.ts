/**
 * How a request sent on to a node failed, against real servers on loopback that fail at the
 * chosen moment: refused, reset before the whole body arrived, reset after it, silent, or
 * answering what is not HTTP. Only what the node cannot have acted on may be retried.
 */
import http from "node:http";
import net from "node:net";
import { PassThrough } from "node:stream";
import { classify, type Outcome, sendUpstream } from "./upstream.js";

const servers: net.Server[] = [];

afterEach(async () => {
  for (const s of servers.splice(0)) {
    (s as http.Server).closeAllConnections?.();
    await new Promise((resolve) => s.close(resolve));
  }
});

async function listening(server: net.Server): Promise<URL> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return new URL(`http://127.0.0.1:${(server.address() as net.AddressInfo).port}/v2/sandboxes`);
}

/** A port nothing listens on. */
async function closedPort(): Promise<URL> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return new URL(`http://127.0.0.1:${port}/v2/sandboxes`);
}

/** Sends `body` to `url` through sendUpstream, with the answer written to a response of a local server. */
async function send(
  url: URL,
  body: Buffer | PassThrough,
  o: { actsOnWholeRequest?: boolean; responseTimeoutMs?: number } = {},
): Promise<{ outcome: Outcome; status?: number; text?: string; headers?: http.IncomingHttpHeaders }> {
  let outcome: Outcome | undefined;
  const front = http.createServer((_req, res) => {
    void sendUpstream(
      {
        url,
        method: "POST",
        headers: {
          "content-type": "application/json",
          ...(Buffer.isBuffer(body) ? {} : { "transfer-encoding": "chunked" }),
        },
        body,
        actsOnWholeRequest: o.actsOnWholeRequest ?? true,
        connectTimeoutMs: 5000,
        responseTimeoutMs: o.responseTimeoutMs ?? 10_000,
      },
      res,
    ).then((result) => {
      outcome = result;
      if (!res.headersSent) res.end();
    });
  });
  const frontUrl = await listening(front);
  const answer = await fetch(frontUrl, { method: "POST" }).catch(() => undefined);
  const text = await answer?.text().catch(() => undefined);
  const headers: http.IncomingHttpHeaders = {};
  answer?.headers.forEach((value, name) => {
    headers[name] = value;
  });
  return { outcome: outcome!, status: answer?.status, text, headers };
}

const BODY = Buffer.from(JSON.stringify({ templateID: "base" }));

it("classifies by how far the request got", () => {
  expect(classify({ connected: false, sent: false }, true)).toBe("not-received");
  expect(classify({ connected: false, sent: false }, false)).toBe("not-received");
  expect(classify({ connected: true, sent: false }, true)).toBe("not-received");
  // an upload may be acted on as it arrives
  expect(classify({ connected: true, sent: false }, false)).toBe("may-have-acted");
  expect(classify({ connected: true, sent: true }, true)).toBe("may-have-acted");
  expect(classify({ connected: true, sent: true }, false)).toBe("may-have-acted");
});

it("passes an answer on, without this hop's headers", async () => {
  const node = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(201, { "content-type": "application/json", "x-node": "n1", "keep-alive": "timeout=42" });
      res.end('{"sandboxID":"s1"}');
    });
  });
  const sent = await send(await listening(node), BODY);
  expect(sent.outcome).toEqual({ kind: "answered", status: 201 });
  expect(sent.status).toBe(201);
  expect(sent.text).toBe('{"sandboxID":"s1"}');
  expect(sent.headers?.["x-node"]).toBe("n1");
  expect(sent.headers?.["keep-alive"]).not.toBe("timeout=42");
});

it("a node that refuses the connection never received the request", async () => {
  const sent = await send(await closedPort(), BODY);
  expect(sent.outcome).toEqual({ kind: "not-received", reason: "ECONNREFUSED" });
});

it("a reset before the whole JSON body was sent: never received; for an upload: may have acted", async () => {
  const resetOnFirstBytes = () =>
    net.createServer((socket) => socket.once("data", () => socket.resetAndDestroy()));
  for (const actsOnWholeRequest of [true, false]) {
    const body = new PassThrough();
    body.write('{"templateID":'); // the rest never comes
    const sent = await send(await listening(resetOnFirstBytes()), body, { actsOnWholeRequest });
    expect(sent.outcome.kind).toBe(actsOnWholeRequest ? "not-received" : "may-have-acted");
    body.destroy();
  }
});

it("a reset after the node read the whole request: it may have acted", async () => {
  const node = http.createServer((req) => {
    req.resume();
    req.on("end", () => req.socket.resetAndDestroy());
  });
  const sent = await send(await listening(node), BODY);
  expect(sent.outcome).toEqual({ kind: "may-have-acted", reason: "ECONNRESET" });
});

it("a node that says nothing in time after the whole request: it may have acted", async () => {
  const node = http.createServer((req) => req.resume());
  const sent = await send(await listening(node), BODY, { responseTimeoutMs: 200 });
  expect(sent.outcome).toEqual({ kind: "may-have-acted", reason: "ERESPONSETIMEOUT" });
});

it("an answer that is not HTTP: the node may have acted", async () => {
  const node = net.createServer((socket) => {
    socket.once("data", () => socket.end("this is not HTTP\r\n\r\n"));
  });
  const sent = await send(await listening(node), BODY);
  expect(sent.outcome.kind).toBe("may-have-acted");
});
