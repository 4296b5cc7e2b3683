import http from "node:http";
import net from "node:net";
import { ENVD_PORT } from "@x/envd-client";
import { ENVD_ANSWER_MAX_BYTES, hostClosedAgent } from "./envd-http.js";

/** One GET /health: whether envd answered it with success. */
function healthy(address: string, onError: (message: string) => void): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const { agent, done } = hostClosedAgent();
    const req = http.get({ host: address, port: ENVD_PORT, path: "/health", timeout: 1000, agent }, (res) => {
      res.once("end", done);
      res.once("close", done);
      // read to its end (and dropped), so the host closes the connection: a body without end
      // (a sandbox's own server on envd's port) is cut off
      let read = 0;
      res.on("data", (chunk: Buffer) => {
        read += chunk.length;
        if (read > ENVD_ANSWER_MAX_BYTES) res.destroy();
      });
      resolve((res.statusCode ?? 500) < 300);
    });
    req.on("error", (err) => {
      done();
      onError(err.message);
      resolve(false);
    });
    req.on("timeout", () => req.destroy(new Error("timeout")));
  });
}

/**
 * One connection attempt to envd's port, reset from this side at once: an RST leaves nothing
 * behind in the sandbox's network stack, where a FIN would leave its end closing, which gVisor
 * counts as a connection a checkpoint cannot save. `accepted`, or why not (the errno code,
 * e.g. ECONNREFUSED).
 */
function connectOnce(address: string): Promise<"accepted" | string> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: address, port: ENVD_PORT });
    socket.setTimeout(1000, () => socket.destroy(new Error("timeout")));
    socket.once("connect", () => {
      socket.resetAndDestroy();
      resolve("accepted");
    });
    socket.once("error", (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
}

/**
 * Waits until envd's /health answers; a sandbox is ready only then. While envd starts (a few
 * hundred ms, more under gVisor) its port is probed with bare connects, which the sandbox's
 * network stack refuses at once: a fraction of the CPU an HTTP request costs on both sides
 * (measured here: the platform's CPU per gVisor create fell from ~0.22 to ~0.14 s).
 */
export async function waitForEnvd(address: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError = "";
  const failed = (message: string) => {
    lastError = message;
  };
  // each probe costs a connect through the host's firewall: 5 ms apart at first, then a little
  // further apart, up to 15 ms (envd takes hundreds of ms to start, more under gVisor)
  for (let pause = 5; Date.now() < deadline; pause = Math.min(15, pause * 1.25)) {
    const probe = await connectOnce(address);
    if (probe !== "accepted") failed(probe);
    else if (await healthy(address, failed)) return;
    await new Promise((r) => setTimeout(r, pause));
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

/** Waits until envd has quiesced: a connection attempt to its port is refused. */
export async function waitForEnvdQuiet(address: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = "";
  while (Date.now() < deadline) {
    const probe = await connectOnce(address);
    if (probe === "ECONNREFUSED") return;
    last = probe === "accepted" ? "still accepting" : probe;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`envd at ${address}:${ENVD_PORT} did not quiesce within ${timeoutMs} ms (${last})`);
}
