import type { Kysely } from "kysely";
import { hashSecret, newApiKey, newId, nowIso } from "./ids.js";
import type { ApiKeyRow, Database, Team } from "./schema.js";

export interface CreatedKey {
  key: string;
  row: ApiKeyRow;
}

function maskKey(key: string): string {
  return `${key.slice(0, 8)}...${key.slice(-4)}`;
}

/** Teams and their API keys. Keys are stored as sha256 hashes only. */
export class TeamStore {
  constructor(private readonly db: Kysely<Database>) {}

  async createTeam(name: string, namespace: string): Promise<Team> {
    const team: Team = { id: newId(), name, namespace, created_at: nowIso() };
    await this.db.insertInto("teams").values(team).execute();
    return team;
  }

  async listTeams(): Promise<Team[]> {
    return this.db.selectFrom("teams").selectAll().orderBy("created_at").execute();
  }

  async getTeam(id: string): Promise<Team | undefined> {
    return this.db.selectFrom("teams").selectAll().where("id", "=", id).executeTakeFirst();
  }

  async createKey(teamId: string, name: string): Promise<CreatedKey> {
    const key = newApiKey();
    const row: ApiKeyRow = {
      id: newId(),
      team_id: teamId,
      name,
      key_hash: hashSecret(key),
      key_mask: maskKey(key),
      created_at: nowIso(),
      last_used_at: null,
    };
    await this.db.insertInto("api_keys").values(row).execute();
    return { key, row };
  }

  async listKeys(teamId: string): Promise<ApiKeyRow[]> {
    return this.db
      .selectFrom("api_keys")
      .selectAll()
      .where("team_id", "=", teamId)
      .orderBy("created_at")
      .execute();
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
    return { team, keyId: key_id };
  }

  async touchKey(keyId: string): Promise<void> {
    await this.db.updateTable("api_keys").set({ last_used_at: nowIso() }).where("id", "=", keyId).execute();
  }
}
