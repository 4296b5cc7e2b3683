/**
 * The MCP servers the gateway ships: each under its key in E2B's catalog (`spec/mcp-server.json`
 * of e2b-dev/E2B, the keys of the public client's `McpServer` type), implemented by a package
 * from the npm registry that is installed into the workspace and bundled into the template
 * (scripts/bundle.mjs), so a sandbox starts them without any network. `everything`, the MCP
 * reference test server, is not in E2B's catalog; it is here for trying clients out.
 */

/** A config value: the catalog's options are strings or lists of strings. */
export type OptionType = "string" | "string[]";

export type ServerOptions = Record<string, string | string[]>;

/** Where a server keeps what it writes (the gateway's data directory). */
export interface LaunchContext {
  dataDir: string;
}

export interface CatalogServer {
  title: string;
  /** The npm package the server is bundled from, and its entry point inside the package. */
  package: string;
  entry: string;
  /** The options its config takes; any other is refused (E2B's schema allows no others). */
  options: Record<string, OptionType>;
  /** Options it cannot start without. */
  required: string[];
  /** What the server needs from outside the sandbox to do anything, for the README and errors. */
  needs?: string;
  /** Its process's arguments and environment for a config that passed the checks. */
  launch(options: ServerOptions, ctx: LaunchContext): { args?: string[]; env?: Record<string, string> };
}

const str = (options: ServerOptions, key: string): string | undefined => {
  const value = options[key];
  return typeof value === "string" ? value : undefined;
};

/** Sets the variables whose options were given. */
function envOf(options: ServerOptions, names: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [variable, option] of Object.entries(names)) {
    const value = str(options, option);
    if (value !== undefined) env[variable] = value;
  }
  return env;
}

export const CATALOG: Record<string, CatalogServer> = {
  filesystem: {
    title: "Filesystem (Reference)",
    package: "@modelcontextprotocol/server-filesystem",
    entry: "dist/index.js",
    options: { paths: "string[]" },
    required: ["paths"],
    launch: (o) => ({ args: (o.paths as string[]) ?? [] }),
  },
  memory: {
    title: "Memory (Reference)",
    package: "@modelcontextprotocol/server-memory",
    entry: "dist/index.js",
    options: {},
    required: [],
    launch: (_o, ctx) => ({ env: { MEMORY_FILE_PATH: `${ctx.dataDir}/memory.jsonl` } }),
  },
  sequentialthinking: {
    title: "Sequential Thinking (Reference)",
    package: "@modelcontextprotocol/server-sequential-thinking",
    entry: "dist/index.js",
    options: {},
    required: [],
    launch: () => ({}),
  },
  everything: {
    title: "Everything (MCP's reference test server)",
    package: "@modelcontextprotocol/server-everything",
    entry: "dist/index.js",
    options: {},
    required: [],
    launch: () => ({ args: ["stdio"] }),
  },
  github: {
    title: "GitHub (Archived)",
    package: "@modelcontextprotocol/server-github",
    entry: "dist/index.js",
    options: { personalAccessToken: "string" },
    required: ["personalAccessToken"],
    needs: "api.github.com",
    launch: (o) => ({ env: envOf(o, { GITHUB_PERSONAL_ACCESS_TOKEN: "personalAccessToken" }) }),
  },
  slack: {
    title: "Slack (Archived)",
    package: "@modelcontextprotocol/server-slack",
    entry: "dist/index.js",
    options: { botToken: "string", teamId: "string", channelIds: "string" },
    required: ["botToken", "teamId"],
    needs: "slack.com",
    launch: (o) => ({
      env: envOf(o, {
        SLACK_BOT_TOKEN: "botToken",
        SLACK_TEAM_ID: "teamId",
        SLACK_CHANNEL_IDS: "channelIds",
      }),
    }),
  },
  googleMaps: {
    title: "Google Maps (Archived)",
    package: "@modelcontextprotocol/server-google-maps",
    entry: "dist/index.js",
    options: { googleMapsApiKey: "string" },
    required: ["googleMapsApiKey"],
    needs: "maps.googleapis.com",
    launch: (o) => ({ env: envOf(o, { GOOGLE_MAPS_API_KEY: "googleMapsApiKey" }) }),
  },
  brave: {
    title: "Brave Search",
    package: "@brave/brave-search-mcp-server",
    entry: "dist/index.js",
    options: { apiKey: "string" },
    required: ["apiKey"],
    needs: "api.search.brave.com",
    launch: (o) => ({ args: ["--transport", "stdio"], env: envOf(o, { BRAVE_API_KEY: "apiKey" }) }),
  },
  notion: {
    title: "Notion",
    package: "@notionhq/notion-mcp-server",
    entry: "bin/cli.mjs",
    options: { internalIntegrationToken: "string" },
    required: ["internalIntegrationToken"],
    needs: "api.notion.com",
    launch: (o) => ({
      args: ["--transport", "stdio"],
      env: envOf(o, { NOTION_TOKEN: "internalIntegrationToken" }),
    }),
  },
};

export function catalogServer(name: string): CatalogServer | undefined {
  return Object.hasOwn(CATALOG, name) ? CATALOG[name] : undefined;
}
