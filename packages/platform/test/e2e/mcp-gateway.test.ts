/**
 * The public client's MCP gateway against the platform, with the `mcp-gateway` template
 * installed as an operator installs it (`x template install`), under runc and gVisor:
 * `Sandbox.create({ mcp })` starts the gateway in the sandbox, and the official MCP client
 * (Streamable HTTP) reaches it at `sandbox.getMcpUrl()`, the proxy's HTTPS URL of port 50005,
 * with `getMcpToken()`. The servers come with the template: the sandbox reaches nothing
 * outside it. Also E2B's own case (a create with `mcp` from `base` fails and leaves no
 * sandbox) and `Template.addMcpServer` at build time.
 */
import { readFileSync } from "node:fs";
import https from "node:https";
import path from "node:path";
import { Readable } from "node:stream";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Sandbox, type SandboxOpts, Template } from "e2b";
import { pointE2bClient, startTestPlatform, TEST_DATA_DIR, type TestPlatform } from "../helpers/platform.js";
import { installShippedTemplates, SHIPPED_STORE } from "../helpers/shipped-templates.js";

beforeAll(() => installShippedTemplates(["mcp-gateway"]), 45 * 60_000);

/** A stdio MCP server of a few lines, a user's own (`custom/<name>`), written where it runs. */
const ECHO_SERVER = readFileSync(
  path.resolve(__dirname, "../../../mcp-gateway/test/fixtures/echo-server.cjs"),
);

const MCP: SandboxOpts["mcp"] = {
  filesystem: { paths: ["/home/user"] },
  memory: {},
  "custom/echo": {
    runCmd: `echo ${ECHO_SERVER.toString("base64")} | base64 -d > /tmp/echo-server.cjs && exec node /tmp/echo-server.cjs`,
    envs: { GREETING: "hello" },
  },
} as unknown as SandboxOpts["mcp"];

/**
 * A fetch that opens `https://{name}:{port}/…` at this host's loopback address, with the
 * URL's name for SNI and Host and the platform's CA: the proxy's HTTPS URLs as built, without
 * a resolver for their names. Bodies stream both ways (the MCP client's SSE streams).
 */
function loopbackFetch(ca: Buffer): typeof fetch {
  return async (input, init = {}) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const headers: Record<string, string> = { host: url.host };
    new Headers(init.headers).forEach((value, key) => {
      headers[key] = value;
    });
    const body = init.body == null ? undefined : Buffer.from(await new Response(init.body).arrayBuffer());
    return new Promise<Response>((resolve, reject) => {
      const req = https.request(
        {
          host: "127.0.0.1",
          port: url.port,
          path: `${url.pathname}${url.search}`,
          method: init.method ?? "GET",
          servername: url.hostname,
          ca,
          headers,
          agent: false,
        },
        (res) => {
          const out = new Headers();
          for (const [key, value] of Object.entries(res.headers)) {
            if (value !== undefined) out.set(key, Array.isArray(value) ? value.join(", ") : value);
          }
          const status = res.statusCode ?? 502;
          const stream = [204, 205, 304].includes(status) ? null : (Readable.toWeb(res) as ReadableStream);
          resolve(new Response(stream, { status, headers: out }));
        },
      );
      init.signal?.addEventListener("abort", () => req.destroy(new Error("aborted")), { once: true });
      req.on("error", reject);
      req.end(body);
    });
  };
}

const textOf = (result: object) =>
  (("content" in result ? result.content : []) as { text?: string }[]).map((c) => c.text ?? "").join("");

