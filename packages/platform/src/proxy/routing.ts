/** envd's port inside every sandbox: the default when only `E2b-Sandbox-Id` is sent. */
export const ENVD_PORT = 49983;

export interface ProxyTarget {
  sandboxID: string;
  port: number;
}

const SANDBOX_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;
const PORT = /^[0-9]{1,5}$/;

function parsePort(text: string): number | undefined {
  if (!PORT.test(text)) return undefined;
  const port = Number(text);
  return port >= 1 && port <= 65535 ? port : undefined;
}

/** A repeated header arrives joined with ", "; the first value is the one meant. */
function firstValue(value: string | string[] | undefined): string | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined) return undefined;
  const comma = text.indexOf(",");
  return (comma < 0 ? text : text.slice(0, comma)).trim();
}

/**
 * Picks the sandbox and port of a request: the headers `E2b-Sandbox-Id` / `E2b-Sandbox-Port`
 * when present (what the e2b client sends when every envd call goes to one URL), else the
 * first label of the host, `{port}-{sandboxID}`, under any domain.
 */
export function parseTarget(
  idHeader: string | string[] | undefined,
  portHeader: string | string[] | undefined,
  host: string | undefined,
): ProxyTarget | undefined {
  const headerID = firstValue(idHeader);
  if (headerID) {
    const portText = firstValue(portHeader);
    const port = portText ? parsePort(portText) : ENVD_PORT;
    return port !== undefined && SANDBOX_ID.test(headerID) ? { sandboxID: headerID, port } : undefined;
  }
  if (!host) return undefined;
  let end = host.indexOf(".");
  if (end < 0) end = host.indexOf(":");
  const label = end < 0 ? host : host.slice(0, end);
  const dash = label.indexOf("-");
  if (dash < 1) return undefined;
  const port = parsePort(label.slice(0, dash));
  const sandboxID = label.slice(dash + 1);
  return port !== undefined && SANDBOX_ID.test(sandboxID) ? { sandboxID, port } : undefined;
}
