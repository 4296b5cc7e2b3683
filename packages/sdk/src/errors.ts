import { Code, ConnectError } from "@connectrpc/connect";

/** What kind of failure an error is; one subclass of `SandboxError` per code. */
export type SandboxErrorCode =
  | "not_found"
  | "authentication"
  | "timeout"
  | "invalid_argument"
  | "rate_limit"
  | "not_enough_space"
  | "conflict"
  | "command_exit"
  | "build_failed"
  | "unknown";

export interface SandboxErrorOptions {
  cause?: unknown;
}

/** Base class of every error the SDK throws; transports' errors are kept as `cause`. */
export class SandboxError extends Error {
  override readonly name: string = "SandboxError";
  readonly code: SandboxErrorCode = "unknown";

  constructor(message: string, options: SandboxErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
  }
}

/** The sandbox, file, process or template does not exist (or is no longer running). */
export class NotFoundError extends SandboxError {
  override readonly name = "NotFoundError";
  override readonly code = "not_found";
}

/** The API key or access token was missing or refused. */
export class AuthenticationError extends SandboxError {
  override readonly name = "AuthenticationError";
  override readonly code = "authentication";
}

/** The call, the command or the sandbox ran out of time. */
export class TimeoutError extends SandboxError {
  override readonly name = "TimeoutError";
  override readonly code = "timeout";
}

/** An argument was refused: a bad path, template, timeout, metadata... */
export class InvalidArgumentError extends SandboxError {
  override readonly name = "InvalidArgumentError";
  override readonly code = "invalid_argument";
}

/** Too many requests or sandboxes for the team. */
export class RateLimitError extends SandboxError {
  override readonly name = "RateLimitError";
  override readonly code = "rate_limit";
}

/** The sandbox's disk is full. */
export class NotEnoughSpaceError extends SandboxError {
  override readonly name = "NotEnoughSpaceError";
  override readonly code = "not_enough_space";
}

/** The request clashes with the sandbox's state (for example it is already paused). */
export class ConflictError extends SandboxError {
  override readonly name = "ConflictError";
  override readonly code = "conflict";
}

/** Why a template build failed, as the platform reports it. */
export interface BuildFailure {
  message: string;
  /** The failed step: its 1-based position, `base` or `finalize`. */
  step?: string;
}

/** A template build ended in status `error`; `reason` is the platform's account of why. */
export class BuildError extends SandboxError {
  override readonly name = "BuildError";
  override readonly code = "build_failed";

  constructor(
    readonly templateId: string,
    readonly buildId: string,
    readonly reason: BuildFailure,
  ) {
    super(
      `Build ${buildId} of template ${templateId} failed${reason.step ? ` at step ${reason.step}` : ""}: ` +
        `${reason.message}. Fix that step and build again; the build logs have the details.`,
    );
  }
}

/** The result of a finished command. */
export interface CommandResult {
  exitCode: number;
  stdout: string;
  stderr: string;
  /** Set when envd reports why the process ended abnormally. */
  error?: string;
}

/** A command finished with a non-zero exit code; its output is in `result`. */
export class CommandExitError extends SandboxError implements CommandResult {
  override readonly name = "CommandExitError";
  override readonly code = "command_exit";

  constructor(readonly result: CommandResult) {
    super(
      `Command exited with code ${result.exitCode}${result.error ? ` (${result.error})` : ""}: ` +
        `${lastLine(result.stderr) || "no stderr"}. Read error.result for its full output.`,
    );
  }
  get exitCode(): number {
    return this.result.exitCode;
  }
  get stdout(): string {
    return this.result.stdout;
  }
  get stderr(): string {
    return this.result.stderr;
  }
}

function lastLine(text: string): string {
  return text.trimEnd().split("\n").pop() ?? "";
}

type ErrorClass = new (message: string, options?: SandboxErrorOptions) => SandboxError;

