import { Code, ConnectError } from "@connectrpc/connect";

/** A Node system error from fs or child_process. */
export function errnoOf(err: unknown): string | undefined {
  return typeof err === "object" && err !== null && "code" in err && typeof err.code === "string"
    ? err.code
    : undefined;
}

const connectCodes: Record<string, Code> = {
  ENOENT: Code.NotFound,
  ENOTDIR: Code.InvalidArgument,
  EISDIR: Code.InvalidArgument,
  EINVAL: Code.InvalidArgument,
  ENAMETOOLONG: Code.InvalidArgument,
  ELOOP: Code.InvalidArgument,
  EEXIST: Code.AlreadyExists,
  ENOTEMPTY: Code.FailedPrecondition,
  EACCES: Code.PermissionDenied,
  EPERM: Code.PermissionDenied,
  EROFS: Code.PermissionDenied,
  ENOSPC: Code.ResourceExhausted,
  EDQUOT: Code.ResourceExhausted,
  EXDEV: Code.FailedPrecondition,
};

/** Turns a filesystem failure into a Connect error whose message names the path. */
export function fsConnectError(err: unknown, action: string, path: string): ConnectError {
  if (err instanceof ConnectError) return err;
  const errno = errnoOf(err);
  const code = (errno ? connectCodes[errno] : undefined) ?? Code.Internal;
  const reason = describeErrno(errno) ?? (err instanceof Error ? err.message : String(err));
  return new ConnectError(`${action} ${path}: ${reason}`, code, undefined, undefined, err);
}

/** HTTP status for the file routes (seed section 7). */
export function fsHttpStatus(err: unknown): number {
  switch (errnoOf(err)) {
    case "ENOENT":
      return 404;
    case "EISDIR":
    case "ENOTDIR":
    case "EINVAL":
    case "ENAMETOOLONG":
      return 400;
    case "ENOSPC":
    case "EDQUOT":
      return 507;
    default:
      return 500;
  }
}

export function describeErrno(errno: string | undefined): string | undefined {
  switch (errno) {
    case "ENOENT":
      return "no such file or directory";
    case "ENOTDIR":
      return "not a directory";
    case "EISDIR":
      return "is a directory";
    case "EEXIST":
      return "already exists";
    case "ENOTEMPTY":
      return "directory not empty";
    case "EACCES":
    case "EPERM":
      return "permission denied";
    case "EROFS":
      return "read-only file system";
    case "ENOSPC":
    case "EDQUOT":
      return "not enough disk space";
    default:
      return undefined;
  }
}
