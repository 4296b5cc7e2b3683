import { createPlatformClient, type PlatformClient } from "@x/platform-client";
import { authHeaders, type Session } from "./session.js";

/** The platform API is served on the console's own origin. */
export function apiBaseUrl(): string {
  return window.location.origin;
}

/**
 * A platform client signed in as the session's team. Any 401 answer calls `onUnauthorized`:
 * the credential was revoked or never valid, and the console goes back to sign-in.
 */
export function createTeamClient(session: Session, onUnauthorized: () => void): PlatformClient {
  const client = createPlatformClient({
    baseUrl: apiBaseUrl(),
    headers: authHeaders(session.kind, session.secret),
  });
  client.use({
    onResponse({ response }) {
      if (response.status === 401) onUnauthorized();
      return response;
    },
  });
  return client;
}

/** A client for one volume's content API, authorised by the volume's own token. */
export function createVolumeClient(token: string): PlatformClient {
  return createPlatformClient({ baseUrl: apiBaseUrl(), headers: { Authorization: `Bearer ${token}` } });
}

/** A client with a credential not yet known to be good, for sign-in. */
export function createProbeClient(session: Pick<Session, "kind" | "secret">): PlatformClient {
  return createPlatformClient({ baseUrl: apiBaseUrl(), headers: authHeaders(session.kind, session.secret) });
}
