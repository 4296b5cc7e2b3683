import { invalid } from "../model/errors.js";
import { type DestinationGuard, describeRefusal, ResolveError } from "../network/destination-guard.js";

/** Host and port a webhook's URL is sent to (its default port when none is written). */
export function webhookEndpoint(url: string): { host: string; port: number } {
  const parsed = new URL(url);
  return {
    host: parsed.hostname,
    port: parsed.port ? Number(parsed.port) : parsed.protocol === "https:" ? 443 : 80,
  };
}

/**
 * Refuses (400) a webhook URL whose host is, or resolves to, an address the platform does not
 * send tenants' requests to (loopback, link-local, private, … see network/destination-guard.ts)
 * and the operator did not allow. A name that does not resolve now is accepted: each delivery
 * resolves it again and is checked then.
 */
export async function checkWebhookDestination(url: string, guard: DestinationGuard): Promise<void> {
  const { host, port } = webhookEndpoint(url);
  const check = await guard.check(host, port).catch((err: unknown) => {
    if (err instanceof ResolveError) return undefined;
    throw err;
  });
  if (check && !check.allowed)
    throw invalid(
      `url: ${describeRefusal(host, check)}: webhooks are sent to public addresses only, unless the platform's operator allows internal ones (x serve --allow-private-webhooks)`,
    );
}
