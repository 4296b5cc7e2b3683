import { ConfigError, planServers } from "./config.js";

const ctx = { nodePath: "/usr/local/bin/node", serversDir: "/gw/servers", dataDir: "/var/lib/mcp-gateway" };

function problemsOf(config: unknown): string[] {
  try {
    planServers(config, ctx);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  throw new Error("the config was accepted");
}

describe("planServers", () => {
  test("catalog servers run their bundle with the gateway's node, options as arguments and variables", () => {
    const plans = planServers(
      {
        filesystem: { paths: ["/home/user", "/tmp"] },
        memory: {},
        github: { personalAccessToken: "ghp_x" },
        slack: { botToken: "xoxb", teamId: "T1" },
      },
      ctx,
    );
    expect(plans.map((p) => [p.key, p.label, p.command, p.args, p.env])).toEqual([
      [
        "filesystem",
        "filesystem",
        ctx.nodePath,
        ["/gw/servers/filesystem/bundle.mjs", "/home/user", "/tmp"],
        {},
      ],
      [
        "memory",
        "memory",
        ctx.nodePath,
        ["/gw/servers/memory/bundle.mjs"],
        { MEMORY_FILE_PATH: "/var/lib/mcp-gateway/memory.jsonl" },
      ],
      [
        "github",
        "github",
        ctx.nodePath,
        ["/gw/servers/github/bundle.mjs"],
        { GITHUB_PERSONAL_ACCESS_TOKEN: "ghp_x" },
      ],
      [
        "slack",
        "slack",
        ctx.nodePath,
        ["/gw/servers/slack/bundle.mjs"],
        { SLACK_BOT_TOKEN: "xoxb", SLACK_TEAM_ID: "T1" },
      ],
    ]);
  });

  test("null options are none", () => {
    expect(planServers({ memory: null }, ctx).map((p) => p.key)).toEqual(["memory"]);
  });

  test("github/<owner>/<repo> is cloned into the data dir and run there, labelled by the repository", () => {
    const [plan] = planServers(
      {
        "github/acme/weather.mcp": { runCmd: "node dist/index.js", installCmd: "npm ci", envs: { KEY: "v" } },
      },
      ctx,
    );
    expect(plan).toEqual({
      key: "github/acme/weather.mcp",
      label: "weather-mcp",
      title: "acme/weather.mcp (GitHub)",
      command: "/bin/bash",
      args: ["--norc", "--noprofile", "-c", "node dist/index.js"],
      env: { KEY: "v" },
      cwd: "/var/lib/mcp-gateway/github/acme/weather.mcp",
      prepare: {
        cloneUrl: "https://github.com/acme/weather.mcp.git",
        dir: "/var/lib/mcp-gateway/github/acme/weather.mcp",
        installCmd: "npm ci",
      },
    });
  });

  test("custom/<name> runs its command where it says, with no clone", () => {
    const [plan] = planServers({ "custom/echo": { runCmd: "python3 echo.py", cwd: "/opt/echo" } }, ctx);
    expect(plan).toMatchObject({
      label: "echo",
      command: "/bin/bash",
      args: ["--norc", "--noprofile", "-c", "python3 echo.py"],
      cwd: "/opt/echo",
    });
    expect(plan?.prepare).toBeUndefined();
    expect(planServers({ "custom/echo": { runCmd: "x" } }, ctx)[0]?.cwd).toBe("/");
  });

  test("every problem is named at once", () => {
    expect(
      problemsOf({
        invalid_server: {},
        filesystem: { path: "/tmp" },
        memory: { extra: 1 },
        github: { personalAccessToken: 7 },
        "custom/1bad": { runCmd: "x" },
        "custom/ok": { installCmd: "make" },
        "github/only-owner": { runCmd: "x" },
      }),
    ).toEqual([
      expect.stringMatching(
        /^'invalid_server' is not an MCP server this gateway has \(it has: filesystem, memory, .*custom\/<name>/,
      ),
      "'filesystem' has no option 'path' (its options: paths)",
      "'filesystem' needs the option 'paths'",
      "'memory' has no option 'extra' (it takes none)",
      "'github': personalAccessToken must be a string",
      "'custom/1bad': a custom server's name is letters, digits and dashes, starting with a letter (it prefixes its tools)",
      "'custom/ok': runCmd must be a command",
      "'github/only-owner': a GitHub server is named 'github/<owner>/<repo>'",
    ]);
  });

  test("two servers that would share a label are refused", () => {
    expect(problemsOf({ memory: {}, "custom/memory": { runCmd: "x" } })).toEqual([
      "'memory' and 'custom/memory' would both name their tools 'memory__…': rename one of them",
    ]);
  });

  test("the config is a non-empty object", () => {
    expect(problemsOf([])[0]).toMatch(/must be a JSON object of servers by name/);
    expect(problemsOf({})).toEqual(["the MCP config names no server"]);
  });
});
