import { useState } from "react";
import { NavLink, Outlet } from "react-router-dom";
import { useAuth, useConfig } from "../api/context.js";
import { maskSecret } from "../api/session.js";
import { loadTheme, setTheme, type ThemeChoice } from "./theme.js";

const NAV: { to: string; label: string; id: string; clusterOnly?: boolean }[] = [
  { to: "/sandboxes", label: "Sandboxes", id: "sandboxes" },
  { to: "/templates", label: "Templates", id: "templates" },
  { to: "/snapshots", label: "Snapshots", id: "snapshots" },
  { to: "/volumes", label: "Volumes", id: "volumes" },
  { to: "/team", label: "Team", id: "team" },
  { to: "/cluster", label: "Cluster", id: "cluster", clusterOnly: true },
];

function ThemePicker() {
  const [choice, setChoice] = useState<ThemeChoice>(loadTheme);
  return (
    <label className="row" style={{ gap: 6 }}>
      <span>Theme</span>
      <select
        value={choice}
        onChange={(e) => {
          const next = e.target.value as ThemeChoice;
          setChoice(next);
          setTheme(next);
        }}
        aria-label="Colour theme"
      >
        <option value="system">System</option>
        <option value="light">Light</option>
        <option value="dark">Dark</option>
      </select>
    </label>
  );
}

/** The signed-in frame: navigation, the team, sign-out, and the page. */
export function Layout() {
  const { session, signOut } = useAuth();
  const config = useConfig();
  return (
    <div className="shell">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <nav className="sidebar" aria-label="Main">
        <div className="brand">
          x <small>console</small>
        </div>
        {NAV.filter((n) => !n.clusterOnly || config.cluster).map((n) => (
          <NavLink key={n.to} to={n.to} className="nav-link" data-testid={`nav-${n.id}`}>
            {n.label}
          </NavLink>
        ))}
        <div className="sidebar-footer">
          <span className="team" title={session?.teamID}>
            {session?.teamName}
          </span>
          <span className="mono faint">{session && maskSecret(session.secret)}</span>
          <ThemePicker />
          <button type="button" className="small" onClick={() => signOut()} data-testid="signout">
            Sign out
          </button>
          <span className="faint">platform {config.version}</span>
        </div>
      </nav>
      <main id="main" className="main" tabIndex={-1}>
        <Outlet />
      </main>
    </div>
  );
}

/** The tabs of a page, as links (each tab has its own URL). */
export function Tabs({
  tabs,
  label,
}: {
  tabs: { to: string; label: string; end?: boolean; id: string }[];
  label: string;
}) {
  return (
    <nav className="tabs" aria-label={label}>
      {tabs.map((t) => (
        <NavLink key={t.to} to={t.to} end={t.end} className="tab" data-testid={`tab-${t.id}`}>
          {t.label}
        </NavLink>
      ))}
    </nav>
  );
}
