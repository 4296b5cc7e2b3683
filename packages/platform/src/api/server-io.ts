/** Reading request bodies and writing JSON answers, for every HTTP surface of the platform. */
import type { IncomingMessage, ServerResponse } from "node:http";
import { invalid, tooLarge } from "../model/errors.js";
import { describeErrors, type Operation } from "./openapi.js";

export const MAX_JSON_BODY = 10 * 1024 * 1024;

/** A request's whole body, refused (413) past `maxBytes`. */
export function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        reject(tooLarge(`request body larger than ${maxBytes} bytes`));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on("error", reject);
    req.on("end", () => resolve(Buffer.concat(chunks)));
  });
}

/**
 * An operation's JSON body, read whole and checked against the spec (400 as the API answers
 * it); `raw` is the bytes as they came, for a hop that passes them on unchanged.
 */
export async function readJsonBody(
  req: IncomingMessage,
  op: Operation,
  refuseNul: (value: unknown, where: string) => void,
  maxBytes = MAX_JSON_BODY,
): Promise<{ raw: Buffer; body: unknown }> {
  const raw = await readBody(req, maxBytes);
  const text = raw.toString("utf8");
  let body: unknown;
  if (text.trim() !== "") {
    try {
      body = JSON.parse(text);
    } catch {
      throw invalid("request body is not valid JSON");
    }
  }
  if (body === undefined && op.bodyRequired) throw invalid("request body is required");
  refuseNul(body, "body");
  if (body !== undefined && op.validateBody && !op.validateBody(body)) {
    throw invalid(describeErrors("body", op.validateBody));
  }
  return { raw, body };
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  if (body === undefined) {
    // The public client parses every non-204 2xx as JSON, so an empty body is declared as such.
    res.writeHead(status, { ...headers, "Content-Length": "0" });
    res.end();
    return;
  }
  const text = JSON.stringify(body);
  res.writeHead(status, {
    ...headers,
    "Content-Type": "application/json",
    "Content-Length": String(Buffer.byteLength(text)),
  });
  res.end(text);
}

export function sendError(
  res: ServerResponse,
  status: number,
  message: string,
  headers: Record<string, string> = {},
): void {
  sendJson(res, status, { code: status, message }, headers);
}
