import { Outlet } from "react-router-dom";
import { useApi } from "../../api/context.js";
import { Tabs } from "../../components/layout.js";

/** The team: usage, keys, tokens and webhooks, one tab each. */
export function TeamLayout() {
  const { session } = useApi();
  return (
    <div className="page">
      <header className="page-header">
        <h1>{session.teamName}</h1>
        <span className="mono faint">{session.teamID}</span>
      </header>
      <Tabs
        label="Team"
        tabs={[
          { to: "/team", label: "Usage and limits", end: true, id: "usage" },
          { to: "/team/api-keys", label: "API keys", id: "api-keys" },
          { to: "/team/access-tokens", label: "Access tokens", id: "access-tokens" },
          { to: "/team/webhooks", label: "Webhooks", id: "webhooks" },
        ]}
      />
      <Outlet />
    </div>
  );
}
