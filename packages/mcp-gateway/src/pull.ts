import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { CATALOG, type CatalogServer, catalogServer, type ServerOptions } from "./catalog.js";
import type { ServerPlan } from "./config.js";
import { createLog } from "./log.js";
import type { GatewayOptions } from "./options.js";
import { type Installed, installed } from "./servers-json.js";
import { Upstream } from "./upstream.js";

/** Options that let a server start for a check: its required ones, with stand-in values. */
function placeholderOptions(server: CatalogServer, scratch: string): ServerOptions {
  const options: ServerOptions = {};
  for (const name of server.required)
    options[name] = server.options[name] === "string[]" ? [scratch] : "placeholder";
  return options;
}

/**
 * `mcp-gateway pull NAME…` (what the client's `Template.addMcpServer` runs at build time):
 * the servers come with the template, so pulling checks, for each name, that it is one of the
 * catalog's, that it is installed in this image and that it starts and answers MCP
 * (initialize, tools/list) with stand-in options. A name that fails any of these fails the
 * pull, and with it the build, rather than a sandbox's start later.
 */
export async function pull(names: string[], o: GatewayOptions): Promise<number> {
  if (names.length === 0) {
    process.stderr.write(
      `mcp-gateway: pull needs server names (these are here: ${Object.keys(CATALOG).join(", ")})\n`,
    );
    return 2;
  }
  const inImage = installed(o);
  const scratch = await mkdtemp(path.join(tmpdir(), "mcp-gateway-pull-"));
  let failed = 0;
  try {
    for (const name of names) {
      const problem = await check(name, inImage, scratch, o);
      if (problem) {
        failed++;
        process.stderr.write(`mcp-gateway: cannot pull '${name}': ${problem}\n`);
      }
    }
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
  return failed === 0 ? 0 : 1;
}

async function check(
  name: string,
  inImage: Record<string, Installed>,
  scratch: string,
  o: GatewayOptions,
): Promise<string | undefined> {
  const server = catalogServer(name);
  if (!server) {
    const custom = name.startsWith("github/") || name.startsWith("custom/");
    return custom
      ? "pull takes the catalog's servers; a github/… or custom/… server is named in the config at start " +
          "(clone and install it in a build step of your own to start it without network)"
      : `it is not an MCP server this gateway has (it has: ${Object.keys(CATALOG).join(", ")})`;
  }
  const bundle = path.join(o.serversDir, name, "bundle.mjs");
  const meta = Object.hasOwn(inImage, name) ? inImage[name] : undefined;
  if (!meta || !existsSync(bundle)) return `it is not installed in this image (${bundle} is missing)`;
  const launch = server.launch(placeholderOptions(server, scratch), { dataDir: scratch });
  const plan: ServerPlan = {
    key: name,
    label: name,
    title: server.title,
    command: process.execPath,
    args: [bundle, ...(launch.args ?? [])],
    env: launch.env ?? {},
  };
  const upstream = new Upstream(
    plan,
    createLog(() => undefined),
  );
  try {
    await upstream.start(o.startTimeoutMs);
    const tools = upstream.capabilities.tools ? (await upstream.client.listTools()).tools.length : 0;
    process.stdout.write(`pulled ${name}: ${meta.title}, ${meta.package} ${meta.version}, ${tools} tools\n`);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  } finally {
    await upstream.close();
  }
}
