/**
 * What placement needs of a sandbox create, read from its body as the spec types it: the
 * template's memory, build and layers (a node with them goes first), the runtime, and the node
 * of the volumes it mounts (the only node that will do).
 */
import type { BodyOf } from "../api/handler.js";
import { DomainError } from "../model/errors.js";
import type { Team } from "../model/team.js";
import { parseTemplateRef } from "../model/template.js";
import type { Store } from "../store/index.js";
import type { PlacementRequest } from "./placement.js";

/** Memory a sandbox is counted with when its template says nothing (E2B's default). */
const DEFAULT_MEMORY_MB = 512;
const HINT_TTL_MS = 5000;
const MAX_HINTS = 10_000;

export type CreateBody = BodyOf<"createSandbox"> | BodyOf<"createSandboxLegacy">;

export function sandboxPlacement(store: Store): (team: Team, body: CreateBody) => Promise<PlacementRequest> {
  /**
   * The build a template name stands for, as placement weighs it (memory, pool, layers), kept a
   * few seconds: a tag moved meanwhile only makes one placement less apt, as the node resolves
   * the name itself.
   */
  const hints = new Map<string, { at: number; hint: Partial<PlacementRequest> }>();
  async function buildHint(team: Team, templateID: string): Promise<Partial<PlacementRequest>> {
    const key = `${team.id}\0${templateID}`;
    const kept = hints.get(key);
    if (kept && Date.now() - kept.at < HINT_TTL_MS) return kept.hint;
    const ref = parseTemplateRef(templateID);
    const template = await store.templates.resolveTemplate(ref, team).catch(() => undefined);
    const build = template && (await store.templates.buildForTag(template.id, ref.tag));
    const hint = build ? { memoryMB: build.memoryMB, buildId: build.id, layers: build.layers } : {};
    if (hints.size >= MAX_HINTS) hints.clear();
    hints.set(key, { at: Date.now(), hint });
    return hint;
  }

  return async (team, body) => {
    const request: PlacementRequest = { memoryMB: DEFAULT_MEMORY_MB };
    if (body.runtime) request.runtime = body.runtime;
    Object.assign(request, await buildHint(team, body.templateID));
    // the legacy body has no volumes
    for (const mount of ("volumeMounts" in body ? body.volumeMounts : undefined) ?? []) {
      const volume = await store.volumes.byName(team.id, mount.name);
      if (!volume?.nodeId) continue; // the node answers the 400 naming it
      if (request.nodeId && request.nodeId !== volume.nodeId) {
        throw new DomainError(
          "invalid",
          `volumes '${mount.name}' and another of this create live on different nodes (${volume.nodeId}, ${request.nodeId}): one sandbox can mount volumes of one node`,
        );
      }
      request.nodeId = volume.nodeId;
    }
    return request;
  };
}
