/**
 * E2B's quickstart package, @e2b/code-interpreter 2.8.0, unchanged, against the platform with
 * code-interpreter-v1 installed as an operator installs it (`x template install`), under runc
 * and gVisor. The template is built once per machine (helpers/shipped-templates.ts), into the
 * store both platforms here start on.
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import http2 from "node:http2";
import path from "node:path";
import { promisify } from "node:util";
import { Sandbox } from "@e2b/code-interpreter";
import { pointE2bClient, startTestPlatform, type TestPlatform } from "../helpers/platform.js";
import { installShippedTemplates, SHIPPED_STORE } from "../helpers/shipped-templates.js";

const CLIENT = path.resolve(__dirname, "../fixtures/code-interpreter-client.cjs");

/** A scenario of fixtures/code-interpreter-client.cjs, run by Node as a user's program. */
async function clientScenario(t: TestPlatform, name: string): Promise<Record<string, unknown>> {
  const { stdout } = await promisify(execFile)(process.execPath, [CLIENT, name], {
    env: { ...process.env, E2B_API_URL: t.apiUrl, E2B_SANDBOX_URL: t.proxyUrl, E2B_API_KEY: t.apiKey },
    timeout: 120_000,
  });
  return JSON.parse(stdout) as Record<string, unknown>;
}

beforeAll(() => installShippedTemplates(["code-interpreter-v1"]), 45 * 60_000);

/** The chart of the first result that has one. */
async function chartOf(sbx: Sandbox, code: string): Promise<Record<string, unknown>> {
  const execution = await sbx.runCode(code);
  expect(execution.error).toBeUndefined();
  const chart = execution.results.find((r) => r.chart)?.chart as Record<string, unknown> | undefined;
  if (!chart) throw new Error(`no chart in ${JSON.stringify(execution.results.map((r) => r.formats()))}`);
  return chart;
}

