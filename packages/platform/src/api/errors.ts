import { DomainError, HTTP_STATUS } from "../model/errors.js";
import { isStoreUnavailable } from "../store/db.js";

export interface HttpError {
  status: number;
  message: string;
  headers: Record<string, string>;
}

/** The HTTP answer to an error; undefined for one that is not the caller's to see (a 500). */
export function httpErrorOf(err: unknown): HttpError | undefined {
  if (isStoreUnavailable(err)) {
    const message = "the platform's database is not answering: try again shortly";
    return { status: 503, message, headers: { "Retry-After": "2" } };
  }
  if (!(err instanceof DomainError)) return undefined;
  const headers: Record<string, string> =
    err.retryAfterSeconds !== undefined ? { "Retry-After": String(err.retryAfterSeconds) } : {};
  return { status: HTTP_STATUS[err.code], message: err.message, headers };
}
