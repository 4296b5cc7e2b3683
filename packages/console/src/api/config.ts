/** What the platform serves at `/console/config.json`: how this console reaches the platform. */
export interface ConsoleConfig {
  /** Version of the platform server. */
  version: string;
  /** The sandbox domain (`sandbox.localhost:3002`). */
  domain: string;
  /** envd of a sandbox through the platform's proxy, with `{sandboxID}` to replace. */
  envdUrl: string;
  /** The platform runs as a cluster (`x api` in front of `x node`s). */
  cluster: boolean;
}

export class ConfigError extends Error {
  override name = "ConfigError";
}

function field<T>(value: unknown, key: string, type: "string" | "boolean"): T {
  const v = (value as Record<string, unknown>)[key];
  if (typeof v !== type)
    throw new ConfigError(`config.json: "${key}" must be a ${type}, got ${JSON.stringify(v)}`);
  return v as T;
}

/** Reads the console's configuration from the platform, next to the console's own files. */
export async function loadConfig(signal?: AbortSignal): Promise<ConsoleConfig> {
  const url = `${import.meta.env.BASE_URL}config.json`;
  let response: Response;
  try {
    response = await fetch(url, { signal, headers: { Accept: "application/json" } });
  } catch (err) {
    throw new ConfigError(`Cannot reach the platform at ${url}: ${(err as Error).message}`);
  }
  if (!response.ok) throw new ConfigError(`${url} answered ${response.status} ${response.statusText}`);
  let body: unknown;
  try {
    body = await response.json();
  } catch {
    throw new ConfigError(`${url} is not JSON: is this console served by the platform?`);
  }
  if (typeof body !== "object" || body === null) throw new ConfigError(`${url} is not a JSON object`);
  const envdUrl = field<string>(body, "envdUrl", "string");
  if (!envdUrl.includes("{sandboxID}"))
    throw new ConfigError(`config.json: "envdUrl" must contain {sandboxID}, got ${envdUrl}`);
  return {
    version: field<string>(body, "version", "string"),
    domain: field<string>(body, "domain", "string"),
    envdUrl,
    cluster: field<boolean>(body, "cluster", "boolean"),
  };
}
