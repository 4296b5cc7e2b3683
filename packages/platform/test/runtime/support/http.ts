import { Agent, request } from "node:http";

export interface HttpResult {
  status: number;
  body: string;
}

/**
 * A GET on a connection of its own that the client closes after the response. Closing from
 * this side matters under gVisor: a connection the sandbox closed sits in TIME_WAIT inside it
 * for a minute, and gVisor cannot checkpoint while any endpoint is connected.
 */
export function httpGet(url: string, timeoutMs = 2000): Promise<HttpResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  return new Promise<HttpResult>((resolve, reject) => {
    const req = request(url, { agent, timeout: timeoutMs }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      res.on("error", reject);
    });
    req.on("timeout", () => req.destroy(new Error(`GET ${url} timed out after ${timeoutMs} ms`)));
    req.on("error", reject);
    req.end();
  }).finally(() => agent.destroy());
}

export async function getJson<T>(url: string, timeoutMs?: number): Promise<T> {
  const res = await httpGet(url, timeoutMs);
  if (res.status !== 200) throw new Error(`GET ${url}: ${res.status} ${res.body}`);
  return JSON.parse(res.body) as T;
}

/** Retries `fn` until it resolves or `timeoutMs` passes; rethrows the last failure. */
export async function waitFor<T>(fn: () => Promise<T>, timeoutMs: number, intervalMs = 10): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, intervalMs));
    }
  }
}
