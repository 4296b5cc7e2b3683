/**
 * Serves a page from a web server inside the sandbox and fetches it through the sandbox proxy,
 * addressing the port by the host `sandbox.getHost(port)`.
 */
import http from "node:http";
import { Sandbox } from "@x/sdk";
import { type ExampleOptions, proxyUrl } from "./shared.js";

/** GET `path` from the proxy with `Host: host`: how a browser reaches `http://<host>/`. */
function get(proxy: URL, host: string, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get(
      { host: proxy.hostname, port: proxy.port || 80, path, headers: { Host: host } },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          body += chunk;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on("error", reject);
  });
}

export async function main(options: ExampleOptions = {}): Promise<string> {
  const log = options.log ?? console.log;
  const port = 8000;
  const sandbox = await Sandbox.create({ ...options, timeoutMs: 60_000 });
  try {
    await sandbox.files.write("/home/user/site/index.html", "<h1>hello from the sandbox</h1>\n");
    await sandbox.commands.run(`python3 -m http.server ${port} --directory /home/user/site`, {
      background: true,
    });
    const host = sandbox.getHost(port);
    log(`serving on http://${host}/ through ${proxyUrl(options).origin}`);
    // The server takes a moment to listen; until then the proxy answers 502.
    const deadline = Date.now() + 20_000;
    for (;;) {
      const res = await get(proxyUrl(options), host, "/index.html");
      if (res.status === 200) {
        log(`fetched: ${res.body.trim()}`);
        return res.body;
      }
      if (Date.now() > deadline)
        throw new Error(`the server did not answer in time (last status ${res.status})`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  } finally {
    await sandbox.kill();
  }
}
