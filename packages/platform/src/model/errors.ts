/**
 * What kind of failure a domain error is. The API maps each to one HTTP status (api/errors.ts);
 * everything else in the platform only says what went wrong.
 */
export type ErrorCode =
  /** The request is malformed or asks for something impossible (400). */
  | "invalid"
  /** No or a wrong credential (401). */
  | "unauthenticated"
  /** The caller may not do this to a thing that exists (403). */
  | "forbidden"
  | "not_found"
  /** The thing is in a state that does not allow this now (409). */
  | "conflict"
  /** The request clashes with an earlier one it names: an Idempotency-Key used for another (422). */
  | "reused"
  /** A body or upload larger than accepted (413). */
  | "too_large"
  /** A limit of the team was reached (429, with a time to retry after). */
  | "quota"
  /** The platform's own disk has no room for what the request writes (507). */
  | "no_space"
  /** The platform cannot take this now, e.g. no capacity (503, with a time to retry after). */
  | "unavailable"
  /**
   * A part of the platform the request was sent on to failed after it may have acted on it
   * (502, never a time to retry after: repeating it blindly may do it twice).
   */
  | "may_have_acted";

/** The one table from the domain's error codes to HTTP statuses (the API's and the proxy's answers). */
export const HTTP_STATUS: Record<ErrorCode, number> = {
  invalid: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  reused: 422,
  too_large: 413,
  quota: 429,
  no_space: 507,
  unavailable: 503,
  may_have_acted: 502,
};

/** A failure the caller can act on: a code for the kind, a message that says what to do. */
export class DomainError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    /** For `quota` and `unavailable`: when trying again makes sense. */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = "DomainError";
  }
}

export const invalid = (message: string) => new DomainError("invalid", message);
export const unauthenticated = (message: string) => new DomainError("unauthenticated", message);
export const forbidden = (message: string) => new DomainError("forbidden", message);
export const notFound = (message: string) => new DomainError("not_found", message);
export const conflict = (message: string) => new DomainError("conflict", message);
export const reused = (message: string) => new DomainError("reused", message);
export const tooLarge = (message: string) => new DomainError("too_large", message);
export const noSpace = (message: string) => new DomainError("no_space", message);
export const quotaExceeded = (message: string, retryAfterSeconds = 1) =>
  new DomainError("quota", message, retryAfterSeconds);
export const unavailable = (message: string, retryAfterSeconds = 1) =>
  new DomainError("unavailable", message, retryAfterSeconds);
