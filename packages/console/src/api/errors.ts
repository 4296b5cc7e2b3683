import type { Schemas } from "@x/platform-client";

/** An error answer of the platform API: its `{code, message}` body and the HTTP status. */
export class ApiError extends Error {
  override name = "ApiError";
  constructor(
    readonly status: number,
    message: string,
    readonly requestId?: string,
  ) {
    super(message);
  }
}

/** The request never got an answer (network down, platform stopped, CORS refused). */
export class NetworkError extends Error {
  override name = "NetworkError";
}

interface FetchResult<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

function isErrorBody(value: unknown): value is Schemas["Error"] {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as { message?: unknown }).message === "string"
  );
}

function toApiError(result: FetchResult<unknown>): ApiError {
  const { response, error } = result;
  const message = isErrorBody(error)
    ? error.message
    : typeof error === "string" && error
      ? error
      : `${response.status} ${response.statusText || "error"}`;
  return new ApiError(response.status, message, response.headers.get("X-Request-Id") ?? undefined);
}

async function settle<T>(call: Promise<FetchResult<T>>): Promise<FetchResult<T>> {
  try {
    return await call;
  } catch (err) {
    if (err instanceof ApiError || (err instanceof DOMException && err.name === "AbortError")) throw err;
    throw new NetworkError(`Cannot reach the platform: ${(err as Error).message}`);
  }
}

/** Awaits an openapi-fetch call: its data, or the API's error thrown as an `ApiError`. */
export async function unwrap<T>(call: Promise<FetchResult<T>>): Promise<T> {
  const result = await settle(call);
  if (!result.response.ok) throw toApiError(result);
  return result.data as T;
}

/** One page of a list whose next cursor comes back in `X-Next-Token`. */
export interface Page<T> {
  items: T;
  nextToken?: string;
  response: Response;
}

export async function unwrapPage<T>(call: Promise<FetchResult<T>>): Promise<Page<T>> {
  const result = await settle(call);
  if (!result.response.ok) throw toApiError(result);
  return {
    items: result.data as T,
    nextToken: result.response.headers.get("X-Next-Token") || undefined,
    response: result.response,
  };
}

/** A message for the user from anything thrown. */
export function errorMessage(err: unknown): string {
  if (err instanceof ApiError) return err.message;
  if (err instanceof Error) return err.message;
  return String(err);
}

/** Client errors are answers, not accidents: retrying them changes nothing. */
export function shouldRetry(failureCount: number, err: unknown): boolean {
  if (err instanceof ApiError && err.status >= 400 && err.status < 500 && err.status !== 429) return false;
  return failureCount < 2;
}
