import { openStore, SHIPPED_TEMPLATES, type Store, systemTeam } from "@x/platform";
import { createPlatformClient } from "@x/platform-client";
import { CliError, type Connection, endpoints, explain } from "../connection.js";
import { type Io, print } from "../output/io.js";
import { createProgress } from "../output/progress.js";
import { STORE_HELP, STORE_OPTIONS, storeLocation } from "../store-location.js";
import { installShippedTemplate, loadShippedTemplate } from "../template/install.js";
import { parse } from "./args.js";

export const INSTALL_HELP = `x template install NAME... | --all: build the templates that ship with the platform

  ${SHIPPED_TEMPLATES.join(", ")}
  (@e2b/code-interpreter's and @e2b/desktop's defaults; their definitions are in the
  repository's templates/ folder, to read, copy and build FROM)

Run on the platform's host while 'x serve' runs: the templates are built through its API as
the platform's own (system) team and made public, so every team's Sandbox.create() finds them
by name. Progress and build logs are shown as they come. Building again reuses cached layers.

  --all               every template above
  --no-cache          ignore cached layers
  --api-url URL       the platform's API (X_API_URL, E2B_API_URL; default http://localhost:3000)
${STORE_HELP}  --json              machine-readable output
`;

/**
 * Runs `fn` with a connection as the platform's system team: a key made for it in the store and
 * revoked afterwards, whatever happens.
 */
export async function asSystemTeam<T>(
  store: Store,
  at: { apiUrl: string; proxyUrl: string },
  fn: (conn: Connection) => Promise<T>,
): Promise<T> {
  const team = await systemTeam(store);
  const { key, apiKey } = await store.teams.createKey(team.id, "x template install");
  try {
    return await fn({ ...at, apiKey: key, api: createPlatformClient({ baseUrl: at.apiUrl, apiKey: key }) });
  } finally {
    await store.teams.revokeKey(team.id, apiKey.id);
  }
}

/** `x template install NAME... | --all`; returns the exit code. */
export async function templateInstall(argv: string[], io: Io): Promise<number> {
  const command = "x template install";
  const { values, positionals } = parse(command, argv, {
    ...STORE_OPTIONS,
    all: { type: "boolean", default: false },
    "no-cache": { type: "boolean", default: false },
  });
  if (values.help) {
    io.out(INSTALL_HELP);
    return 0;
  }
  const names = values.all ? [...SHIPPED_TEMPLATES] : positionals;
  if (names.length === 0) throw new CliError(`${command}: name a template or pass --all\n${INSTALL_HELP}`, 2);
  const templates = await Promise.all(names.map(loadShippedTemplate));
  const at = endpoints(values);
  const store = await openStore(storeLocation(values as { "data-dir"?: string; "database-url"?: string }));
  const results = [];
  try {
    for (const t of templates) {
      const progress = createProgress(io);
      try {
        const result = await asSystemTeam(store, at, (conn) =>
          installShippedTemplate(conn, t, progress, { skipCache: Boolean(values["no-cache"]) }),
        );
        progress.stop();
        results.push(result);
        if (!values.json)
          io.out(`installed ${t.name} (template ${result.templateID}, build ${result.buildID})\n`);
      } catch (err) {
        progress.stop();
        if (err instanceof CliError) throw err;
        throw new CliError(`${command}: ${t.name}: ${explain(err)}`);
      }
    }
  } finally {
    await store.close();
  }
  if (values.json) print(io, true, results, "");
  return 0;
}
