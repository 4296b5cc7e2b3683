/**
 * Every example in ../../examples, run as is against a real platform (runc), so they keep
 * working as the SDK changes.
 */
import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { main as buildTemplate } from "../../../examples/build-template.js";
import { main as runCode } from "../../../examples/run-code.js";
import { main as snapshotAndFork } from "../../../examples/snapshot-and-fork.js";
import { main as watchFiles } from "../../../examples/watch-files.js";
import { main as webServer } from "../../../examples/web-server.js";
import { startTemplatePlatform, type TemplatePlatform } from "../../platform/test/templates/support.js";
import { type ConnectionOptions, Sandbox } from "../src/index.js";

let p: TemplatePlatform;
let options: ConnectionOptions & { log: (line: string) => void };
const lines: string[] = [];

beforeAll(async () => {
  p = await startTemplatePlatform("runc");
  options = { apiUrl: p.t.apiUrl, sandboxUrl: p.t.proxyUrl, apiKey: p.t.apiKey, log: (l) => lines.push(l) };
});

afterEach(async () => {
  lines.length = 0;
  // every example kills what it starts
  expect(await Sandbox.list(options)).toEqual([]);
});

afterAll(async () => {
  await p?.stop();
});

describe("examples", () => {
  it("run-code runs a script and a one-liner and catches a failing command", async () => {
    expect(await runCode(options)).toEqual({ output: "6\n42\n", failedWith: 3 });
    expect(lines).toContain("agent printed: 6, 42");
  });

  it("watch-files sees a file created, written, renamed and removed", async () => {
    const events = await watchFiles(options);
    expect(events).toEqual(expect.arrayContaining(["CREATE a.txt", "RENAME a.txt", "REMOVE b.txt"]));
  });

  it("web-server fetches a page from a server in the sandbox through the proxy", async () => {
    expect(await webServer(options)).toBe("<h1>hello from the sandbox</h1>\n");
    expect(lines[0]).toMatch(
      /^serving on http:\/\/8000-\S+\.sandbox\.localhost\/ through http:\/\/127\.0\.0\.1:\d+$/,
    );
  });

  it("build-template builds, starts and deletes a template", async () => {
    expect(await buildTemplate({ ...options, name: "example-test" })).toBe("Hello, world\nHello, world\n");
    expect(lines.some((l) => l.startsWith("build: "))).toBe(true);
    expect((await p.api("GET", "/templates/aliases/example-test")).status).toBe(404);
  });

  it("runs by hand with node examples/run.mjs and the environment's options", async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ["examples/run.mjs", "run-code"], {
      cwd: path.resolve(__dirname, "../../.."),
      env: { ...process.env, X_API_URL: p.t.apiUrl, X_SANDBOX_URL: p.t.proxyUrl, X_API_KEY: p.t.apiKey },
    });
    expect(stdout).toContain("agent printed: 6, 42");
    expect(stdout).toContain('"output": "6\\n42\\n"');
  });

  it("snapshot-and-fork restores a snapshot and forks a running sandbox", async () => {
    expect(await snapshotAndFork(options)).toEqual({
      fromSnapshot: "written before the snapshot",
      fromFork: "written before the fork",
    });
    expect((await p.api("GET", "/snapshots")).body).toEqual([]);
  });
});
