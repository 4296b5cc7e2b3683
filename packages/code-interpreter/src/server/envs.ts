import http from "node:http";

/** One kept-alive connection to envd: every context's first run asks it. */
const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });

/**
 * The sandbox's environment variables, as its create gave them: envd's `GET /envs`. The server
 * starts before a sandbox gets its identity (a warm pool member runs it already), so a context
 * asks envd on its first execution rather than trusting its own environment. node:http rather
 * than fetch: fetch's first call loads undici, ~80 ms that a user's first runCode would pay.
 */
export function sandboxEnvs(
  envdUrl: string,
  accessToken: string | undefined,
): Promise<Record<string, string>> {
  return new Promise((resolve, reject) => {
    const req = http.get(
      `${envdUrl}/envs`,
      { agent, headers: accessToken ? { "X-Access-Token": accessToken } : {}, timeout: 5000 },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("error", reject);
        res.on("end", () => {
          if (res.statusCode !== 200)
            return reject(new Error(`envd answered ${res.statusCode} to GET /envs`));
          try {
            const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as unknown;
            if (!body || typeof body !== "object" || Array.isArray(body))
              throw new Error("envd's /envs is not an object");
            resolve(
              Object.fromEntries(
                Object.entries(body as Record<string, unknown>).filter(
                  (e): e is [string, string] => typeof e[1] === "string",
                ),
              ),
            );
          } catch (err) {
            reject(err);
          }
        });
      },
    );
    req.on("timeout", () => req.destroy(new Error("envd did not answer GET /envs within 5 s")));
    req.on("error", reject);
  });
}