describe.each(["runc", "runsc"] as const)("@e2b/code-interpreter on %s", (runtime) => {
  let t: TestPlatform;
  let restoreEnv = () => {};

  beforeAll(async () => {
    t = await startTestPlatform({
      runtime,
      databaseUrl: SHIPPED_STORE,
      config: { warmPoolSize: 1, tlsPort: 0 },
    });
    restoreEnv = pointE2bClient(t);
  });

  afterAll(async () => {
    restoreEnv();
    await t?.stop();
  }, 120_000);

  test("the quickstart: Sandbox.create() with no template, state across runCode calls, errors, callbacks", async () => {
    const sbx = await Sandbox.create();
    try {
      const hello = await sbx.runCode('print("hello world")');
      expect(hello.logs).toEqual({ stdout: ["hello world\n"], stderr: [] });
      expect(hello.executionCount).toBe(1);
      expect((await sbx.runCode("x = 1; x")).text).toBe("1");
      const second = await sbx.runCode("x += 1; x");
      expect([second.text, second.executionCount]).toEqual(["2", 3]);
      expect((await sbx.runCode("!pwd")).logs.stdout.join("").trim()).toBe("/home/user");

      const failed = await sbx.runCode("y");
      expect(failed.error).toMatchObject({ name: "NameError", value: "name 'y' is not defined" });
      expect(failed.error?.traceback).toMatch(/NameError/);

      const seen: Record<string, unknown[]> = { stdout: [], stderr: [], result: [], error: [] };
      await sbx.runCode('import sys; print("out"); print("err", file=sys.stderr); 42', {
        onStdout: (m) => seen.stdout!.push(m.line),
        onStderr: (m) => seen.stderr!.push(m.line),
        onResult: (r) => seen.result!.push(r.text),
      });
      await sbx.runCode("undefined_name", { onError: (e) => seen.error!.push(e.name) });
      expect(seen).toEqual({ stdout: ["out\n"], stderr: ["err\n"], result: ["42"], error: ["NameError"] });

      // a second client of the same sandbox sees the same kernel
      const again = await Sandbox.connect(sbx.sandboxId);
      expect((await again.runCode("x")).text).toBe("2");
    } finally {
      await sbx.kill();
    }
  });

  test("every language the SDK names runs in /home/user", async () => {
    const sbx = await Sandbox.create();
    try {
      const js = await sbx.runCode(
        "import { readFileSync } from 'fs';\nconsole.log('from js');\nconst v = await Promise.resolve(process.cwd());\nv",
        { language: "js" },
      );
      expect([js.logs.stdout, js.text]).toEqual([["from js\n"], "/home/user"]);
      const ts = await sbx.runCode("function twice(n: number): number { return n * 2 }\ntwice(21)", {
        language: "ts",
      });
      expect(ts.text).toBe("42");
      expect((await sbx.runCode("pwd", { language: "bash" })).logs.stdout).toEqual(["/home/user\n"]);
      const r = await sbx.runCode("getwd()", { language: "r" });
      expect(r.results[0]?.text?.trim()).toBe('[1] "/home/user"');
      const java = await sbx.runCode('System.getProperty("user.dir")', { language: "java" });
      expect(java.text).toBe("/home/user");
    } finally {
      await sbx.kill();
    }
  });

  test("contexts: created with a cwd, listed, restarted (state gone), removed", async () => {
    const sbx = await Sandbox.create();
    try {
      const ctx = await sbx.createCodeContext({ cwd: "/tmp" });
      expect(ctx).toMatchObject({ language: "python", cwd: "/tmp" });
      expect((await sbx.runCode("import os; os.getcwd()", { context: ctx })).text).toBe("/tmp");
      const listed = await sbx.listCodeContexts();
      expect(listed.map((c) => c.language)).toEqual(expect.arrayContaining(["python", "javascript"]));
      expect(listed.at(-1)).toEqual(ctx);
      await sbx.runCode("kept = 1", { context: ctx });
      await sbx.restartCodeContext(ctx);
      expect((await sbx.runCode("kept", { context: ctx })).error?.value).toBe("name 'kept' is not defined");
      await sbx.removeCodeContext(ctx.id);
      expect((await sbx.listCodeContexts()).map((c) => c.id)).not.toContain(ctx.id);
      await expect(sbx.runCode("1", { context: ctx })).rejects.toThrow(
        new RegExp(`Context ${ctx.id} not found`),
      );
      // both at once is refused by the SDK itself, as the types say
      await expect(sbx.runCode("1", { context: ctx, language: "python" } as never)).rejects.toThrow(
        /context or language/,
      );
    } finally {
      await sbx.kill();
    }
  });

  test("environment variables: the sandbox's, and a call's own for that call only", async () => {
    const sbx = await Sandbox.create({ envs: { FROM_CREATE: "sandbox" } });
    try {
      const py = (code: string, envs?: Record<string, string>) =>
        sbx.runCode(code, envs ? { envs } : {}).then((e) => e.text);
      expect(await py("import os; os.getenv('FROM_CREATE')")).toBe("sandbox");
      expect(
        await py("os.getenv('FROM_CREATE'), os.getenv('ONCE')", { FROM_CREATE: "call", ONCE: "o'nce\"" }),
      ).toBe("('call', 'o\\'nce\"')");
      expect(await py("os.getenv('FROM_CREATE'), os.getenv('ONCE')")).toBe("('sandbox', None)");
      const js = await sbx.runCode("process.env.FROM_CREATE + ' ' + process.env.ONCE", {
        language: "js",
        envs: { ONCE: "js" },
      });
      expect(js.text).toBe("sandbox js");
      const bash = await sbx.runCode('echo "$FROM_CREATE ${ONCE-unset}"', { language: "bash" });
      expect(bash.logs.stdout).toEqual(["sandbox unset\n"]);
    } finally {
      await sbx.kill();
    }
  });

  test("rich results: figures as PNG with their chart, DataFrames as data, PIL images, HTML", async () => {
    const sbx = await Sandbox.create();
    try {
      const plot = await sbx.runCode(
        "import matplotlib.pyplot as plt\nplt.plot([1, 2, 3], [1, 4, 9])\nplt.show()",
      );
      const figure = plot.results[0];
      expect(figure?.png?.length).toBeGreaterThan(1000);
      expect(figure?.text).toMatch(/Figure/);
      expect(figure?.extra).toEqual({});
      expect(figure?.chart).toMatchObject({ type: "line" });

      const df = await sbx.runCode("import pandas as pd\npd.DataFrame({'a': [1, 2], 'b': ['x', 'y']})");
      expect(df.results[0]?.data).toEqual({ a: [1, 2], b: ["x", "y"] });
      expect(df.results[0]?.html).toMatch(/<table/);

      const pil = await sbx.runCode(
        "from PIL import Image\nimage = Image.new('RGB', (8, 8), 'red')\nimage.show()\nimage.save('/tmp/red.png')\nimage",
      );
      expect(pil.results.filter((r) => r.png)).toHaveLength(3);

      const html = await sbx.runCode(
        "from IPython.display import HTML, display\ndisplay(HTML('<b>bold</b>'))",
      );
      expect(html.results[0]?.html).toBe("<b>bold</b>");
    } finally {
      await sbx.kill();
    }
  });

  test("charts: bar, line with dates, scatter, pie, box-and-whisker, log scale and several axes", async () => {
    const sbx = await Sandbox.create();
    try {
      const bar = await chartOf(
        sbx,
        "import matplotlib.pyplot as plt\nfig, ax = plt.subplots()\nax.bar(['A', 'B', 'C', 'D'], [100, 200, 300, 400], label='Books Sold')\nax.set_title('Book Sales')\nax.set_xlabel('Authors')\nax.set_ylabel('Sold (books)')\nplt.show()",
      );
      expect(bar).toMatchObject({ type: "bar", title: "Book Sales", x_label: "Authors", y_unit: "books" });
      expect(bar.elements).toEqual(
        ["A", "B", "C", "D"].map((label, i) => ({ label, group: "Books Sold", value: 100 * (i + 1) })),
      );

      const line = await chartOf(
        sbx,
        "import datetime as dt\nfig, ax = plt.subplots()\ndays = [dt.datetime(2024, 1, d) for d in (1, 2, 3)]\nax.plot(days, [1, 2, 3], label='growth')\nplt.show()",
      );
      expect(line).toMatchObject({ type: "line", x_scale: "datetime" });
      expect((line.elements as { label: string; points: unknown[][] }[])[0]).toEqual({
        label: "growth",
        points: [
          ["2024-01-01T00:00:00", 1],
          ["2024-01-02T00:00:00", 2],
          ["2024-01-03T00:00:00", 3],
        ],
      });

      const scatter = await chartOf(
        sbx,
        "fig, ax = plt.subplots()\nax.scatter([1, 2], [3, 4], label='s')\nplt.show()",
      );
      expect(scatter).toMatchObject({
        type: "scatter",
        elements: [
          {
            label: "s",
            points: [
              [1, 3],
              [2, 4],
            ],
          },
        ],
      });

      const pie = await chartOf(
        sbx,
        "fig, ax = plt.subplots()\nax.pie([90, 10], labels=['big', 'small'])\nplt.show()",
      );
      expect(pie).toMatchObject({
        type: "pie",
        elements: [
          { label: "big", angle: 324, radius: 1 },
          { label: "small", angle: 36, radius: 1 },
        ],
      });

      const box = await chartOf(
        sbx,
        "fig, ax = plt.subplots()\nax.boxplot([[78, 85, 88, 90, 92], [88, 89, 90, 91, 92, 70]], labels=['A', 'B'], patch_artist=True)\nplt.show()",
      );
      expect(box).toMatchObject({ type: "box_and_whisker" });
      expect(box.elements).toEqual([
        { label: "A", min: 78, first_quartile: 85, median: 88, third_quartile: 90, max: 92, outliers: [] },
        {
          label: "B",
          min: 88,
          first_quartile: 88.25,
          median: 89.5,
          third_quartile: 90.75,
          max: 92,
          outliers: [70],
        },
      ]);

      const log = await chartOf(
        sbx,
        "fig, ax = plt.subplots()\nax.plot([1, 2, 3], [10, 100, 1000])\nax.set_yscale('log')\nax.set_ylabel('Y (log scale)')\nplt.show()",
      );
      expect(log).toMatchObject({ type: "line", y_scale: "log", y_unit: "log scale" });

      const both = await chartOf(
        sbx,
        "fig, (a, b) = plt.subplots(1, 2)\nfig.suptitle('Two')\na.plot([1, 2], [1, 2])\nb.bar(['x'], [1])\nplt.show()",
      );
      expect(both).toMatchObject({ type: "superchart", title: "Two" });
      expect((both.elements as { type: string }[]).map((e) => e.type)).toEqual(["line", "bar"]);
    } finally {
      await sbx.kill();
    }
  });

  test("a run that outlives its timeout is interrupted, and the kernel answers at once after", async () => {
    const { timedOut, next } = await clientScenario(t, "timeout");
    expect(timedOut).toMatchObject({
      ok: false,
      name: "TimeoutError",
      message: expect.stringMatching(/Execution timed out/),
    });
    expect(next).toEqual({ ok: true, value: "2" });
  });

  test("an HTTP/2 client that resets its stream interrupts the cell at once", async () => {
    const sbx = await Sandbox.create();
    const host = sbx.getHost(49999);
    const session = http2.connect(`https://127.0.0.1:${t.platform.tlsPort}`, {
      ca: readFileSync(t.platform.caFile!),
      servername: host.replace(/:\d+$/, ""),
    });
    try {
      const req = session.request({
        ":method": "POST",
        ":path": "/execute",
        ":authority": host,
        "content-type": "application/json",
      });
      req.end(JSON.stringify({ code: "import time; print('started', flush=True); time.sleep(300)" }));
      // the cell is running once its first output arrives
      let seen = "";
      await new Promise<void>((resolve, reject) => {
        req.on("data", (chunk: Buffer) => {
          seen += chunk.toString();
          if (seen.includes("started")) resolve();
        });
        req.on("error", reject);
      });
      req.close(http2.constants.NGHTTP2_CANCEL);
      const next = await sbx.runCode("1 + 1", { timeoutMs: 10_000 });
      expect(next.text).toBe("2");
    } finally {
      session.close();
      await sbx.kill();
    }
  });

  test("a sandbox killed during a run ends the run with the SDK's 'was killed' error", async () => {
    const { run } = await clientScenario(t, "killed");
    expect(run).toMatchObject({
      ok: false,
      name: "TimeoutError",
      message: expect.stringMatching(/sandbox was killed while the request was in progress/),
    });
  });
});

test("a platform where code-interpreter-v1 is not installed says how to install it", async () => {
  const bare = await startTestPlatform({ runtime: "runc" });
  const restore = pointE2bClient(bare);
  try {
    await expect(Sandbox.create()).rejects.toThrow(
      /template 'code-interpreter-v1' is not installed on this platform: its operator installs it with 'x template install code-interpreter-v1'/,
    );
  } finally {
    restore();
    await bare.stop();
  }
});
