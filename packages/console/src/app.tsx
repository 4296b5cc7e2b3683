import { useQuery } from "@tanstack/react-query";
import { lazy, type ReactNode, Suspense } from "react";
import { Navigate, Route, Routes, useLocation } from "react-router-dom";
import { loadConfig } from "./api/config.js";
import { AuthProvider, ConfigProvider, useAuth, useConfig } from "./api/context.js";
import { errorMessage } from "./api/errors.js";
import { Layout } from "./components/layout.js";
import { Loading } from "./components/status.js";
import { CliLoginPage } from "./pages/cli-login-page.js";
import { ClusterPage } from "./pages/cluster-page.js";
import { NotFoundPage } from "./pages/not-found-page.js";
import { EventsTab } from "./pages/sandbox/events-tab.js";
import { LogsTab } from "./pages/sandbox/logs-tab.js";
import { NetworkTab } from "./pages/sandbox/network-tab.js";
import { OverviewTab } from "./pages/sandbox/overview-tab.js";
import { SandboxLayout } from "./pages/sandbox/sandbox-layout.js";
import { SandboxesPage } from "./pages/sandboxes/sandboxes-page.js";
import { SignInPage } from "./pages/sign-in.js";
import { SnapshotsPage } from "./pages/snapshots-page.js";
import { AccessTokensTab, ApiKeysTab } from "./pages/team/keys-tabs.js";
import { TeamLayout } from "./pages/team/team-layout.js";
import { UsageTab } from "./pages/team/usage-tab.js";
import { WebhookPage } from "./pages/team/webhook-page.js";
import { WebhooksTab } from "./pages/team/webhooks-tab.js";
import { BuildPage } from "./pages/templates/build-page.js";
import { TemplatePage } from "./pages/templates/template-page.js";
import { TemplatesPage } from "./pages/templates/templates-page.js";
import { VolumePage } from "./pages/volumes/volume-page.js";
import { VolumesPage } from "./pages/volumes/volumes-page.js";

/** xterm.js comes with the first terminal opened, and envd's client with the first envd tab. */
const TerminalTab = lazy(() => import("./pages/sandbox/terminal-tab.js"));
const FilesTab = lazy(() => import("./pages/sandbox/files-tab.js"));

function RequireSession({ children }: { children: ReactNode }) {
  const { session, signedOut } = useAuth();
  const location = useLocation();
  // back to where the user was after a refused credential, not after signing out
  const state = signedOut ? undefined : { from: location.pathname + location.search };
  if (!session) return <Navigate to="/signin" replace state={state} />;
  return children;
}

function ClusterOnly({ children }: { children: ReactNode }) {
  return useConfig().cluster ? children : <Navigate to="/sandboxes" replace />;
}

function AppRoutes() {
  return (
    <Routes>
      <Route path="/signin" element={<SignInPage />} />
      {/* `e2b auth login` opens `${E2B_DOCS_BASE}/api/cli`; the page asks for a session itself */}
      <Route path="/api/cli" element={<CliLoginPage />} />
      <Route
        element={
          <RequireSession>
            <Layout />
          </RequireSession>
        }
      >
        <Route index element={<Navigate to="/sandboxes" replace />} />
        <Route path="sandboxes" element={<SandboxesPage />} />
        <Route path="sandboxes/:sandboxID" element={<SandboxLayout />}>
          <Route index element={<OverviewTab />} />
          <Route
            path="terminal"
            element={
              <Suspense fallback={<Loading label="Loading the terminal…" />}>
                <TerminalTab />
              </Suspense>
            }
          />
          <Route
            path="files"
            element={
              <Suspense fallback={<Loading label="Loading files…" />}>
                <FilesTab />
              </Suspense>
            }
          />
          <Route path="logs" element={<LogsTab />} />
          <Route path="events" element={<EventsTab />} />
          <Route path="network" element={<NetworkTab />} />
        </Route>
        <Route path="templates" element={<TemplatesPage />} />
        <Route path="templates/:templateID" element={<TemplatePage />} />
        <Route path="templates/:templateID/builds/:buildID" element={<BuildPage />} />
        <Route path="snapshots" element={<SnapshotsPage />} />
        <Route path="volumes" element={<VolumesPage />} />
        <Route path="volumes/:volumeID" element={<VolumePage />} />
        <Route path="team" element={<TeamLayout />}>
          <Route index element={<UsageTab />} />
          <Route path="api-keys" element={<ApiKeysTab />} />
          <Route path="access-tokens" element={<AccessTokensTab />} />
          <Route path="webhooks" element={<WebhooksTab />} />
          <Route path="webhooks/:webhookID" element={<WebhookPage />} />
        </Route>
        <Route
          path="cluster"
          element={
            <ClusterOnly>
              <ClusterPage />
            </ClusterOnly>
          }
        />
        <Route path="*" element={<NotFoundPage />} />
      </Route>
    </Routes>
  );
}

/** The console once the platform has said how to reach it (config.json). */
export function App() {
  const config = useQuery({
    queryKey: ["config"],
    queryFn: ({ signal }) => loadConfig(signal),
    staleTime: Number.POSITIVE_INFINITY,
    retry: 1,
  });
  if (config.isPending) return <Loading label="Connecting to the platform…" />;
  if (config.error)
    return (
      <div className="signin">
        <div className="signin-card">
          <h1>The console cannot start</h1>
          <div className="notice error" role="alert">
            {errorMessage(config.error)}
          </div>
          <button type="button" onClick={() => void config.refetch()}>
            Try again
          </button>
        </div>
      </div>
    );
  return (
    <ConfigProvider config={config.data}>
      <AuthProvider>
        <AppRoutes />
      </AuthProvider>
    </ConfigProvider>
  );
}
