import http from "node:http";
import net from "node:net";
import { ENVD_PORT } from "@x/envd-client";
import { hostClosedAgent } from "./envd-http.js";

/** Polls envd's /health until it answers; a sandbox is ready only then. */
export async function waitForEnvd(address: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError = "";
  while (Date.now() < deadline) {
    const ok = await new Promise<boolean>((resolve) => {
      const { agent, done } = hostClosedAgent();
      const req = http.get(
        { host: address, port: ENVD_PORT, path: "/health", timeout: 1000, agent },
        (res) => {
          res.once("end", done);
          res.once("close", done);
          res.resume();
          resolve((res.statusCode ?? 500) < 300);
        },
      );
      req.on("error", (err) => {
        done();
        lastError = err.message;
        resolve(false);
      });
      req.on("timeout", () => req.destroy(new Error("timeout")));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`envd at ${address}:${ENVD_PORT} did not answer within ${timeoutMs} ms (${lastError})`);
}

/** Whether envd at `address` answers its health check right now. */
export async function envdAnswers(address: string | undefined): Promise<boolean> {
  if (!address) return false;
  return waitForEnvd(address, 1_000).then(
    () => true,
    () => false,
  );
}

/**
 * Waits until envd has quiesced: a connection attempt to its port is refused. An attempt that
 * still connects is closed from this side at once (so it leaves nothing behind in the sandbox).
 */
export async function waitForEnvdQuiet(address: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = "";
  while (Date.now() < deadline) {
    const refused = await new Promise<boolean>((resolve) => {
      const socket = net.connect({ host: address, port: ENVD_PORT });
      socket.setTimeout(1000, () => socket.destroy(new Error("timeout")));
      socket.once("connect", () => {
        last = "still accepting";
        socket.destroy();
        resolve(false);
      });
      socket.once("error", (err: NodeJS.ErrnoException) => {
        last = err.code ?? err.message;
        resolve(err.code === "ECONNREFUSED");
      });
    });
    if (refused) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`envd at ${address}:${ENVD_PORT} did not quiesce within ${timeoutMs} ms (${last})`);
}
