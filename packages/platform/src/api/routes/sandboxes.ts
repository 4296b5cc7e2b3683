import type { Orchestrator } from "../../orchestrator/orchestrator.js";
import type { RuntimeName } from "../../runtime/container-runtime.js";
import { parseTemplateRef, type SandboxRow, type Store } from "../../store/index.js";
import { badRequest, conflict, forbidden, notFound } from "../errors.js";
import type { ApiRequest, Handler, Reply } from "../server.js";
import { orchestratorAction as act, ownedSandbox, teamOf } from "./access.js";
import { decodeCursor, encodeCursor } from "./cursor.js";
import { type EgressConfig, type IngressConfig, internetAccess } from "./network-policy.js";
import {
  type PresentOptions,
  presentListedSandbox,
  presentSandbox,
  presentSandboxDetail,
} from "./present.js";

export interface SandboxRoutesOptions extends PresentOptions {
  store: Store;
  orchestrator: Orchestrator;
  /** Live sandboxes one team may hold at once. */
  maxSandboxesPerTeam: number;
  /** Longest timeout a sandbox may ask for, in seconds. */
  maxTimeoutSeconds: number;
  availableRuntimes: RuntimeName[];
  /** Told how long each successful create took, for the platform's metrics. */
  observeCreate?(runtime: RuntimeName, seconds: number): void;
}

interface NewSandboxBody {
  templateID: string;
  timeout?: number;
  autoPause?: boolean;
  autoResume?: { enabled: boolean };
  metadata?: Record<string, string>;
  envVars?: Record<string, string>;
  allow_internet_access?: boolean;
  network?: Omit<EgressConfig, "allow_internet_access"> & IngressConfig;
  runtime?: RuntimeName;
  /** Sent by newer clients; not supported here. */
  iam?: { tokens?: Record<string, unknown> };
  volumeMounts?: unknown[];
}

const DEFAULT_TIMEOUT_SECONDS = 300;

function decodeFilterPart(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    throw badRequest(`metadata filter: '${part}' is not valid percent-encoding`);
  }
}

/** The metadata filter arrives as a query string inside one query parameter (so it is decoded twice). */
function parseMetadataFilter(raw: unknown): Record<string, string> | undefined {
  if (typeof raw !== "string" || raw === "") return undefined;
  const out: Record<string, string> = {};
  for (const [k, v] of new URLSearchParams(raw)) out[decodeFilterPart(k)] = decodeFilterPart(v);
  return out;
}

