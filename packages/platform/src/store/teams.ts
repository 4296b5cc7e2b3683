import type { Kysely } from "kysely";
import { hashSecret, newApiKey, newId, nowIso } from "../lib/ids.js";
import { type ApiKey, SYSTEM_NAMESPACE, type Team } from "../model/team.js";
import type { ApiKeysTable, Database, TeamsTable } from "./schema.js";

export interface CreatedKey {
  /** The key itself: shown once, never stored. */
  key: string;
  apiKey: ApiKey;
}

function maskKey(key: string): string {
  return `${key.slice(0, 8)}...${key.slice(-4)}`;
}

const decodeTeam = (row: TeamsTable): Team => ({
  id: row.id,
  name: row.name,
  namespace: row.namespace,
  createdAt: row.created_at,
});

const decodeKey = (row: ApiKeysTable): ApiKey => ({
  id: row.id,
  teamId: row.team_id,
  name: row.name,
  keyMask: row.key_mask,
  createdAt: row.created_at,
  lastUsedAt: row.last_used_at,
});

/** Teams and their API keys. Keys are stored as sha256 hashes only. */
export class TeamStore {
  constructor(private readonly db: Kysely<Database>) {}

  async createTeam(name: string, namespace: string): Promise<Team> {
    const row: TeamsTable = { id: newId(), name, namespace, created_at: nowIso() };
    await this.db.insertInto("teams").values(row).execute();
    return decodeTeam(row);
  }

  async listTeams(): Promise<Team[]> {
    return (await this.db.selectFrom("teams").selectAll().orderBy("created_at").execute()).map(decodeTeam);
  }

  /** Teams of users: every team but the one owning the platform's own templates. */
  async userTeams(): Promise<Team[]> {
    return (await this.listTeams()).filter((t) => t.namespace !== SYSTEM_NAMESPACE);
  }

  /** The first user team, made on the platform's first start. */
  async defaultTeam(): Promise<Team> {
    const [team] = await this.userTeams();
    if (!team) throw new Error("no team: start the platform once (x serve) to create the first one");
    return team;
  }

  /** On the platform's first start: the first user team and its first key (returned, shown once). */
  async ensureFirstTeam(): Promise<string | undefined> {
    if ((await this.userTeams()).length > 0) return undefined;
    const team = await this.createTeam("Default team", "default");
    return (await this.createKey(team.id, "first key")).key;
  }

  async getTeam(id: string): Promise<Team | undefined> {
    const row = await this.db.selectFrom("teams").selectAll().where("id", "=", id).executeTakeFirst();
    return row && decodeTeam(row);
  }

  async createKey(teamId: string, name: string): Promise<CreatedKey> {
    const key = newApiKey();
    const row: ApiKeysTable = {
      id: newId(),
      team_id: teamId,
      name,
      key_hash: hashSecret(key),
      key_mask: maskKey(key),
      created_at: nowIso(),
      last_used_at: null,
    };
    await this.db.insertInto("api_keys").values(row).execute();
    return { key, apiKey: decodeKey(row) };
  }

  async listKeys(teamId: string): Promise<ApiKey[]> {
    const rows = await this.db
      .selectFrom("api_keys")
      .selectAll()
      .where("team_id", "=", teamId)
      .orderBy("created_at")
      .execute();
    return rows.map(decodeKey);
  }

  /** Deletes a key of the team; false when the team has no such key. */
  async revokeKey(teamId: string, keyId: string): Promise<boolean> {
    const result = await this.db
      .deleteFrom("api_keys")
      .where("team_id", "=", teamId)
      .where("id", "=", keyId)
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  /** The team a presented key belongs to, or undefined for an unknown key. */
  async teamForKey(key: string): Promise<{ team: Team; keyId: string } | undefined> {
    const row = await this.db
      .selectFrom("api_keys")
      .innerJoin("teams", "teams.id", "api_keys.team_id")
      .select(["teams.id", "teams.name", "teams.namespace", "teams.created_at", "api_keys.id as key_id"])
      .where("api_keys.key_hash", "=", hashSecret(key))
      .executeTakeFirst();
    if (!row) return undefined;
    const { key_id, ...team } = row;
    return { team: decodeTeam(team), keyId: key_id };
  }

  async touchKey(keyId: string): Promise<void> {
    await this.db.updateTable("api_keys").set({ last_used_at: nowIso() }).where("id", "=", keyId).execute();
  }
}
