import type { Schemas } from "@x/platform-client";
import { conflict, forbidden, invalid, notFound } from "../../model/errors.js";
import { identityTokensOf } from "../../model/identity.js";
import type { EgressPolicy, StoredEgressProxy } from "../../model/network.js";
import type { RuntimeName, Sandbox } from "../../model/sandbox.js";
import { checkResources, effectiveLimits, type PlatformLimits, type Team } from "../../model/team.js";
import { isShippedTemplate, notInstalledMessage, parseTemplateRef } from "../../model/template.js";
import type { EgressProxyInput } from "../../network/byop.js";
import type { CreateTicket } from "../../orchestrator/create.js";
import type { Orchestrator } from "../../orchestrator/orchestrator.js";
import type { Store } from "../../store/index.js";
import type { Volumes } from "../../volumes/volumes.js";
import type { ApiRequest, HandlersFor, ParamsOf } from "../handler.js";
import { type IdempotentCreates, requestHashOf } from "../idempotent-create.js";
import { pageOf } from "../paging.js";
import { ownedSandbox, teamOf } from "./access.js";
import { type EgressConfig, egressPolicy } from "./egress-policy.js";
import { ingressPolicy } from "./ingress-policy.js";
import {
  type PresentOptions,
  presentListedSandbox,
  presentSandbox,
  presentSandboxDetail,
} from "./present.js";

export interface SandboxRoutesOptions extends PresentOptions {
  store: Store;
  orchestrator: Orchestrator;
  volumes: Volumes;
  /** The platform's limits (live sandboxes of a team, longest timeout…); a team's own may lower them. */
  limits: PlatformLimits;
  availableRuntimes: RuntimeName[];
  /**
   * Runtimes a create may ask for; every available one when unset. An operator leaves runc out
   * so that no tenant's code shares the host's kernel without gVisor between them.
   */
  tenantRuntimes?: RuntimeName[];
  /**
   * Checks a sandbox's own SOCKS5 proxy (`network.egressProxy`) and seals its password; without
   * it, a request with one is refused.
   */
  checkEgressProxy?(input: EgressProxyInput): Promise<StoredEgressProxy>;
  /** Told how long each successful create took, for the platform's metrics. */
  observeCreate?(runtime: RuntimeName, seconds: number): void;
  /** Creates under an `Idempotency-Key` (api/idempotent-create.ts). */
  idempotentCreates: IdempotentCreates;
}

const DEFAULT_TIMEOUT_SECONDS = 300;

/** A create sent by a cluster's api carries its ticket here (store/create-tickets.ts). */
export const CREATE_TICKET_HEADER = "x-create-ticket";

function decodeFilterPart(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    throw invalid(`metadata filter: '${part}' is not valid percent-encoding`);
  }
}

/** The metadata filter arrives as a query string inside one query parameter (so it is decoded twice). */
function parseMetadataFilter(raw: string | undefined): Record<string, string> | undefined {
  if (!raw) return undefined;
  const out: Record<string, string> = {};
  for (const [k, v] of new URLSearchParams(raw)) out[decodeFilterPart(k)] = decodeFilterPart(v);
  return out;
}

type SandboxOps =
  | "createSandbox"
  | "createSandboxLegacy"
  | "listSandboxes"
  | "listSandboxesLegacy"
  | "getSandbox"
  | "killSandbox"
  | "pauseSandbox"
  | "resumeSandbox"
  | "connectSandbox"
  | "connectSandboxLegacy"
  | "setSandboxTimeout"
  | "updateSandboxNetwork"
  | "refreshSandbox";

/** A time parameter as the store keeps times (ISO 8601, UTC), or a 400. */
function isoTime(value: string, name: string): string {
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw invalid(`${name} must be an RFC 3339 time, got '${value}'`);
  return new Date(ms).toISOString();
}

