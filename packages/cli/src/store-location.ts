import { DEFAULTS } from "@x/platform";

/** The options that say where the platform's store is, shared by every command that opens it. */
export const STORE_OPTIONS = {
  "data-dir": { type: "string" },
  "database-url": { type: "string" },
} as const;

export const STORE_HELP = `  --data-dir DIR      store, images and sandboxes (X_DATA_DIR, default ${DEFAULTS.dataDir})
  --database-url URL  postgres://… to use PostgreSQL (X_DATABASE_URL; SQLite by default)
`;

export function storeLocation(values: { "data-dir"?: string; "database-url"?: string }): {
  dataDir: string;
  databaseUrl?: string;
} {
  return {
    dataDir: values["data-dir"] ?? process.env.X_DATA_DIR ?? DEFAULTS.dataDir,
    databaseUrl: values["database-url"] ?? process.env.X_DATABASE_URL,
  };
}
