import { type Kysely, sql } from "kysely";
import type { SealedValue } from "../model/secret.js";
import type { Database } from "./schema.js";

/**
 * Seals the values the platform must read back in clear (a sandbox's envd and traffic access
 * tokens, its SOCKS5 proxy's password, a volume's token) with the secrets key, each bound to its
 * row and field. The platform's SecretBox (secrets/secret-box.ts) is one.
 */
export interface RowSealer {
  readonly keyId: string;
  sealBound(value: string, binding: string): string;
  openBound(text: string, binding: string): string;
  /** A value sealed as a secret's version is: the egress proxy passwords of before rows were bound. */
  open(sealed: SealedValue, secretId: string, version: number): string;
}

/** How bound sealed values start (secret-box.ts); anything else in such a column is from before sealing. */
const SEALED = "$x1$";

/** What an egress proxy password was sealed for before it was bound to its sandbox. */
const LEGACY_PASSWORD_PURPOSE = "egress-proxy";

/** Where a sealed value belongs: what it is bound to. */
export const binding = {
  envdToken: (sandboxId: string) => `sandbox:${sandboxId}:envd-access-token`,
  trafficToken: (sandboxId: string) => `sandbox:${sandboxId}:traffic-access-token`,
  proxyPassword: (sandboxId: string) => `sandbox:${sandboxId}:egress-proxy-password`,
  volumeToken: (volumeId: string) => `volume:${volumeId}:token`,
};

/**
 * The store's side of sealing: without a sealer (a process given no secrets key: `x api`, the
 * CLI's tools) a sealed value can be neither written nor read, and says so.
 */
export class Sealing {
  constructor(private readonly sealer: RowSealer | undefined) {}

  get available(): boolean {
    return this.sealer !== undefined;
  }

  seal(value: string, bound: string): string {
    return this.need().sealBound(value, bound);
  }

  /** A stored value in clear; one from before sealing (not yet sealed at start) as it is. */
  open(stored: string, bound: string): string {
    return stored.startsWith(SEALED) ? this.need().openBound(stored, bound) : stored;
  }

  /** A stored proxy password: bound text, or the sealed object of before. */
  openPassword(stored: string | SealedValue, sandboxId: string): string {
    return typeof stored === "string"
      ? this.open(stored, binding.proxyPassword(sandboxId))
      : this.need().open(stored, LEGACY_PASSWORD_PURPOSE, 0);
  }

  private need(): RowSealer {
    if (!this.sealer)
      throw new Error(
        "sandbox and volume tokens are sealed with the secrets key, and this process was not given it (--secrets-key-file)",
      );
    return this.sealer;
  }
}

/** Whether a stored value is sealed. */
export function isSealed(stored: string | null): boolean {
  return stored === null || stored.startsWith(SEALED);
}

/**
 * Seals what rows from before sealing hold in clear (or sealed unbound): envd and traffic
 * tokens, egress proxy passwords, volume tokens. Run at every start given the key; each row is
 * changed only if it still holds what was read, so nodes starting at once do no harm.
 */
export async function sealClearRows(db: Kysely<Database>, sealer: RowSealer): Promise<number> {
  const sealing = new Sealing(sealer);
  let sealed = 0;
  const like = `${SEALED}%`;
  const sandboxes = await db
    .selectFrom("sandboxes")
    .select(["id", "envd_access_token", "traffic_access_token", "egress"])
    .where((eb) =>
      eb.or([
        eb("envd_access_token", "not like", like),
        eb.and([eb("traffic_access_token", "is not", null), eb("traffic_access_token", "not like", like)]),
        eb("egress", "like", '%"password":{%'),
      ]),
    )
    .execute();
  for (const row of sandboxes) {
    const egress = row.egress
      ? (JSON.parse(row.egress) as { egressProxy?: { password?: unknown } })
      : undefined;
    const password = egress?.egressProxy?.password;
    if (egress?.egressProxy && password !== undefined && typeof password !== "string") {
      egress.egressProxy.password = sealer.sealBound(
        sealing.openPassword(password as SealedValue, row.id),
        binding.proxyPassword(row.id),
      );
    }
    const result = await db
      .updateTable("sandboxes")
      .set({
        envd_access_token: isSealed(row.envd_access_token)
          ? row.envd_access_token
          : sealer.sealBound(row.envd_access_token, binding.envdToken(row.id)),
        traffic_access_token: isSealed(row.traffic_access_token)
          ? row.traffic_access_token
          : sealer.sealBound(row.traffic_access_token!, binding.trafficToken(row.id)),
        egress: egress ? JSON.stringify(egress) : row.egress,
      })
      .where("id", "=", row.id)
      .where("envd_access_token", "=", row.envd_access_token)
      .where(sql<boolean>`coalesce(egress, '') = ${row.egress ?? ""}`)
      .executeTakeFirst();
    sealed += Number(result.numUpdatedRows);
  }
  const volumes = await db
    .selectFrom("volumes")
    .select(["id", "token"])
    .where("token", "not like", like)
    .execute();
  for (const row of volumes) {
    const result = await db
      .updateTable("volumes")
      .set({ token: sealer.sealBound(row.token, binding.volumeToken(row.id)) })
      .where("id", "=", row.id)
      .where("token", "=", row.token)
      .executeTakeFirst();
    sealed += Number(result.numUpdatedRows);
  }
  return sealed;
}
