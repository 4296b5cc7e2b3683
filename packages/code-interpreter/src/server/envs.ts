/**
 * The sandbox's environment variables, as its create gave them: envd's `GET /envs`. The server
 * starts before a sandbox gets its identity (a warm pool member runs it already), so a context
 * asks envd on its first execution rather than trusting its own environment.
 */
export async function sandboxEnvs(
  envdUrl: string,
  accessToken: string | undefined,
): Promise<Record<string, string>> {
  const res = await fetch(`${envdUrl}/envs`, {
    headers: accessToken ? { "X-Access-Token": accessToken } : {},
    signal: AbortSignal.timeout(5000),
  });
  if (!res.ok) throw new Error(`envd answered ${res.status} to GET /envs`);
  const body = (await res.json()) as unknown;
  if (!body || typeof body !== "object" || Array.isArray(body))
    throw new Error("envd's /envs is not an object");
  return Object.fromEntries(
    Object.entries(body as Record<string, unknown>).filter(
      (e): e is [string, string] => typeof e[1] === "string",
    ),
  );
}
