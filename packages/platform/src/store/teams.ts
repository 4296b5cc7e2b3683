import type { Kysely } from "kysely";
import {
  ACCESS_TOKEN_PREFIX,
  API_KEY_PREFIX,
  hashSecret,
  newAccessToken,
  newApiKey,
  newId,
  nowIso,
} from "../lib/ids.js";
import {
  type ApiKey,
  type CredentialKind,
  LIMIT_NAMES,
  perLimit,
  SYSTEM_NAMESPACE,
  type Team,
  type TeamLimits,
} from "../model/team.js";
import { atomically } from "./atomically.js";
import type { ApiKeysTable, Database, TeamsTable } from "./schema.js";

export interface CreatedKey {
  /** The key itself: shown once, never stored. */
  key: string;
  apiKey: ApiKey;
}

/** What tells a key or token from others without giving it away: its prefix, 4 characters more and its last 4. */
function maskKey(key: string): string {
  const prefix = key.startsWith(ACCESS_TOKEN_PREFIX) ? ACCESS_TOKEN_PREFIX : API_KEY_PREFIX;
  return `${key.slice(0, prefix.length + 4)}...${key.slice(-4)}`;
}

/** The column of each limit in `teams`. */
const LIMIT_COLUMNS = {
  sandboxes: "limit_sandboxes",
  cpuCount: "limit_cpu_count",
  memoryMB: "limit_memory_mb",
  diskSizeMB: "limit_disk_mb",
  timeoutSeconds: "limit_timeout_s",
  volumes: "limit_volumes",
  volumeSizeMB: "limit_volume_size_mb",
  templates: "limit_templates",
  snapshots: "limit_snapshots",
  forkCount: "limit_fork_count",
  uploads: "limit_uploads",
  uploadsMB: "limit_uploads_mb",
} as const satisfies { [K in keyof TeamLimits]: keyof TeamsTable };

const decodeTeam = (row: TeamsTable): Team => ({
  id: row.id,
  name: row.name,
  namespace: row.namespace,
  createdAt: row.created_at,
  limits: perLimit((n) => row[LIMIT_COLUMNS[n]] ?? null),
});

const TEAM_COLUMNS = [
  "teams.id",
  "teams.name",
  "teams.namespace",
  "teams.created_at",
  ...LIMIT_NAMES.map((n) => `teams.${LIMIT_COLUMNS[n]}` as const),
] as const;

/** What the credentials table holds: what authenticates, and refresh tokens (which only refresh). */
type StoredKind = CredentialKind | "refresh_token";

const decodeKey = (row: ApiKeysTable): ApiKey => ({
  id: row.id,
  teamId: row.team_id,
  name: row.name,
  keyMask: row.key_mask,
  createdAt: row.created_at,
  lastUsedAt: row.last_used_at,
  kind: row.kind === "api_key" ? "api_key" : "access_token",
});

/** Teams and their API keys. Keys are stored as sha256 hashes only. */
export class TeamStore {
  constructor(private readonly db: Kysely<Database>) {}

  async createTeam(name: string, namespace: string): Promise<Team> {
    const row: TeamsTable = {
      id: newId(),
      name,
      namespace,
      created_at: nowIso(),
      ...(Object.fromEntries(LIMIT_NAMES.map((n) => [LIMIT_COLUMNS[n], null])) as {
        [K in (typeof LIMIT_COLUMNS)[keyof TeamLimits]]: null;
      }),
    };
    await this.db.insertInto("teams").values(row).execute();
    return decodeTeam(row);
  }

  /** Sets the given limits (null: back to the platform's); the others stay. */
  async setLimits(teamId: string, limits: Partial<TeamLimits>): Promise<Team | undefined> {
    const set = Object.fromEntries(
      LIMIT_NAMES.filter((n) => limits[n] !== undefined).map((n) => [LIMIT_COLUMNS[n], limits[n]]),
    );
    if (Object.keys(set).length > 0)
      await this.db.updateTable("teams").set(set).where("id", "=", teamId).execute();
    return this.getTeam(teamId);
  }

