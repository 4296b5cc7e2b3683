import { notFound, unauthenticated } from "../../model/errors.js";
import { isLive, type Sandbox } from "../../model/sandbox.js";
import type { Team } from "../../model/team.js";
import type { Store } from "../../store/index.js";
import type { ApiRequest } from "../handler.js";

/** The caller's team; the server has authenticated every operation that has security. */
export function teamOf(request: Pick<ApiRequest, "team">): Team {
  if (!request.team) throw unauthenticated("missing API key: send it in the X-API-Key header");
  return request.team;
}

/** A team sees its own live sandboxes only; another team's id answers like an unknown one. */
export function ownedBy(sandbox: Sandbox | undefined, team: Team): sandbox is Sandbox {
  return isLive(sandbox) && sandbox.teamId === team.id;
}

/** The sandbox of the path, when the caller's team owns it; another team's answers 404 like an unknown one. */
export async function ownedSandbox(
  store: Store,
  request: Pick<ApiRequest, "team"> & { params: { sandboxID: string } },
): Promise<Sandbox> {
  const id = request.params.sandboxID;
  const sandbox = await store.sandboxes.get(id);
  if (!ownedBy(sandbox, teamOf(request))) throw notFound(`sandbox ${id} not found`);
  return sandbox;
}
