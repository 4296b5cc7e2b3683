/**
 * envd's answers are readable by pages of any origin: the console (served by the API, another
 * origin than the proxy) and the e2b client run in a browser. Safe because envd's calls carry
 * their own credential (`X-Access-Token`, or a signature in the URL), never cookies, and only
 * envd's port gets this: what users serve on their own ports keeps its own policy.
 */
import type http from "node:http";
import { ENVD_PORT, type ProxyTarget } from "./routing.js";

/** What every envd answer to a page of another origin carries (raw header pairs). */
export const ENVD_CORS_HEADERS = ["Access-Control-Allow-Origin", "*", "Access-Control-Expose-Headers", "*"];

/** The CORS headers for a request's answer: envd's, asked from a page; none otherwise. */
export function corsHeadersFor(target: ProxyTarget | undefined, origin: string | undefined): string[] {
  return origin !== undefined && target?.port === ENVD_PORT ? ENVD_CORS_HEADERS : [];
}

/**
 * A browser's preflight for envd, which the proxy answers itself (it must not wake a paused
 * sandbox, and a preflight carries no `E2b-Sandbox-Id` value to route by): to envd's own host
 * (`49983-{id}.{domain}`), or asking leave to send `E2b-Sandbox-Id` (the client's one-URL mode).
 */
export function isEnvdPreflight(
  method: string,
  headers: http.IncomingHttpHeaders,
  target: ProxyTarget | undefined,
): boolean {
  if (method !== "OPTIONS" || !headers.origin || !headers["access-control-request-method"]) return false;
  if (target) return target.port === ENVD_PORT;
  const asked = String(headers["access-control-request-headers"] ?? "").toLowerCase();
  return asked.split(",").some((h) => h.trim() === "e2b-sandbox-id");
}

/** The answer to an envd preflight: any method envd has, the headers asked for, cached 10 min. */
export function preflightAnswer(headers: http.IncomingHttpHeaders): Record<string, string> {
  return {
    "Access-Control-Allow-Origin": "*",
    "Access-Control-Allow-Methods": "GET, POST, PUT, DELETE, OPTIONS",
    "Access-Control-Allow-Headers": String(headers["access-control-request-headers"] ?? "*"),
    "Access-Control-Max-Age": "600",
    "Content-Length": "0",
  };
}
