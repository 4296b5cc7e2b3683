import { once } from "node:events";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { Contexts } from "./contexts.js";
import { createInterpreterServer } from "./http.js";

// The interpreter's HTTP surface over real kernel processes (the bundled JavaScript and bash
// kernels; Python, R and Java need the template's packages and are tested in sandboxes, see
// packages/platform/test/e2e/code-interpreter.test.ts). envd's /envs is played by a local server.

const home = path.resolve(__dirname, "../../dist/sandbox");
const cwd = mkdtempSync(path.join(tmpdir(), "x-ci-test-"));
let server: Server;
let envd: Server;
let base = "";
let contexts: Contexts;
const sandboxVars: Record<string, string> = { FROM_CREATE: "created" };
const seenTokens: (string | undefined)[] = [];

beforeAll(async () => {
  if (!existsSync(path.join(home, "javascript-kernel.cjs")))
    throw new Error(`${home} is missing: run 'pnpm build' first`);
  envd = createServer((req, res) => {
    seenTokens.push(req.headers["x-access-token"] as string | undefined);
    res.setHeader("Content-Type", "application/json");
    res.end(JSON.stringify(sandboxVars));
  }).listen(0, "127.0.0.1");
  await once(envd, "listening");
  contexts = new Contexts({
    layout: { home, node: process.execPath, python: "python3", java: "java" },
    env: { PATH: process.env.PATH, HOME: cwd },
    envdUrl: `http://127.0.0.1:${(envd.address() as AddressInfo).port}`,
    cwd,
  });
  server = createInterpreterServer({ contexts, ready: () => true }).listen(0, "127.0.0.1");
  await once(server, "listening");
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await contexts?.closeAll();
  server?.closeAllConnections();
  server?.close();
  envd?.closeAllConnections();
  envd?.close();
  rmSync(cwd, { recursive: true, force: true });
});