describe.each(["runc", "runsc"] as const)("the MCP gateway on %s", (runtime) => {
  let t: TestPlatform;
  let restoreEnv = () => {};
  let ca: Buffer;
  let sandbox: Sandbox | undefined;

  beforeAll(async () => {
    t = await startTestPlatform({
      runtime,
      databaseUrl: SHIPPED_STORE,
      config: { warmPoolSize: 1, tlsPort: 0 },
    });
    restoreEnv = pointE2bClient(t);
    ca = readFileSync(t.platform.caFile ?? path.join(TEST_DATA_DIR, "tls", "ca.pem"));
    sandbox = await Sandbox.create({ mcp: MCP, timeoutMs: 300_000 });
  }, 180_000);

  afterAll(async () => {
    await sandbox?.kill().catch(() => undefined);
    restoreEnv();
    await t?.stop();
  }, 120_000);

  async function mcpClient(token: string): Promise<Client> {
    const client = new Client({ name: "e2e", version: "1.0.0" });
    const transport = new StreamableHTTPClientTransport(new URL(sandbox!.getMcpUrl()), {
      fetch: loopbackFetch(ca),
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    });
    await client.connect(transport);
    return client;
  }

  test("Sandbox.create({ mcp }) starts the gateway: its token is the client's, in a file only root reads", async () => {
    const token = await sandbox!.getMcpToken();
    expect(token).toMatch(/^[0-9a-f-]{36}$/);
    expect(await sandbox!.files.read("/etc/mcp-gateway/.token", { user: "root" })).toBe(token);
    const perms = await sandbox!.commands.run("stat -c '%a %U' /etc/mcp-gateway /etc/mcp-gateway/.token", {
      user: "root",
    });
    expect(perms.stdout.trim().split("\n")).toEqual(["700 root", "600 root"]);
    // the sandbox's own user (what agents' code runs as) cannot read it
    await expect(sandbox!.commands.run("cat /etc/mcp-gateway/.token")).rejects.toMatchObject({
      exitCode: 1,
      stderr: expect.stringMatching(/Permission denied/),
    });
    // a client that connects later reads the token from the file
    expect(await (await Sandbox.connect(sandbox!.sandboxId)).getMcpToken()).toBe(token);
    expect(sandbox!.getMcpUrl()).toBe(`https://${sandbox!.getHost(50005)}/mcp`);
    expect(sandbox!.getMcpUrl()).toMatch(
      new RegExp(`^https://50005-${sandbox!.sandboxId}\\.[^/]+:${t.platform.tlsPort}/mcp$`),
    );
  });

  test("the official MCP client, at getMcpUrl() through the proxy: tools of every server, listed and called", async () => {
    await sandbox!.files.write("/home/user/notes.txt", "written by the test");
    const client = await mcpClient((await sandbox!.getMcpToken())!);
    try {
      expect(client.getServerVersion()).toMatchObject({ name: "mcp-gateway" });
      const tools = (await client.listTools()).tools.map((tool) => tool.name);
      expect(tools).toEqual(
        expect.arrayContaining([
          "filesystem__read_text_file",
          "filesystem__list_allowed_directories",
          "memory__create_entities",
          "memory__read_graph",
          "echo__say",
        ]),
      );
      const file = await client.callTool({
        name: "filesystem__read_text_file",
        arguments: { path: "/home/user/notes.txt" },
      });
      expect(textOf(file)).toBe("written by the test");
      const outside = await client.callTool({
        name: "filesystem__read_text_file",
        arguments: { path: "/etc/shadow" },
      });
      expect([outside.isError, textOf(outside)]).toEqual([
        true,
        expect.stringMatching(/outside allowed directories/),
      ]);

      await client.callTool({
        name: "memory__create_entities",
        arguments: { entities: [{ name: "Grace", entityType: "person", observations: ["found a moth"] }] },
      });
      expect(textOf(await client.callTool({ name: "memory__read_graph", arguments: {} }))).toMatch(/Grace/);
      expect(textOf(await client.callTool({ name: "echo__say", arguments: { text: "hi" } }))).toBe(
        "hi (from /, hello)",
      );
    } finally {
      await client.close();
    }
  });

  test("without the token, or with another, the gateway answers 401", async () => {
    const doFetch = loopbackFetch(ca);
    const initialize = {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "x", version: "1" } },
    };
    for (const authorization of [undefined, "Bearer not-the-token"]) {
      const res = await doFetch(sandbox!.getMcpUrl(), {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          ...(authorization ? { authorization } : {}),
        },
        body: JSON.stringify(initialize),
      });
      expect([authorization, res.status]).toEqual([authorization, 401]);
    }
    await expect(mcpClient("not-the-token")).rejects.toMatchObject({ code: 401 });
  });
});