/** Sandboxes: create, list, get, kill, pause, resume and connect, timeouts and network. */
export function sandboxRoutes(o: SandboxRoutesOptions): HandlersFor<SandboxOps> {
  const owned = (request: Pick<ApiRequest, "team"> & { params: { sandboxID: string } }) =>
    ownedSandbox(o.store, request);

  const limitsOf = (team: Team) => effectiveLimits(team, o.limits);

  function checkTimeout(team: Team, timeout: number, min: number): void {
    const max = limitsOf(team).timeoutSeconds;
    if (timeout < min || timeout > max) {
      throw invalid(`timeout must be between ${min} and ${max} seconds, got ${timeout}`);
    }
  }

  /** The template a list filter names (by ID or name): none when there is no such template. */
  async function templateIdsNamed(team: Team, name: string): Promise<string[]> {
    const template = await o.store.templates.resolveTemplate(parseTemplateRef(name), team);
    return template && (template.teamId === team.id || template.public) ? [template.id] : [];
  }

  /** The ticket a cluster's api sent the create with, if it did. */
  function sentTicket(request: Pick<ApiRequest, "req">): string | undefined {
    const header = request.req.headers[CREATE_TICKET_HEADER];
    return (Array.isArray(header) ? header[0] : header) || undefined;
  }

  /** The create's hold on its ticket: the sandbox lives only by it (store/create-tickets.ts). */
  function ticketOf(key: string | undefined, team: Team): CreateTicket | undefined {
    if (!key) return undefined;
    const calledOff = () =>
      conflict("the api that sent this create called it off (it lost this node's answer): create again");
    return {
      claim: async (sandboxId) => {
        if (!(await o.store.createTickets.claim(key, team.id, o.store.nodeId, sandboxId))) throw calledOff();
      },
      confirm: async (sandboxId) => {
        if (!(await o.store.createTickets.confirm(key, sandboxId))) throw calledOff();
      },
    };
  }

  /** The egress policy of a request: its lists and rules checked first, then its proxy. */
  async function egressOf(config: EgressConfig): Promise<EgressPolicy> {
    if (!config.egressProxy || !o.checkEgressProxy) return egressPolicy(config);
    const policy = egressPolicy({ ...config, egressProxy: undefined });
    return { ...policy, egressProxy: await o.checkEgressProxy(config.egressProxy) };
  }

  /**
   * A create, once per `Idempotency-Key` when it has one: the sandbox a key made answers every
   * request with that key (api/idempotent-create.ts).
   */
  async function createOnce(
    request: Pick<ApiRequest, "team" | "req" | "op"> & { params: { "Idempotency-Key"?: string } },
    body: Schemas["NewSandboxV2"],
  ): Promise<Schemas["Sandbox"]> {
    const key = request.params["Idempotency-Key"];
    if (!key) return (await create(request, body, sentTicket(request))).answer;
    const team = teamOf(request);
    return o.idempotentCreates.once({
      team,
      key,
      requestHash: requestHashOf(request.op.id, body),
      ticket: sentTicket(request),
      attempt: (ticket) => create(request, body, ticket),
      replay: async (sandboxId) => {
        const sandbox = await o.store.sandboxes.get(sandboxId);
        if (!sandbox) throw notFound(`sandbox '${sandboxId}', made with this Idempotency-Key, is gone`);
        return presentSandbox(sandbox, o);
      },
      endCalledOff: (sandboxId) => o.store.sandboxes.endCalledOff(sandboxId),
    });
  }

  async function create(
    request: Pick<ApiRequest, "team" | "req">,
    body: Schemas["NewSandboxV2"],
    ticket: string | undefined,
  ): Promise<{ sandboxId: string; answer: Schemas["Sandbox"] }> {
    const team = teamOf(request);
    const timeout = body.timeout ?? DEFAULT_TIMEOUT_SECONDS;
    checkTimeout(team, timeout, 1);
    const identityTokens = identityTokensOf(body.iam);
    // as the client itself checks: traffic cannot resume a sandbox whose memory was not kept
    if (body.autoPauseMemory === false && body.autoResume?.enabled) {
      throw invalid(
        "autoResume: true is not a valid value when keepMemory: false - a filesystem-only snapshot cannot be auto-resumed by traffic and must be resumed explicitly using Sandbox.connect().",
      );
    }
    const egress = await egressOf({ ...body.network, allow_internet_access: body.allow_internet_access });
    const ingress = ingressPolicy(body.network);
    if (body.runtime && !o.availableRuntimes.includes(body.runtime)) {
      throw invalid(
        `runtime ${body.runtime} is not available here (available: ${o.availableRuntimes.join(", ")})`,
      );
    }
    if (body.runtime && o.tenantRuntimes && !o.tenantRuntimes.includes(body.runtime)) {
      throw forbidden(
        `runtime ${body.runtime} is not offered to tenants here: the operator allows ${o.tenantRuntimes.join(", ")} (x serve --tenant-runtimes)`,
      );
    }
    const ref = parseTemplateRef(body.templateID);
    const template = await o.store.templates.resolveTemplate(ref, team);
    if (!template) {
      const shipped = isShippedTemplate(ref.name) && !ref.namespace;
      throw notFound(shipped ? notInstalledMessage(ref.name) : `template '${body.templateID}' not found`);
    }
    if (template.teamId !== team.id && !template.public) {
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
      throw invalid(`build ${build.id} of template '${body.templateID}' is ${build.status}, not ready`);
    }
    checkResources(team, o.limits, build, `template '${body.templateID}'`);
    const volumeMounts = body.volumeMounts?.length
      ? await o.volumes.resolveMounts(team, body.volumeMounts)
      : undefined;
    const started = performance.now();
    const sandbox = await o.orchestrator.create({
      team,
      template,
      build,
      alias: ref.namespace || ref.name !== template.id ? body.templateID.split(":")[0] : undefined,
      timeoutSeconds: timeout,
      metadata: body.metadata ?? {},
      envVars: body.envVars ?? {},
      egress,
      ingress,
      autoPause: body.autoPause ?? false,
      autoPauseMemory: body.autoPauseMemory ?? true,
      autoResume: body.autoResume?.enabled ?? false,
      runtime: body.runtime,
      volumeMounts,
      identityTokens,
      maxLivePerTeam: limitsOf(team).sandboxes,
      ticket: ticketOf(ticket, team),
    });
    o.observeCreate?.(sandbox.runtime, (performance.now() - started) / 1000);
    // as a read of its record answers (clientID is its node), so that a replay answers the same
    const made = { ...sandbox, nodeId: sandbox.nodeId ?? o.store.nodeId };
    return { sandboxId: sandbox.id, answer: presentSandbox(made, o) };
  }

  async function list(
    request: Pick<ApiRequest, "team"> & { params: ParamsOf<"listSandboxes"> },
    paged: boolean,
  ): Promise<{ items: Sandbox[]; headers: Record<string, string> }> {
    const team = teamOf(request);
    const { params } = request;
    const filter = {
      teamId: team.id,
      states: params.state,
      metadata: parseMetadataFilter(params.metadata),
      startedAfter:
        params.startedAfter === undefined ? undefined : isoTime(params.startedAfter, "startedAfter"),
      templateIds: params.template === undefined ? undefined : await templateIdsNamed(team, params.template),
      order: params.order,
    };
    if (!paged) return { items: await o.store.sandboxes.list({ ...filter, limit: 10_000 }), headers: {} };
    return pageOf((limit, after) => o.store.sandboxes.list({ ...filter, limit, after }), {
      limit: params.limit,
      nextToken: params.nextToken,
      keyOf: (s) => ({ time: s.startedAt, id: s.id }),
    });
  }

  /**
   * Resumes a paused sandbox (`connect` also extends a running one's timeout, `resume` refuses
   * it); says whether it was paused.
   */
  async function connect(
    request: Pick<ApiRequest, "team"> & { params: { sandboxID: string }; body?: { timeout?: number } },
    op: "resume" | "connect" = "connect",
  ): Promise<{ resumed: boolean; body: Schemas["Sandbox"] }> {
    const sandbox = await owned(request);
    const team = teamOf(request);
    const timeout = request.body?.timeout;
    if (timeout !== undefined) checkTimeout(team, timeout, 0);
    const { sandbox: after, resumed } = await o.orchestrator.resume(
      sandbox.id,
      timeout,
      op,
      limitsOf(team).sandboxes,
    );
    return { resumed, body: presentSandbox(after, o) };
  }

  async function connectReply(request: Parameters<typeof connect>[0]) {
    const { resumed, body } = await connect(request, "connect");
    return resumed ? { status: 201 as const, body } : { status: 200 as const, body };
  }

  return {
    createSandbox: async (r) => ({ status: 201, body: await createOnce(r, r.body) }),
    createSandboxLegacy: async (r) => ({ status: 201, body: await createOnce(r, r.body) }),
    listSandboxes: async (r) => {
      const { items, headers } = await list(r, true);
      return { status: 200, body: items.map((s) => presentListedSandbox(s, o)), headers };
    },
    listSandboxesLegacy: async (r) => {
      const { items } = await list(r, false);
      return { status: 200, body: items.map((s) => presentListedSandbox(s, o)) };
    },
    getSandbox: async (r) => ({ status: 200, body: presentSandboxDetail(await owned(r), o) }),
    killSandbox: async (r) => {
      await o.orchestrator.kill((await owned(r)).id);
      return { status: 204 };
    },
    pauseSandbox: async (r) => {
      const sandbox = await owned(r);
      // `memory: false` asks for a filesystem-only pause: resume boots the sandbox again.
      const keepMemory = r.body?.memory !== false;
      await o.orchestrator.pause(sandbox.id, keepMemory ? "frozen" : "stopped");
      return { status: 204 };
    },
    resumeSandbox: async (r) => ({ status: 201, body: (await connect(r, "resume")).body }),
    connectSandbox: connectReply,
    connectSandboxLegacy: connectReply,
    setSandboxTimeout: async (r) => {
      const sandbox = await owned(r);
      checkTimeout(teamOf(r), r.body.timeout, 0);
      await o.orchestrator.setTimeout(sandbox.id, r.body.timeout);
      return { status: 204 };
    },
    updateSandboxNetwork: async (r) => {
      const sandbox = await owned(r);
      await o.orchestrator.setEgress(sandbox.id, await egressOf(r.body));
      return { status: 204 };
    },
    refreshSandbox: async (r) => {
      const sandbox = await owned(r);
      const duration = r.body?.duration ?? 60;
      if (duration < 0 || duration > 3600) {
        throw invalid(`duration must be between 0 and 3600 seconds, got ${duration}`);
      }
      const wanted = Date.now() + duration * 1000;
      if (wanted > Date.parse(sandbox.endAt)) await o.orchestrator.setTimeout(sandbox.id, duration);
      return { status: 204 };
    },
  };
}
