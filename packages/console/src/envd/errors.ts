import { Code, ConnectError } from "@connectrpc/connect";

/** What went wrong in an envd call, for the user: the message and its Connect code. */
export function envdErrorMessage(err: unknown): string {
  if (err instanceof ConnectError) {
    const code = Code[err.code] ?? String(err.code);
    return `${err.rawMessage || "request failed"} (${code.replace(/([a-z])([A-Z])/g, "$1 $2").toLowerCase()})`;
  }
  if (err instanceof Error) return err.message;
  return String(err);
}

/** The call was cut by us (tab closed, navigation), not failed. */
export function isAbort(err: unknown): boolean {
  return (
    (err instanceof ConnectError && err.code === Code.Canceled) ||
    (err instanceof DOMException && err.name === "AbortError")
  );
}
