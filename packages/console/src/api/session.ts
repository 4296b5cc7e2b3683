/** How a credential is sent: an API key as `X-API-Key`, an access token as `Authorization: Bearer`. */
export type CredentialKind = "apiKey" | "accessToken";

/** A signed-in console: the credential and the team it belongs to. */
export interface Session {
  kind: CredentialKind;
  secret: string;
  teamID: string;
  teamName: string;
}

const STORAGE_KEY = "x-console.session";

/** The kind of a pasted credential, or undefined when it looks like neither. */
export function credentialKind(secret: string): CredentialKind | undefined {
  if (/^sk_e2b_\S+$/.test(secret)) return "accessToken";
  if (/^e2b_\S+$/.test(secret)) return "apiKey";
  return undefined;
}

export function authHeaders(kind: CredentialKind, secret: string): Record<string, string> {
  return kind === "apiKey" ? { "X-API-Key": secret } : { Authorization: `Bearer ${secret}` };
}

export function loadSession(): Session | undefined {
  let raw: string | null;
  try {
    raw = localStorage.getItem(STORAGE_KEY);
  } catch {
    return undefined;
  }
  if (!raw) return undefined;
  try {
    const value = JSON.parse(raw) as Partial<Session>;
    if (
      (value.kind === "apiKey" || value.kind === "accessToken") &&
      typeof value.secret === "string" &&
      typeof value.teamID === "string" &&
      typeof value.teamName === "string"
    )
      return { kind: value.kind, secret: value.secret, teamID: value.teamID, teamName: value.teamName };
  } catch {
    // a damaged entry is as good as none
  }
  localStorage.removeItem(STORAGE_KEY);
  return undefined;
}

export function saveSession(session: Session): void {
  localStorage.setItem(STORAGE_KEY, JSON.stringify(session));
}

export function clearSession(): void {
  localStorage.removeItem(STORAGE_KEY);
}

/** Shows a secret with its middle hidden: `e2b_1a2b…9f0e`. */
export function maskSecret(secret: string): string {
  const prefix = secret.startsWith("sk_e2b_") ? "sk_e2b_" : secret.startsWith("e2b_") ? "e2b_" : "";
  const rest = secret.slice(prefix.length);
  return rest.length <= 8 ? `${prefix}…` : `${prefix}${rest.slice(0, 4)}…${rest.slice(-4)}`;
}