async function execute(body: unknown, init: RequestInit = {}): Promise<Record<string, unknown>[]> {
  const res = await fetch(`${base}/execute`, {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-Access-Token": "envd-token" },
    body: JSON.stringify(body),
    ...init,
  });
  expect(res.status).toBe(200);
  return (await res.text())
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

const texts = (lines: Record<string, unknown>[], type: string) =>
  lines.filter((l) => l.type === type).map((l) => l.text ?? l);

test("JavaScript keeps state between cells, takes imports and top-level await, and shows the last value", async () => {
  const first = await execute({ code: "const a = 40;\nconsole.log('hi');\nprocess.cwd()", language: "js" });
  expect(first[0]).toEqual({ type: "number_of_executions", execution_count: 1 });
  expect(texts(first, "stdout")).toEqual(["hi\n"]);
  expect(first.find((l) => l.type === "result")).toEqual({ type: "result", text: cwd, is_main_result: true });
  expect(first.at(-1)).toEqual({ type: "end_of_execution" });

  const second = await execute({
    code: "import { basename } from 'node:path';\nconst b = await Promise.resolve(2);\nbasename('/x/y') + (a + b)",
    language: "javascript",
  });
  expect(second.find((l) => l.type === "result")?.text).toBe("y42");
  expect(second[0]).toEqual({ type: "number_of_executions", execution_count: 2 });
  // what the awaited cell declared is there for the next
  expect((await execute({ code: "b * a", language: "js" })).find((l) => l.type === "result")?.text).toBe(
    "80",
  );
});

test("TypeScript has its types stripped", async () => {
  const lines = await execute({
    code: "interface P { n: number }\nconst p: P = { n: 3 };\nfunction twice(x: number): number { return x * 2 }\ntwice(p.n)",
    language: "ts",
  });
  expect(lines.find((l) => l.type === "result")?.text).toBe("6");
});

test("errors carry name, value and traceback, and only the first is sent", async () => {
  const lines = await execute({ code: "null.x", language: "javascript" });
  const error = lines.find((l) => l.type === "error");
  expect(error).toMatchObject({ name: "TypeError", value: expect.stringMatching(/null/) });
  expect(typeof error?.traceback).toBe("string");
});

test("bash keeps its directory and variables; a failing cell is an error", async () => {
  await execute({ code: "cd /; export KEPT=yes", language: "bash" });
  const lines = await execute({ code: "echo $PWD $KEPT; echo oops >&2; false", language: "bash" });
  expect(texts(lines, "stdout")).toEqual(["/ yes\n"]);
  expect(texts(lines, "stderr")).toEqual(["oops\n"]);
  expect(lines.find((l) => l.type === "error")).toMatchObject({ name: "BashError" });
});

test("output written just before a cell ends is never lost or given to the next cell", async () => {
  for (let i = 0; i < 20; i++) {
    const lines = await execute({ code: `process.stdout.write("x".repeat(70000) + "${i}")`, language: "js" });
    expect((texts(lines, "stdout") as string[]).join("")).toBe(`${"x".repeat(70000)}${i}`);
  }
});

test("the sandbox's variables come from envd with the caller's token; a call's own are set for it alone", async () => {
  const ctx = await (
    await fetch(`${base}/contexts`, { method: "POST", body: JSON.stringify({ language: "bash" }) })
  ).json();
  const run = (code: string, env_vars?: Record<string, string>) =>
    execute({ code, context_id: ctx.id, ...(env_vars ? { env_vars } : {}) }).then((l) =>
      texts(l, "stdout").join(""),
    );
  expect(await run("echo $FROM_CREATE")).toBe("created\n");
  expect(seenTokens).toContain("envd-token");
  expect(await run('echo "$FROM_CREATE $ONCE"', { FROM_CREATE: "overridden", ONCE: "it's once" })).toBe(
    "overridden it's once\n",
  );
  expect(await run('echo "$FROM_CREATE ${ONCE-unset}"')).toBe("created unset\n");
});

test("contexts are created, listed, restarted (state gone, same id) and removed", async () => {
  const res = await fetch(`${base}/contexts`, {
    method: "POST",
    body: JSON.stringify({ language: "js", cwd: "/" }),
  });
  expect(res.status).toBe(200);
  const ctx = (await res.json()) as { id: string; language: string; cwd: string };
  expect(ctx).toMatchObject({ language: "javascript", cwd: "/" });
  const listed = (await (await fetch(`${base}/contexts`)).json()) as { id: string }[];
  expect(listed.at(-1)).toEqual(ctx);
  await execute({ code: "var kept = 1", context_id: ctx.id });
  expect((await fetch(`${base}/contexts/${ctx.id}/restart`, { method: "POST" })).status).toBe(200);
  const after = await execute({ code: "typeof kept", context_id: ctx.id });
  expect(after.find((l) => l.type === "result")?.text).toBe("undefined");
  const removed = await fetch(`${base}/contexts/${ctx.id}`, { method: "DELETE" });
  expect([removed.status, await removed.json()]).toEqual([200, null]);
  const gone = await fetch(`${base}/contexts/${ctx.id}`, { method: "DELETE" });
  expect([gone.status, await gone.text()]).toEqual([404, `Context ${ctx.id} not found`]);
});

test("bad requests get E2B's answers", async () => {
  const post = (body: string) => fetch(`${base}/execute`, { method: "POST", body });
  const both = await post(JSON.stringify({ code: "1", context_id: "a", language: "python" }));
  expect([both.status, await both.text()]).toEqual([
    400,
    "Only one of context_id or language can be provided",
  ]);
  const unknown = await post(JSON.stringify({ code: "1", context_id: "nope" }));
  expect([unknown.status, await unknown.text()]).toEqual([404, "Context nope not found"]);
  expect((await post(JSON.stringify({ code: 42 }))).status).toBe(422);
  expect((await post("{not json")).status).toBe(422);
  const language = await post(JSON.stringify({ code: "1", language: "cobol" }));
  expect(language.status).toBe(400);
  expect(await language.text()).toMatch(/Unsupported language 'cobol'/);
  expect((await post(JSON.stringify({ code: "1", language: "bash", env_vars: { A: 1 } }))).status).toBe(422);
});

test("a client that goes away interrupts its cell, and the context goes on", async () => {
  for (const code of ["while (true) {}", "await new Promise(() => {})"]) {
    const abort = new AbortController();
    const res = await fetch(`${base}/execute`, {
      method: "POST",
      body: JSON.stringify({ code, language: "js" }),
      signal: abort.signal,
    });
    expect(res.status).toBe(200);
    setTimeout(() => abort.abort(), 300);
    await expect(res.text()).rejects.toThrow();
    const next = await execute({ code: "1 + 1", language: "js" });
    expect(next.find((l) => l.type === "result")?.text).toBe("2");
  }
  const abort = new AbortController();
  const res = await fetch(`${base}/execute`, {
    method: "POST",
    body: JSON.stringify({ code: "sleep 300", language: "bash" }),
    signal: abort.signal,
  });
  setTimeout(() => abort.abort(), 300);
  await expect(res.text()).rejects.toThrow();
  expect(texts(await execute({ code: "echo on", language: "bash" }), "stdout")).toEqual(["on\n"]);
});
