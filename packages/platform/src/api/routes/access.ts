import {
  SandboxNotFound,
  SandboxQuotaExceeded,
  SandboxStateConflict,
} from "../../orchestrator/orchestrator.js";
import type { SandboxRow, Store, Team } from "../../store/index.js";
import { conflict, notFound, tooMany, unauthorized } from "../errors.js";
import type { ApiRequest } from "../server.js";
import { ownedBy } from "./present.js";

/** The caller's team; the server has authenticated every operation that has security. */
export function teamOf(request: ApiRequest): Team {
  if (!request.team) throw unauthorized("missing API key: send it in the X-API-Key header");
  return request.team;
}

/** The sandbox of the path, when the caller's team owns it; another team's answers 404 like an unknown one. */
export async function ownedSandbox(store: Store, request: ApiRequest): Promise<SandboxRow> {
  const id = request.params.sandboxID as string;
  const row = await store.sandboxes.get(id);
  if (!ownedBy(row, teamOf(request))) throw notFound(`sandbox ${id} not found`);
  return row;
}

/** Runs an orchestrator action, mapping its errors to API statuses. */
export async function orchestratorAction<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof SandboxNotFound) throw notFound(err.message);
    if (err instanceof SandboxStateConflict) throw conflict(err.message);
    if (err instanceof SandboxQuotaExceeded) throw tooMany(err.message, 5);
    throw err;
  }
}
