import { execFile } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { EnvdComponents } from "@x/envd-client";
import type { EnvdContext } from "../context.js";
import { requireToken } from "./access.js";
import { readJson } from "./body.js";
import { HttpError, type HttpRequest, type HttpResponse, sendEmpty } from "./respond.js";

type InitRequest = EnvdComponents["schemas"]["InitRequest"];

/** The clock is left alone when it is this close to the host's (request latency, jitter). */
const CLOCK_TOLERANCE_MS = 1000;

function parseRequest(body: unknown): InitRequest {
  if (body === undefined) return {};
  if (typeof body !== "object" || body === null || Array.isArray(body))
    throw new HttpError(400, "request body must be a JSON object");
  const request = body as Record<string, unknown>;
  for (const key of ["accessToken", "defaultUser", "defaultWorkdir", "timestamp", "hyperloopIP"]) {
    const value = request[key];
    if (value !== undefined && value !== null && typeof value !== "string")
      throw new HttpError(400, `${key} must be a string`);
  }
  const envVars = request.envVars;
  if (envVars !== undefined && envVars !== null) {
    if (
      typeof envVars !== "object" ||
      Array.isArray(envVars) ||
      !Object.values(envVars).every((v) => typeof v === "string")
    ) {
      throw new HttpError(400, "envVars must be an object of strings");
    }
  }
  return request as InitRequest;
}

/**
 * Sets the system clock from the host's (a restored snapshot wakes with the time it was
 * taken). Only root may; anything else is logged, never a failed init.
 */
function syncClock(ctx: EnvdContext, hostTimeMs: number): void {
  if (Math.abs(Date.now() - hostTimeMs) <= CLOCK_TOLERANCE_MS) return;
  if (process.getuid?.() !== 0) {
    ctx.log("warn", "init: clock differs from the host's but envd is not root; not setting it", {
      hostTimeMs,
    });
    return;
  }
  execFile("date", ["-u", "-s", `@${(hostTimeMs / 1000).toFixed(3)}`], (err) => {
    if (err) ctx.log("warn", "init: cannot set the clock", { err: err.message });
  });
}

/** Identity variables E2B's envd sets in every process and mirrors as `<runDir>/.<NAME>` files. */
const IDENTITY_VARS = ["E2B_SANDBOX", "E2B_SANDBOX_ID", "E2B_TEMPLATE_ID", "E2B_TEAM_ID"] as const;

/** Writes `<runDir>/.<name>`, making `runDir` first when it is not there (yet, or any more). */
function writeIdentityFile(runDir: string, name: string, value: string): void {
  const file = path.join(runDir, `.${name}`);
  try {
    writeFileSync(file, value, { mode: 0o644 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    mkdirSync(runDir, { recursive: true, mode: 0o755 });
    writeFileSync(file, value, { mode: 0o644 });
  }
}

/**
 * Gives the sandbox E2B's identity variables: `E2B_SANDBOX=true` and `E2B_SANDBOX_ID` (the
 * platform's, else the hostname, which the platform sets to the sandbox id), plus
 * `E2B_TEMPLATE_ID`/`E2B_TEAM_ID` when the platform sends them, each also written to
 * `<runDir>/.<NAME>` for programs that read files rather than the environment. Only inside a
 * sandbox (`runDir` set); a file that cannot be written is logged, never a failed init.
 *
 * A create's /init is on the path of every `Sandbox.create()`: a file already holding its value
 * (a warm pool member wrote `E2B_SANDBOX` and its id when it warmed up) is not written again,
 * and the few that change are written synchronously (a handful of system calls, where each
 * trip through libuv's thread pool costs ~0.4 ms under gVisor). `written` is what each file
 * was last given, by this envd.
 */
function applyIdentity(ctx: EnvdContext, written: Map<string, string>): void {
  const { state } = ctx;
  if (!state.runDir) return;
  state.envVars.E2B_SANDBOX = "true";
  if (!state.envVars.E2B_SANDBOX_ID) state.envVars.E2B_SANDBOX_ID = os.hostname();
  for (const name of IDENTITY_VARS) {
    const value = state.envVars[name];
    if (value === undefined || written.get(name) === value) continue;
    // each file on its own: one that cannot be written does not keep the others back
    try {
      writeIdentityFile(state.runDir, name, value);
      written.set(name, value);
    } catch (err) {
      ctx.log("warn", "init: cannot write a sandbox identity file", {
        file: path.join(state.runDir, `.${name}`),
        err: err instanceof Error ? err.message : String(err),
      });
    }
  }
}

/**
 * `POST /init`, sent by the platform when a sandbox starts or resumes. Before a token is
 * set anyone may call it; after, the current token is required, and a new `accessToken`
 * in the body replaces it (rotation on resume from a snapshot). An init older than the
 * last applied one (by `timestamp`) is ignored, so a delayed retry cannot undo a newer one.
 */
export function createInitHandler(ctx: EnvdContext): (req: HttpRequest, res: HttpResponse) => Promise<void> {
  let lastAppliedMs = Number.NEGATIVE_INFINITY;
  const written = new Map<string, string>();
  return async (req, res) => {
    requireToken(ctx.state, req);
    const request = parseRequest(await readJson(req));
    if (request.timestamp) {
      const hostTimeMs = Date.parse(request.timestamp);
      if (Number.isNaN(hostTimeMs))
        throw new HttpError(400, `invalid timestamp '${request.timestamp}': expected RFC 3339`);
      if (hostTimeMs < lastAppliedMs) {
        ctx.log("info", "init: ignoring an init older than the last applied one", {
          timestamp: request.timestamp,
        });
        sendEmpty(res, 204);
        return;
      }
      lastAppliedMs = hostTimeMs;
      syncClock(ctx, hostTimeMs);
    }
    const { state } = ctx;
    if (request.envVars) Object.assign(state.envVars, request.envVars);
    if (request.accessToken) state.accessToken = request.accessToken;
    if (request.defaultUser) state.defaultUser = request.defaultUser;
    if (request.defaultWorkdir) state.defaultWorkdir = request.defaultWorkdir;
    applyIdentity(ctx, written);
    ctx.log("info", "init applied", {
      envVars: Object.keys(request.envVars ?? {}).length,
      tokenChanged: Boolean(request.accessToken),
      defaultUser: state.defaultUser,
    });
    sendEmpty(res, 204);
  };
}
