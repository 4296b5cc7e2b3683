import { type ReactNode, useEffect, useRef, useState } from "react";
import { Link, Navigate, useLocation, useSearchParams } from "react-router-dom";
import { apiBaseUrl } from "../api/client.js";
import { useAuth } from "../api/context.js";
import { useCreateCliToken, useTeams } from "../api/team.js";
import { ErrorNotice, Loading } from "../components/status.js";

/**
 * `e2b auth login`'s page, `/console/api/cli` (the CLI opens `${E2B_DOCS_BASE}/api/cli`):
 *
 * 1. `?next=http://localhost:<port>&cliVersion=<v>`: after sign-in, the user confirms; Authorize
 *    makes a refreshable access token and sends the browser to `next` with it (the CLI's own
 *    listener on the loopback interface), Cancel sends it there with `error`.
 * 2. `?state=success&email=<email>` or `?state=error&error=<msg>`: where the CLI sends the
 *    browser back, with how it went.
 */

/** The CLI's listener: `http://localhost:<port>` or `http://127.0.0.1:<port>`, nothing else. */
const LOOPBACK_NEXT = /^http:\/\/(?:localhost|127\.0\.0\.1):([1-9][0-9]{0,4})\/?$/;
const CLI_VERSION = /^[0-9A-Za-z][0-9A-Za-z.+-]{0,39}$/;
const CANCELLED = "login cancelled in the console";

/** `next` when it is the CLI's loopback listener; undefined for anything else. */
export function loopbackNext(value: string): string | undefined {
  const m = LOOPBACK_NEXT.exec(value);
  return m && Number(m[1]) <= 65535 ? value : undefined;
}

type Step =
  | { kind: "confirm"; next: string; cliVersion?: string }
  | { kind: "done"; email?: string }
  | { kind: "error"; title: string; message: string };

function readStep(query: URLSearchParams): Step {
  const state = query.get("state");
  if (state === "success") return { kind: "done", email: query.get("email") || undefined };
  if (state === "error")
    return {
      kind: "error",
      title: "The e2b CLI did not sign in",
      message: query.get("error") || "The CLI gave no reason.",
    };
  if (state !== null)
    return { kind: "error", title: "Unknown login state", message: `The CLI sent state "${state}".` };
  const nexts = query.getAll("next");
  if (nexts.length === 0)
    return {
      kind: "error",
      title: "Nothing to sign in",
      message:
        "e2b auth login opens this page with the address the CLI listens on (next); this link has none.",
    };
  const next = nexts.length === 1 ? loopbackNext(nexts[0]!) : undefined;
  if (!next)
    return {
      kind: "error",
      title: "Refused: not the CLI's address",
      message:
        `The return address must be http://localhost:<port> or http://127.0.0.1:<port>, ` +
        `not ${nexts.map((n) => JSON.stringify(n)).join(", ")}. The console sends tokens nowhere else.`,
    };
  const version = query.get("cliVersion");
  return { kind: "confirm", next, cliVersion: version && CLI_VERSION.test(version) ? version : undefined };
}

/** Hands the browser back to the CLI's listener, the answer in its query. */
function returnToCli(next: string, params: Record<string, string>): void {
  window.location.assign(`${next}?${new URLSearchParams(params)}`);
}

function Card({ title, children }: { title: string; children: ReactNode }) {
  return (
    <div className="signin">
      <main className="signin-card" aria-labelledby="cli-login-title" data-testid="cli-login">
        <h1 id="cli-login-title">{title}</h1>
        {children}
      </main>
    </div>
  );
}

function Confirm({ next, cliVersion }: { next: string; cliVersion?: string }) {
  const teams = useTeams();
  const { session } = useAuth();
  const create = useCreateCliToken();
  const [leaving, setLeaving] = useState(false);
  const authorizeRef = useRef<HTMLButtonElement>(null);
  const list = teams.data ?? [];
  const team = list.find((t) => t.teamID === session?.teamID) ?? list.find((t) => t.isDefault) ?? list[0];
  useEffect(() => {
    if (team) authorizeRef.current?.focus();
  }, [team]);

  const busy = create.isPending || leaving;
  const authorize = () => {
    if (!team || busy) return;
    create.mutate(cliVersion ? `e2b CLI ${cliVersion}` : "e2b CLI", {
      onSuccess: (token) => {
        setLeaving(true);
        const origin = apiBaseUrl();
        returnToCli(next, {
          email: team.name,
          accessToken: token.token,
          refreshToken: token.refreshToken,
          tokenEndpoint: `${origin}/oauth/token`,
          revokeEndpoint: `${origin}/oauth/revoke`,
          clientId: "e2b-cli",
        });
      },
    });
  };
  const cancel = () => {
    if (busy) return;
    setLeaving(true);
    returnToCli(next, { error: CANCELLED });
  };

  if (teams.isPending) return <Loading label="Reading your team…" />;
  return (
    <Card title="Sign in the e2b CLI">
      <ErrorNotice error={teams.error} title="Could not read the team" />
      {!teams.error && !team && (
        <div className="notice error" role="alert" data-testid="cli-login-error">
          The platform lists no team for this credential.
        </div>
      )}
      {team && (
        <>
          <p style={{ margin: 0 }} data-testid="cli-login-confirm">
            Sign the e2b CLI (version {cliVersion ?? "unknown"}) in to team <strong>{team.name}</strong>?
          </p>
          <p className="muted" style={{ margin: 0 }}>
            Authorize makes an access token with a refresh token for the CLI listening at <code>{next}</code>{" "}
            on this computer. Revoke it any time under{" "}
            <Link to="/team/access-tokens">Team › Access tokens</Link>.
          </p>
        </>
      )}
      <ErrorNotice error={create.error} title="Could not make the access token" />
      {leaving && (
        <div className="notice info" role="status">
          Returning to the e2b CLI…
        </div>
      )}
      <div className="row" style={{ justifyContent: "flex-end" }}>
        <button type="button" onClick={cancel} disabled={busy} data-testid="cli-cancel">
          Cancel
        </button>
        <button
          type="button"
          className="primary"
          ref={authorizeRef}
          onClick={authorize}
          disabled={!team || busy}
          data-testid="cli-authorize"
        >
          {create.isPending ? "Authorizing…" : "Authorize"}
        </button>
      </div>
    </Card>
  );
}

/** `/api/cli`: the console's side of `e2b auth login`. */
export function CliLoginPage() {
  const [query] = useSearchParams();
  const location = useLocation();
  const { session } = useAuth();
  const step = readStep(query);

  if (step.kind === "done")
    return (
      <Card title="e2b CLI signed in">
        <p style={{ margin: 0 }} role="status" data-testid="cli-login-done">
          {step.email ? `The e2b CLI is signed in as ${step.email}.` : "The e2b CLI is signed in."} You can
          close this tab.
        </p>
      </Card>
    );
  if (step.kind === "error")
    return (
      <Card title={step.title}>
        <div className="notice error" role="alert" data-testid="cli-login-error">
          {step.message}
        </div>
        <Link to="/sandboxes">Go to the console</Link>
      </Card>
    );
  // back to this very URL after sign-in, also after an earlier sign-out
  if (!session)
    return <Navigate to="/signin" replace state={{ from: location.pathname + location.search }} />;
  return <Confirm next={step.next} cliVersion={step.cliVersion} />;
}