export function sandboxRoutes(o: SandboxRoutesOptions): Record<string, Handler> {
  const owned = (request: ApiRequest): Promise<SandboxRow> => ownedSandbox(o.store, request);

  async function create(request: ApiRequest): Promise<Reply> {
    const team = teamOf(request);
    const body = request.body as NewSandboxBody;
    const timeout = body.timeout ?? DEFAULT_TIMEOUT_SECONDS;
    if (timeout < 1 || timeout > o.maxTimeoutSeconds) {
      throw badRequest(`timeout must be between 1 and ${o.maxTimeoutSeconds} seconds, got ${timeout}`);
    }
    if (body.iam?.tokens && Object.keys(body.iam.tokens).length > 0) {
      throw badRequest("iam tokens are not supported by this server yet: create the sandbox without iam");
    }
    if (body.volumeMounts?.length) {
      throw badRequest(
        "volume mounts are not supported by this server yet: create the sandbox without volumeMounts",
      );
    }
    const allowInternet = internetAccess(
      { ...body.network, allow_internet_access: body.allow_internet_access },
      body.network,
    );
    if (body.runtime && !o.availableRuntimes.includes(body.runtime)) {
      throw badRequest(
        `runtime ${body.runtime} is not available here (available: ${o.availableRuntimes.join(", ")})`,
      );
    }
    const ref = parseTemplateRef(body.templateID);
    const template = await o.store.templates.resolveTemplate(ref, team);
    if (!template) throw notFound(`template '${body.templateID}' not found`);
    if (template.team_id !== team.id && !template.public) {
      throw forbidden(`template '${body.templateID}' belongs to another team and is not public`);
    }
    const build = await o.store.templates.buildForTag(template.id, ref.tag);
    if (!build) {
      throw notFound(
        ref.tag
          ? `template '${body.templateID}' has no tag '${ref.tag}'`
          : `template '${body.templateID}' has no ready build`,
      );
    }
    if (build.status !== "ready") {
      throw badRequest(`build ${build.id} of template '${body.templateID}' is ${build.status}, not ready`);
    }
    const started = performance.now();
    const row = await act(() =>
      o.orchestrator.create({
        team,
        template,
        build,
        alias: ref.namespace || ref.name !== template.id ? body.templateID.split(":")[0] : undefined,
        timeoutSeconds: timeout,
        metadata: body.metadata ?? {},
        envVars: body.envVars ?? {},
        allowInternet,
        autoPause: body.autoPause ?? false,
        autoResume: body.autoResume?.enabled ?? false,
        runtime: body.runtime,
        maxLivePerTeam: o.maxSandboxesPerTeam,
      }),
    );
    o.observeCreate?.(row.runtime, (performance.now() - started) / 1000);
    return { status: 201, body: presentSandbox(row, o) };
  }

  async function list(request: ApiRequest, paged: boolean): Promise<Reply> {
    const team = teamOf(request);
    const limit = (request.params.limit as number | undefined) ?? 100;
    const after = paged ? decodeCursor(request.params.nextToken) : undefined;
    const states = request.params.state as SandboxRow["state"][] | undefined;
    const rows = await o.store.sandboxes.list({
      teamId: team.id,
      states,
      metadata: parseMetadataFilter(request.params.metadata),
      limit: paged ? limit + 1 : 10_000,
      after: after && { startedAt: after[0], id: after[1] },
    });
    const page = paged ? rows.slice(0, limit) : rows;
    const last = page.at(-1);
    const headers: Record<string, string> =
      paged && rows.length > limit && last
        ? { "X-Next-Token": encodeCursor([last.started_at, last.id]) }
        : {};
    return { status: 200, body: page.map((r) => presentListedSandbox(r, o)), headers };
  }

  async function connect(request: ApiRequest): Promise<Reply> {
    const row = await owned(request);
    const timeout = (request.body as { timeout?: number } | undefined)?.timeout;
    if (timeout !== undefined && (timeout < 0 || timeout > o.maxTimeoutSeconds)) {
      throw badRequest(`timeout must be between 0 and ${o.maxTimeoutSeconds} seconds`);
    }
    const { row: after, resumed } = await act(() => o.orchestrator.resume(row.id, timeout));
    return { status: resumed ? 201 : 200, body: presentSandbox(after, o) };
  }

  return {
    createSandbox: create,
    createSandboxLegacy: create,
    listSandboxes: (r) => list(r, true),
    listSandboxesLegacy: (r) => list(r, false),
    getSandbox: async (r) => ({ status: 200, body: presentSandboxDetail(await owned(r), o) }),
    killSandbox: async (r) => {
      const row = await owned(r);
      await act(() => o.orchestrator.kill(row.id));
      return { status: 204 };
    },
    pauseSandbox: async (r) => {
      const row = await owned(r);
      // `memory: false` asks for a filesystem-only pause: resume boots the sandbox again.
      const keepMemory = (r.body as { memory?: boolean } | undefined)?.memory !== false;
      await act(() => o.orchestrator.pause(row.id, keepMemory ? "frozen" : "stopped"));
      return { status: 204 };
    },
    resumeSandbox: async (r) => {
      const row = await owned(r);
      if (row.state !== "paused") throw conflict(`sandbox ${row.id} is already running`);
      return connect(r);
    },
    connectSandbox: connect,
    connectSandboxLegacy: connect,
    setSandboxTimeout: async (r) => {
      const row = await owned(r);
      const timeout = (r.body as { timeout: number }).timeout;
      if (timeout < 0 || timeout > o.maxTimeoutSeconds) {
        throw badRequest(`timeout must be between 0 and ${o.maxTimeoutSeconds} seconds, got ${timeout}`);
      }
      await act(() => o.orchestrator.setTimeout(row.id, timeout));
      return { status: 204 };
    },
    updateSandboxNetwork: async (r) => {
      const row = await owned(r);
      const allowed = internetAccess(r.body as EgressConfig);
      await act(() => o.orchestrator.setInternet(row.id, allowed));
      return { status: 204 };
    },
    refreshSandbox: async (r) => {
      const row = await owned(r);
      const duration = (r.body as { duration?: number } | undefined)?.duration ?? 60;
      if (duration < 0 || duration > 3600) {
        throw badRequest(`duration must be between 0 and 3600 seconds, got ${duration}`);
      }
      const wanted = Date.now() + duration * 1000;
      if (wanted > Date.parse(row.end_at)) await act(() => o.orchestrator.setTimeout(row.id, duration));
      return { status: 204 };
    },
  };
}