describe("starts that fail kill their sandbox (runc)", () => {
  let t: TestPlatform;
  let restoreEnv = () => {};

  beforeAll(async () => {
    t = await startTestPlatform({ runtime: "runc", databaseUrl: SHIPPED_STORE });
    restoreEnv = pointE2bClient(t);
  });

  afterAll(async () => {
    restoreEnv();
    await t?.stop();
  }, 120_000);

  /** E2B's own test (create.test.ts), and the same with the gateway's template and a server it does not have. */
  test.each([
    ["base, which has no gateway", "base", { invalid_server: {} }, /Failed to start MCP gateway/],
    [
      "mcp-gateway, with a server it does not have",
      "mcp-gateway",
      { invalid_server: {} },
      /Failed to start MCP gateway: mcp-gateway: 'invalid_server' is not an MCP server this gateway has/,
    ],
  ])(
    "%s",
    async (_what, template, mcp, message) => {
      const metadata = { mcpGatewayCleanupTestId: crypto.randomUUID() };
      const query = { state: ["running" as const], metadata };
      let remaining: Awaited<ReturnType<ReturnType<typeof Sandbox.list>["nextItems"]>> = [];
      try {
        await expect(
          Sandbox.create(template, { timeoutMs: 60_000, metadata, mcp: mcp as never }),
        ).rejects.toThrow(message);
        remaining = await Sandbox.list({ query }).nextItems();
        expect(remaining).toEqual([]);
      } finally {
        await Promise.all(remaining.map((s) => Sandbox.kill(s.sandboxId).catch(() => false)));
      }
    },
    120_000,
  );
});

describe("Template.addMcpServer (runc)", () => {
  let t: TestPlatform;
  let restoreEnv = () => {};
  const name = `mcp-test-${Date.now().toString(36)}`;

  beforeAll(async () => {
    t = await startTestPlatform({ runtime: "runc", databaseUrl: SHIPPED_STORE });
    restoreEnv = pointE2bClient(t);
  });

  afterAll(async () => {
    // the templates this made, the failed build's included, in the shipped templates' store
    const headers = { "X-API-Key": t.apiKey };
    for (const alias of [name, `${name}-bad`]) {
      const found = await fetch(`${t.apiUrl}/templates/aliases/${alias}`, { headers });
      if (!found.ok) continue;
      const { templateID } = (await found.json()) as { templateID: string };
      await fetch(`${t.apiUrl}/templates/${templateID}`, { method: "DELETE", headers });
    }
    restoreEnv();
    await t?.stop();
  }, 120_000);

  test("pulls a server it has into a template of one's own, and fails the build for one it does not", async () => {
    await Template.build(Template().fromTemplate("mcp-gateway").addMcpServer(["memory"]), name);
    const sandbox = await Sandbox.create(name, { mcp: { memory: {} }, timeoutMs: 120_000 });
    try {
      expect(await sandbox.getMcpToken()).toMatch(/^[0-9a-f-]{36}$/);
    } finally {
      await sandbox.kill();
    }
    const logs: string[] = [];
    const failing = Template.build(
      Template()
        .fromTemplate("mcp-gateway")
        .addMcpServer(["exa" as "memory"]),
      `${name}-bad`,
      { onBuildLogs: (entry) => logs.push(entry.message) },
    );
    await expect(failing).rejects.toThrow(/mcp-gateway pull exa/);
    expect(logs.join("\n")).toMatch(/cannot pull 'exa': it is not an MCP server this gateway has/);
  }, 600_000);
});
