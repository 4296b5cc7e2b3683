import { type FormEvent, useEffect, useRef, useState } from "react";
import { Navigate, useLocation } from "react-router-dom";
import { createProbeClient } from "../api/client.js";
import { useAuth } from "../api/context.js";
import { ApiError, unwrap } from "../api/errors.js";
import { credentialKind } from "../api/session.js";
import { ErrorNotice } from "../components/status.js";

/** Sign-in with an API key or an access token, checked with `GET /teams`. */
export function SignInPage() {
  const { session, signIn, endedBecause } = useAuth();
  const location = useLocation();
  const [secret, setSecret] = useState("");
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<unknown>();
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => input.current?.focus(), []);
  const from = (location.state as { from?: string } | null)?.from ?? "/sandboxes";
  if (session) return <Navigate to={from} replace />;

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const value = secret.trim();
    const kind = credentialKind(value);
    if (!kind) {
      setError(new Error("That is neither an API key (e2b_…) nor an access token (sk_e2b_…)."));
      return;
    }
    setPending(true);
    setError(undefined);
    try {
      const teams = await unwrap(createProbeClient({ kind, secret: value }).GET("/teams"));
      const team = teams.find((t) => t.isDefault) ?? teams[0];
      if (!team) throw new Error("The platform knows this credential but lists no team for it.");
      signIn({ kind, secret: value, teamID: team.teamID, teamName: team.name });
    } catch (err) {
      setError(
        err instanceof ApiError && err.status === 401
          ? new ApiError(401, `The platform refused it: ${err.message}`, err.requestId)
          : err,
      );
    } finally {
      setPending(false);
    }
  };

  return (
    <div className="signin">
      <form
        className="signin-card"
        onSubmit={submit}
        aria-labelledby="signin-title"
        data-testid="signin-form"
      >
        <h1 id="signin-title">Sign in to the console</h1>
        <p className="muted" style={{ margin: 0 }}>
          Paste a team API key (<code>e2b_…</code>) or an access token (<code>sk_e2b_…</code>). It stays in
          this browser until you sign out. <code>x keys create NAME</code> on the platform's host makes a key.
        </p>
        {/^\/api\/cli(?:\?|$)/.test(from) && (
          <div className="notice info" role="status" data-testid="signin-for-cli">
            The e2b CLI asks to sign in: sign in here, then confirm it.
          </div>
        )}
        {endedBecause && (
          <div className="notice warn" role="status">
            {endedBecause}
          </div>
        )}
        <label className="field">
          <span>API key or access token</span>
          <input
            type="password"
            name="secret"
            autoComplete="off"
            spellCheck={false}
            ref={input}
            required
            value={secret}
            onChange={(e) => setSecret(e.target.value)}
            placeholder="e2b_… or sk_e2b_…"
            data-testid="signin-key"
          />
        </label>
        <ErrorNotice error={error} title="Could not sign in" />
        <button
          type="submit"
          className="primary"
          disabled={pending || !secret.trim()}
          data-testid="signin-submit"
        >
          {pending ? "Checking…" : "Sign in"}
        </button>
      </form>
    </div>
  );
}
