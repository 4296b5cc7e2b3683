import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { SecretBox } from "../../src/secrets/secret-box.js";
import { openStore, type RowSealer, type Store } from "../../src/store/index.js";

/** Where the test PostgreSQL lives; `scripts/setup.sh` creates this role. */
export const POSTGRES_ADMIN_URL =
  process.env.X_TEST_POSTGRES_URL ?? "postgres://xsandbox:xsandbox@127.0.0.1:5432/postgres";

export interface TestStore {
  store: Store;
  /** The URL or dir the store was opened with, to open it again (restart tests). */
  options: { databaseUrl?: string; dataDir: string; sealer: RowSealer };
  cleanup(): Promise<void>;
}

/** A fresh, empty store: SQLite in a temp dir, or a new PostgreSQL database. */
export async function freshStore(dialect: "sqlite" | "postgres"): Promise<TestStore> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "x-store-"));
  // the platform's secrets key seals sandboxes' and volumes' tokens; each store its own
  const sealer = SecretBox.of(randomBytes(32));
  if (dialect === "sqlite") {
    const store = await openStore({ dataDir, sealer });
    return {
      store,
      options: { dataDir, sealer },
      cleanup: async () => {
        await store.close();
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  }
  const db = await freshPostgresDatabase();
  const store = await openStore({ databaseUrl: db.url, dataDir, sealer });
  return {
    store,
    options: { databaseUrl: db.url, dataDir, sealer },
    cleanup: async () => {
      await store.close();
      await db.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A new, empty PostgreSQL database (for a test platform's `databaseUrl`), dropped by `drop`. */
export async function freshPostgresDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `x_test_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const admin = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(POSTGRES_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const drop = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
      await drop.connect();
      await drop.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await drop.end();
    },
  };
}

export const DIALECTS = ["sqlite", "postgres"] as const;