/** Connect codes from envd. envd answers ResourceExhausted only for a full disk (ENOSPC, EDQUOT). */
const byConnectCode: Partial<Record<Code, ErrorClass>> = {
  [Code.NotFound]: NotFoundError,
  [Code.Unauthenticated]: AuthenticationError,
  [Code.PermissionDenied]: AuthenticationError,
  [Code.DeadlineExceeded]: TimeoutError,
  [Code.InvalidArgument]: InvalidArgumentError,
  [Code.ResourceExhausted]: NotEnoughSpaceError,
  [Code.AlreadyExists]: ConflictError,
  [Code.FailedPrecondition]: ConflictError,
};

/** HTTP statuses from the platform API, the proxy and envd's file routes. */
const byHttpStatus: Record<number, ErrorClass> = {
  400: InvalidArgumentError,
  401: AuthenticationError,
  403: AuthenticationError,
  404: NotFoundError,
  408: TimeoutError,
  409: ConflictError,
  // an idempotency key used for another request
  422: InvalidArgumentError,
  429: RateLimitError,
  // The proxy answers 502 when the sandbox is unknown, killed or paused.
  502: NotFoundError,
  504: TimeoutError,
  507: NotEnoughSpaceError,
};

const advice: Partial<Record<SandboxErrorCode, string>> = {
  not_found: "Check the id or path; a sandbox that timed out or was killed is gone.",
  authentication: "Check the API key (apiKey option, X_API_KEY or E2B_API_KEY).",
  timeout: "Raise timeoutMs, or extend the sandbox with setTimeout().",
  invalid_argument: "Fix the argument named above and retry.",
  rate_limit: "Wait and retry, or kill sandboxes you no longer need.",
  not_enough_space: "Free space in the sandbox (remove files) or write less.",
  conflict: "Check the sandbox's state (getInfo()) before retrying.",
};

function build(Cls: ErrorClass, detail: string, cause: unknown): SandboxError {
  const probe = new Cls("");
  const next = advice[probe.code];
  return new Cls(next ? `${detail}. ${next}` : detail, { cause });
}

/** Turns a Connect error from envd into the SDK's error. */
export function fromConnectError(err: unknown, context: string): SandboxError {
  if (err instanceof SandboxError) return err;
  const ce = ConnectError.from(err);
  // Streams cut by the proxy surface as HTTP 502 inside Connect's Unavailable/Unknown.
  const status = /HTTP (\d{3})/.exec(ce.rawMessage)?.[1];
  const Cls = byConnectCode[ce.code] ?? (status ? byHttpStatus[Number(status)] : undefined) ?? SandboxError;
  return build(Cls, `${context}: ${ce.rawMessage}`, err);
}

/** Turns an HTTP error answer (status and `{message}` body) into the SDK's error. */
export function fromHttpError(status: number, body: unknown, context: string): SandboxError {
  const message =
    body && typeof body === "object" && "message" in body && typeof body.message === "string"
      ? body.message
      : typeof body === "string" && body
        ? body
        : `HTTP ${status}`;
  return build(byHttpStatus[status] ?? SandboxError, `${context}: ${message}`, body);
}

/** Network failures and other throws from fetch become a `SandboxError` with the cause kept. */
export function fromUnknown(err: unknown, context: string): SandboxError {
  if (err instanceof SandboxError) return err;
  if (err instanceof ConnectError) return fromConnectError(err, context);
  if (err instanceof Error && (err.name === "TimeoutError" || err.name === "AbortError"))
    return build(TimeoutError, `${context}: ${err.message}`, err);
  const message = err instanceof Error ? err.message : String(err);
  return new SandboxError(`${context}: ${message}. Check the API and sandbox URLs are reachable.`, {
    cause: err,
  });
}

/** Whether `call` succeeded: `false` when it failed with NotFoundError, any other error thrown. */
export async function found(call: Promise<unknown>): Promise<boolean> {
  try {
    await call;
    return true;
  } catch (err) {
    if (err instanceof NotFoundError) return false;
    throw err;
  }
}