  /**
   * Deletes a team and, by the schema's cascades, its keys, templates and builds. Its sandboxes,
   * snapshots and volumes must be gone first (the caller ends them): their rows outlive teams.
   */
  async deleteTeam(teamId: string): Promise<boolean> {
    const result = await this.db.deleteFrom("teams").where("id", "=", teamId).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  /** A team by its ID, its namespace or its name (when one team has it). */
  async findTeam(ref: string): Promise<Team | undefined> {
    const rows = await this.db
      .selectFrom("teams")
      .selectAll()
      .where((eb) => eb.or([eb("id", "=", ref), eb("namespace", "=", ref), eb("name", "=", ref)]))
      .execute();
    const exact = rows.find((r) => r.id === ref) ?? rows.find((r) => r.namespace === ref);
    if (exact) return decodeTeam(exact);
    return rows.length === 1 ? decodeTeam(rows[0] as TeamsTable) : undefined;
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

  async createKey(
    teamId: string,
    name: string,
    opts: { kind?: StoredKind; mintedBy?: string } = {},
  ): Promise<CreatedKey> {
    const kind = opts.kind ?? "api_key";
    const key = kind === "api_key" ? newApiKey() : newAccessToken();
    const row: ApiKeysTable = {
      id: newId(),
      team_id: teamId,
      name,
      key_hash: hashSecret(key),
      key_mask: maskKey(key),
      created_at: nowIso(),
      last_used_at: null,
      kind,
      minted_by: opts.mintedBy ?? null,
    };
    await this.db.insertInto("api_keys").values(row).execute();
    return { key, apiKey: decodeKey(row) };
  }

  /** An access token, with its refresh token when asked (what `e2b auth login` is given). */
  async createAccessToken(
    teamId: string,
    name: string,
    refreshable: boolean,
  ): Promise<CreatedKey & { refreshToken?: string }> {
    return this.transaction(async (teams) => {
      const token = await teams.createKey(teamId, name, { kind: "access_token" });
      if (!refreshable) return token;
      const refresh = await teams.createKey(teamId, name, {
        kind: "refresh_token",
        mintedBy: token.apiKey.id,
      });
      return { ...token, refreshToken: refresh.key };
    });
  }

  /**
   * Trades a refresh token for a new access token and refresh token; the old pair is revoked
   * with what was made for it (each refresh token is used once). Undefined for an unknown or
   * used refresh token.
   */
  async refreshAccessToken(
    refreshToken: string,
  ): Promise<{ accessToken: string; refreshToken: string } | undefined> {
    return this.transaction(async (teams) => {
      const refresh = await teams.credentialRow(refreshToken, "refresh_token");
      const tokenId = refresh?.minted_by;
      if (!refresh || !tokenId) return undefined;
      await teams.revokeKey(refresh.team_id, tokenId, "access_token");
      const next = await teams.createAccessToken(refresh.team_id, refresh.name, true);
      return { accessToken: next.key, refreshToken: next.refreshToken as string };
    });
  }

  /** Revokes a refresh token's access token (and all made for it), or an access token given itself. */
  async revokeByToken(token: string): Promise<void> {
    await this.transaction(async (teams) => {
      const refresh = await teams.credentialRow(token, "refresh_token");
      if (refresh?.minted_by)
        return void (await teams.revokeKey(refresh.team_id, refresh.minted_by, "access_token"));
      const access = await teams.credentialRow(token, "access_token");
      if (access) await teams.revokeKey(access.team_id, access.id, "access_token");
    });
  }

  private credentialRow(secret: string, kind: StoredKind): Promise<ApiKeysTable | undefined> {
    return this.db
      .selectFrom("api_keys")
      .selectAll()
      .where("key_hash", "=", hashSecret(secret))
      .where("kind", "=", kind)
      .executeTakeFirst();
  }

  /**
   * A key for the holder of an access token (what `GET /teams` hands the e2b CLI): a new one each
   * time, replacing the one made for the same token before, so keys do not pile up.
   */
  async mintKeyForToken(teamId: string, tokenId: string, name: string): Promise<CreatedKey> {
    return this.transaction(async (teams) => {
      await teams.db
        .deleteFrom("api_keys")
        .where("minted_by", "=", tokenId)
        .where("kind", "=", "api_key")
        .execute();
      return teams.createKey(teamId, name, { mintedBy: tokenId });
    });
  }

  async listKeys(teamId: string, kind: CredentialKind = "api_key"): Promise<ApiKey[]> {
    const rows = await this.db
      .selectFrom("api_keys")
      .selectAll()
      .where("team_id", "=", teamId)
      .where("kind", "=", kind)
      .orderBy("created_at")
      .execute();
    return rows.map(decodeKey);
  }

  /** Renames a key of the team; undefined when the team has no such key of that kind. */
  async renameKey(teamId: string, keyId: string, name: string, kind: CredentialKind = "api_key") {
    await this.db
      .updateTable("api_keys")
      .set({ name })
      .where("team_id", "=", teamId)
      .where("id", "=", keyId)
      .where("kind", "=", kind)
      .execute();
    const row = await this.db
      .selectFrom("api_keys")
      .selectAll()
      .where("team_id", "=", teamId)
      .where("id", "=", keyId)
      .where("kind", "=", kind)
      .executeTakeFirst();
    return row && decodeKey(row);
  }

  /** Deletes a key (or token) of the team and the keys made for it; false when the team has no such one. */
  async revokeKey(teamId: string, keyId: string, kind: CredentialKind = "api_key"): Promise<boolean> {
    return this.transaction(async (teams) => {
      const result = await teams.db
        .deleteFrom("api_keys")
        .where("team_id", "=", teamId)
        .where("id", "=", keyId)
        .where("kind", "=", kind)
        .executeTakeFirst();
      if (Number(result.numDeletedRows) === 0) return false;
      await teams.db.deleteFrom("api_keys").where("minted_by", "=", keyId).execute();
      return true;
    });
  }

  /** The team a presented key or token belongs to, or undefined for an unknown one. */
  async teamForKey(
    key: string,
    kind: CredentialKind = "api_key",
  ): Promise<{ team: Team; keyId: string; keyName: string } | undefined> {
    const row = await this.db
      .selectFrom("api_keys")
      .innerJoin("teams", "teams.id", "api_keys.team_id")
      .select([...TEAM_COLUMNS, "api_keys.id as key_id", "api_keys.name as key_name"])
      .where("api_keys.key_hash", "=", hashSecret(key))
      .where("api_keys.kind", "=", kind)
      .executeTakeFirst();
    if (!row) return undefined;
    const { key_id, key_name, ...team } = row;
    return { team: decodeTeam(team), keyId: key_id, keyName: key_name };
  }

  private transaction<T>(fn: (teams: TeamStore) => Promise<T>): Promise<T> {
    return atomically(this.db, (db) => fn(db === this.db ? this : new TeamStore(db)));
  }

  async touchKey(keyId: string): Promise<void> {
    await this.db.updateTable("api_keys").set({ last_used_at: nowIso() }).where("id", "=", keyId).execute();
  }
}
