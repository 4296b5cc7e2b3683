import type { Kysely } from "kysely";
import { nowIso } from "../lib/ids.js";
import type { SealedValue, SecretInfo, SecretSelector } from "../model/secret.js";
import { atomically } from "./atomically.js";
import type { KeysetCursor } from "./paging.js";
import { afterCursor } from "./paging.js";
import type { Database, SecretsTable } from "./schema.js";

export type { SealedValue };

/** The version in use of a secret, sealed, with what it was sealed for. */
export interface CurrentSealedValue extends SealedValue {
  secretId: string;
  version: number;
}

/** Seals a value for one version of one secret (the id and version are its associated data). */
export type Seal = (secretId: string, version: number) => SealedValue;

const decode = (row: SecretsTable): SecretInfo => ({
  id: row.id,
  teamId: row.team_id,
  name: row.name,
  currentVersion: Number(row.current_version),
  metadata: JSON.parse(row.metadata) as Record<string, string>,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

/** Teams' secrets and their sealed versions. No row here holds a value in the clear. */
export class SecretStore {
  constructor(private readonly db: Kysely<Database>) {}

  /** Inserts the secret and its version 1; undefined when the team has one of that name already. */
  async insert(
    s: Pick<SecretInfo, "id" | "teamId" | "name" | "metadata">,
    seal: Seal,
  ): Promise<SecretInfo | undefined> {
    return atomically(this.db, async (db) => {
      const at = nowIso();
      const row: SecretsTable = {
        id: s.id,
        team_id: s.teamId,
        name: s.name,
        current_version: 1,
        metadata: JSON.stringify(s.metadata),
        created_at: at,
        updated_at: at,
      };
      const result = await db
        .insertInto("secrets")
        .values(row)
        .onConflict((oc) => oc.columns(["team_id", "name"]).doNothing())
        .executeTakeFirst();
      if (Number(result.numInsertedOrUpdatedRows ?? 0) === 0) return undefined;
      await this.insertVersion(db, s.id, 1, seal, at);
      return decode(row);
    });
  }

  /**
   * Makes `seal`'s value the secret's next version, and replaces its metadata when given: all
   * of it or none. Undefined when the team has no such secret.
   */
  async addVersion(
    teamId: string,
    selector: SecretSelector,
    metadata: Record<string, string> | undefined,
    seal: Seal,
  ): Promise<SecretInfo | undefined> {
    return atomically(this.db, async (db) => {
      const at = nowIso();
      // the row's update comes first: it holds the row until the transaction ends (PostgreSQL)
      const row = await where(
        db.updateTable("secrets").set((eb) => ({
          current_version: eb("current_version", "+", 1),
          updated_at: at,
          ...(metadata !== undefined ? { metadata: JSON.stringify(metadata) } : {}),
        })),
        teamId,
        selector,
      )
        .returningAll()
        .executeTakeFirst();
      if (!row) return undefined;
      const secret = decode(row);
      await this.insertVersion(db, secret.id, secret.currentVersion, seal, at);
      return secret;
    });
  }

  private async insertVersion(
    db: Kysely<Database>,
    secretId: string,
    version: number,
    seal: Seal,
    at: string,
  ) {
    const sealed = seal(secretId, version);
    await db
      .insertInto("secret_versions")
      .values({
        secret_id: secretId,
        version,
        key_id: sealed.keyId,
        nonce: sealed.nonce,
        ciphertext: sealed.ciphertext,
        created_at: at,
      })
      .execute();
  }

  /** The team's secret; undefined for another team's, as for an unknown one. */
  async get(teamId: string, selector: SecretSelector): Promise<SecretInfo | undefined> {
    const row = await where(this.db.selectFrom("secrets").selectAll(), teamId, selector).executeTakeFirst();
    return row && decode(row);
  }

  /** A page of the team's secrets, newest first. */
  async list(teamId: string, opts: { limit: number; after?: KeysetCursor }): Promise<SecretInfo[]> {
    let q = this.db.selectFrom("secrets").selectAll().where("team_id", "=", teamId);
    if (opts.after) q = q.where(afterCursor("created_at", opts.after));
    const rows = await q.orderBy("created_at", "desc").orderBy("id").limit(opts.limit).execute();
    return rows.map(decode);
  }

  /** Deletes the secret with every version of it; false when the team has no such secret. */
  async delete(teamId: string, selector: SecretSelector): Promise<boolean> {
    // its versions go with it (secret_versions.secret_id is ON DELETE CASCADE)
    const result = await where(this.db.deleteFrom("secrets"), teamId, selector).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  /** The version in use of the team's secret of this (normalised) name, sealed. */
  async current(teamId: string, name: string): Promise<CurrentSealedValue | undefined> {
    const row = await this.db
      .selectFrom("secrets")
      .innerJoin("secret_versions", (j) =>
        j
          .onRef("secret_versions.secret_id", "=", "secrets.id")
          .onRef("secret_versions.version", "=", "secrets.current_version"),
      )
      .select([
        "secrets.id as secretId",
        "secret_versions.version as version",
        "secret_versions.key_id as keyId",
        "secret_versions.nonce as nonce",
        "secret_versions.ciphertext as ciphertext",
      ])
      .where("secrets.team_id", "=", teamId)
      .where("secrets.name", "=", name)
      .executeTakeFirst();
    return row && { ...row, version: Number(row.version) };
  }

  /** How many versions each key sealed: a start tells an operator about a key that differs. */
  async versionsByKey(): Promise<Map<string, number>> {
    const rows = await this.db
      .selectFrom("secret_versions")
      .select((eb) => ["key_id", eb.fn.countAll<number | string>().as("count")])
      .groupBy("key_id")
      .execute();
    return new Map(rows.map((r) => [r.key_id, Number(r.count)]));
  }
}

// biome-ignore lint/suspicious/noExplicitAny: one filter over select, update and delete builders
function where<Q extends { where: (...args: any[]) => any }>(
  q: Q,
  teamId: string,
  selector: SecretSelector,
): Q {
  const byTeam = q.where("team_id", "=", teamId) as Q;
  return (
    "id" in selector ? byTeam.where("id", "=", selector.id) : byTeam.where("name", "=", selector.name)
  ) as Q;
}
