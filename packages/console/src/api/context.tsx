import { useQueryClient } from "@tanstack/react-query";
import type { PlatformClient } from "@x/platform-client";
import { createContext, type ReactNode, useCallback, useContext, useMemo, useState } from "react";
import { createTeamClient } from "./client.js";
import type { ConsoleConfig } from "./config.js";
import { clearSession, loadSession, type Session, saveSession } from "./session.js";

interface AuthState {
  session?: Session;
  /** Why the last session ended, shown on the sign-in page; undefined when the user signed out. */
  endedBecause?: string;
  /** The user signed out (rather than the platform refusing the credential, or no sign-in yet). */
  signedOut: boolean;
  signIn(session: Session): void;
  signOut(reason?: string): void;
}

const AuthContext = createContext<AuthState | undefined>(undefined);
const ConfigContext = createContext<ConsoleConfig | undefined>(undefined);

export interface Api {
  client: PlatformClient;
  session: Session;
}

const ApiContext = createContext<Api | undefined>(undefined);

export function ConfigProvider({ config, children }: { config: ConsoleConfig; children: ReactNode }) {
  return <ConfigContext.Provider value={config}>{children}</ConfigContext.Provider>;
}

export function useConfig(): ConsoleConfig {
  const config = useContext(ConfigContext);
  if (!config) throw new Error("useConfig outside ConfigProvider");
  return config;
}

/** The session (from localStorage), and one platform client per session. */
export function AuthProvider({ children }: { children: ReactNode }) {
  const queryClient = useQueryClient();
  const [session, setSession] = useState<Session | undefined>(loadSession);
  const [endedBecause, setEndedBecause] = useState<string>();
  const [signedOut, setSignedOut] = useState(false);

  const signOut = useCallback(
    (reason?: string) => {
      clearSession();
      setSession(undefined);
      setEndedBecause(reason);
      setSignedOut(reason === undefined);
      queryClient.clear();
    },
    [queryClient],
  );
  const signIn = useCallback(
    (next: Session) => {
      queryClient.clear();
      saveSession(next);
      setEndedBecause(undefined);
      setSignedOut(false);
      setSession(next);
    },
    [queryClient],
  );
  const api = useMemo<Api | undefined>(
    () =>
      session && {
        session,
        client: createTeamClient(session, () =>
          signOut("The platform refused the credential (401): it was revoked or is no longer valid."),
        ),
      },
    [session, signOut],
  );
  const auth = useMemo(
    () => ({ session, endedBecause, signedOut, signIn, signOut }),
    [session, endedBecause, signedOut, signIn, signOut],
  );
  return (
    <AuthContext.Provider value={auth}>
      <ApiContext.Provider value={api}>{children}</ApiContext.Provider>
    </AuthContext.Provider>
  );
}

export function useAuth(): AuthState {
  const auth = useContext(AuthContext);
  if (!auth) throw new Error("useAuth outside AuthProvider");
  return auth;
}

/** The signed-in team's client; only under a route that requires a session. */
export function useApi(): Api {
  const api = useContext(ApiContext);
  if (!api) throw new Error("useApi without a session");
  return api;
}
