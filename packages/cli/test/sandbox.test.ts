/**
 * The client commands end to end: `x sandbox …`, `x snapshot …` and `x volume …` in this process, talking
 * over HTTP to a real platform (runc), with their output captured.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { startTemplatePlatform, type TemplatePlatform } from "../../platform/test/templates/support.js";
import { CONNECTION_ENV, ensureBuilt, X_BIN, x, xBytes, xJson } from "./run-x.js";

let p: TemplatePlatform;
const saved = { ...process.env };
const created: string[] = [];

/** A port nothing listens on. */
function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

async function createSandbox(...flags: string[]): Promise<string> {
  const { sandboxID } = await xJson<{ sandboxID: string }>([
    "sandbox",
    "create",
    "--timeout",
    "300",
    ...flags,
  ]);
  created.push(sandboxID);
  return sandboxID;
}

beforeAll(async () => {
  for (const name of CONNECTION_ENV) delete process.env[name];
  p = await startTemplatePlatform("runc");
  process.env.X_API_URL = p.t.apiUrl;
  process.env.X_PROXY_URL = p.t.proxyUrl;
  process.env.X_API_KEY = p.t.apiKey;
});

afterAll(async () => {
  for (const id of created) await x(["sandbox", "kill", id]);
  await p?.stop();
  process.env = saved;
});

describe("x sandbox", () => {
  let id: string;

  beforeAll(async () => {
    id = await createSandbox(
      "--metadata",
      "suite=cli",
      "--metadata",
      "run=one",
      "--env",
      "GREETING=hi",
      "--runtime",
      "runc",
    );
  });

  it("creates sandboxes, printing the ID or JSON without the access token", async () => {
    const plain = await x(["sandbox", "create", "--timeout", "120"]);
    expect(plain).toMatchObject({ code: 0, err: "" });
    expect(plain.out).toMatch(/^\w+\n$/);
    const plainId = plain.out.trim();
    created.push(plainId);

    const info = await xJson<Record<string, unknown>>(["sandbox", "info", id]);
    expect(info).toMatchObject({ sandboxID: id, state: "running", metadata: { suite: "cli", run: "one" } });
    expect(info).not.toHaveProperty("envdAccessToken");

    expect((await x(["sandbox", "kill", plainId])).code).toBe(0);
  });

  it("lists sandboxes as a table and as JSON, filtered by metadata and state", async () => {
    const all = await xJson<{ sandboxID: string }[]>(["sandbox", "list"]);
    expect(all.map((s) => s.sandboxID)).toContain(id);
    const mine = await xJson<{ sandboxID: string; metadata: Record<string, string> }[]>([
      "sandbox",
      "list",
      "--metadata",
      "run=one",
    ]);
    expect(mine.map((s) => s.sandboxID)).toEqual([id]);
    expect(await xJson(["sandbox", "list", "--metadata", "run=none"])).toEqual([]);
    expect(await xJson(["sandbox", "list", "--state", "paused", "--metadata", "run=one"])).toEqual([]);

    const table = await x(["sandbox", "list", "--state", "running"]);
    expect(table.code).toBe(0);
    expect(table.out).toMatch(/^ID\s+TEMPLATE\s+STATE\s+CPUS\s+MEMORY MB\s+STARTED\s+ENDS\s+METADATA\n/);
    expect(table.out).toMatch(new RegExp(`^${id}\\s+base\\s+running\\s.*run=one`, "m"));
    expect((await x(["sandbox", "list", "--state", "stopped"])).code).toBe(2);
  });

  it("shows a sandbox's details", async () => {
    const r = await x(["sandbox", "info", id]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(new RegExp(`^ID:\\s+${id}$`, "m"));
    expect(r.out).toMatch(/^State:\s+running$/m);
    expect(r.out).toMatch(/^Metadata:\s+suite=cli,run=one$/m);
  });

  it("execs a command: streams its output, forwards stdin and exits with its code", async () => {
    const env = await x(["sandbox", "exec", id, "--", "sh", "-c", "echo $GREETING from $(pwd)"]);
    expect(env).toEqual({ code: 0, out: "hi from /home/user\n", err: "" });

    const failed = await x(["sandbox", "exec", id, "--", "sh", "-c", "echo out; echo oops >&2; exit 7"]);
    expect(failed).toEqual({ code: 7, out: "out\n", err: "oops\n" });

    const args = await x([
      "sandbox",
      "exec",
      id,
      "--cwd",
      "/tmp",
      "--env",
      "A=b c",
      "--",
      "printf",
      "%s|",
      "it's",
      "$A",
      "two words",
    ]);
    expect(args).toEqual({ code: 0, out: "it's|$A|two words|", err: "" });

    // bytes pass unchanged, both ways
    const binary = await xBytes(["sandbox", "exec", id, "--", "printf", "\\377\\000\\376\\n"]);
    expect(binary).toEqual({ code: 0, out: Buffer.from([0xff, 0x00, 0xfe, 0x0a]) });

    const piped = await x(["sandbox", "exec", id, "--", "wc", "-c"], { stdin: "hello sandbox\n" });
    expect(piped).toEqual({ code: 0, out: "14\n", err: "" });

    // the command waits for a file that only a second exec, started once the first line has
    // arrived, creates: without streaming this would never end
    let release: Promise<unknown> | undefined;
    const streamed = await x(
      [
        "sandbox",
        "exec",
        id,
        "--",
        "sh",
        "-c",
        "echo ready; while [ ! -e /tmp/go ]; do sleep 0.1; done; echo done",
      ],
      {
        onOut: (soFar) => {
          if (soFar.includes("ready") && !release)
            release = x(["sandbox", "exec", id, "--", "touch", "/tmp/go"]);
        },
      },
    );
    expect(streamed).toEqual({ code: 0, out: "ready\ndone\n", err: "" });
    expect(await release).toMatchObject({ code: 0 });

    // the real command: its exit code is x's, and a stdin that never closes does not keep x alive
    ensureBuilt();
    const child = spawn(
      process.execPath,
      [X_BIN, "sandbox", "exec", id, "--", "sh", "-c", "echo done; exit 4"],
      {
        stdio: ["pipe", "pipe", "pipe"],
        env: { ...process.env },
      },
    );
    let childOut = "";
    child.stdout.on("data", (d) => {
      childOut += d;
    });
    const exitCode = await new Promise((resolve) => child.on("exit", resolve));
    child.stdin.destroy();
    expect({ exitCode, childOut }).toEqual({ exitCode: 4, childOut: "done\n" });

    const noTty = await x(["sandbox", "shell", id]);
    expect(noTty.code).toBe(2);
    expect(noTty.err).toMatch(/needs a terminal; for scripts use 'x sandbox exec/);

    const usage = await x(["sandbox", "exec", id]);
    expect(usage.code).toBe(2);
    expect(usage.err).toMatch(/give the command after '--'/);
  });

  it("shows metrics and logs as tables and JSON", async () => {
    const metrics = await xJson<unknown[]>(["sandbox", "metrics", id]);
    expect(Array.isArray(metrics)).toBe(true);
    const metricsText = await x(["sandbox", "metrics", id]);
    expect(metricsText.code).toBe(0);
    expect(metricsText.out).toMatch(
      metrics.length ? /^TIME\s+CPUS\s+CPU %\s+MEMORY\s+DISK\n/ : /^no samples yet\n$/,
    );

    const logs = await x(["sandbox", "logs", id, "--json"]);
    expect(logs.code).toBe(0);
    const entries = logs.out
      .trim()
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { timestamp: string; level: string; message: string });
    expect(entries.length).toBeGreaterThan(0);
    expect(entries[0]).toEqual(
      expect.objectContaining({ timestamp: expect.any(String), message: expect.any(String) }),
    );
    const text = await x(["sandbox", "logs", id]);
    expect(text.out.split("\n")[0]).toContain(entries[0]!.message);
    expect((await x(["sandbox", "logs", id, "--level", "loud"])).code).toBe(2);
  });

  it("shows the sandbox's egress decisions", async () => {
    // a private address: refused by the host's firewall, whatever the sandbox's policy
    const curl = await x(["sandbox", "exec", id, "--", "curl", "-sS", "-m", "3", "http://10.9.9.9:8080/"]);
    expect(curl.code).toBe(7);
    const until = Date.now() + 10_000;
    let decisions: Array<{ destination?: string; verdict: string; rule: string; port?: number }> = [];
    while (Date.now() < until) {
      const out = await x(["sandbox", "network", id, "--json"]);
      decisions = out.out
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l));
      if (decisions.some((d) => d.destination === "10.9.9.9")) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(decisions).toContainEqual(
      expect.objectContaining({
        destination: "10.9.9.9",
        port: 8080,
        verdict: "denied",
        rule: expect.stringMatching(/private/),
      }),
    );
    const text = await x(["sandbox", "network", id]);
    expect(text.out).toMatch(/DENIED\s+tcp\s+10\.9\.9\.9:8080\s+\(private range/);
    expect((await x(["sandbox", "network"])).code).toBe(2);
  });

  it("pauses, resumes and kills a sandbox, which logs --follow shows as it happens", async () => {
    ensureBuilt();
    // jest's process.env is its own copy: the child gets it explicitly
    const follow = spawn(process.execPath, [X_BIN, "sandbox", "logs", id, "--follow"], {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env },
    });
    let followed = "";
    let followErr = "";
    follow.stdout.on("data", (d) => {
      followed += d;
    });
    follow.stderr.on("data", (d) => {
      followErr += d;
    });
    const followShows = async (pattern: RegExp) => {
      const until = Date.now() + 30_000;
      while (!pattern.test(followed) && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
      expect({ followed, followErr }).toEqual({ followed: expect.stringMatching(pattern), followErr: "" });
    };
    try {
      await followShows(/sandbox created/);
      expect(followed).not.toMatch(/event=sandbox\.paused/);
      const paused = await x(["sandbox", "pause", id]);
      expect(paused).toEqual({ code: 0, out: `paused ${id}\n`, err: "" });
      expect(await xJson(["sandbox", "info", id])).toMatchObject({ state: "paused" });
      const listed = await xJson<{ sandboxID: string }[]>(["sandbox", "list", "--state", "paused"]);
      expect(listed.map((s) => s.sandboxID)).toContain(id);

      expect(await xJson(["sandbox", "resume", id])).toEqual({ sandboxID: id, state: "running" });
      expect(await xJson(["sandbox", "info", id])).toMatchObject({ state: "running" });
      expect((await x(["sandbox", "exec", id, "--", "true"])).code).toBe(0);
      await followShows(/event=sandbox\.paused[\s\S]*event=sandbox\.resumed/);
      // each entry once, though the cursor of every poll includes the last one seen
      expect(followed.match(/event=sandbox\.created/g)).toHaveLength(1);
      // and it ends when the sandbox does
      const exited = new Promise((resolve) => follow.on("exit", resolve));
      expect((await x(["sandbox", "kill", id])).code).toBe(0);
      expect(await exited).toBe(0);
      expect(followErr).toBe(`x sandbox logs: sandbox ${id} is gone\n`);
    } finally {
      follow.kill();
    }
  });
});

describe("x snapshot", () => {
  it("snapshots a sandbox, lists the snapshot and starts a sandbox from it", async () => {
    const id = await createSandbox();
    expect((await x(["sandbox", "exec", id, "--", "sh", "-c", "echo kept > /home/user/mark"])).code).toBe(0);
    const snap = await xJson<{ snapshotID: string; names: string[] }>([
      "snapshot",
      "create",
      id,
      "--name",
      "cli-snap",
    ]);
    expect(snap.snapshotID).toMatch(/cli-snap/);

    const listed = await xJson<{ snapshotID: string }[]>(["snapshot", "list", "--sandbox", id]);
    expect(listed.map((s) => s.snapshotID)).toEqual([snap.snapshotID]);
    const table = await x(["snapshot", "list"]);
    expect(table.out).toMatch(/^SNAPSHOT\s+NAMES\n/);
    expect(table.out).toContain(snap.snapshotID);

    // by its ID or, like any template, by its name
    expect(snap.snapshotID).toMatch(/^\w+\/cli-snap:default$/);
    const child = await createSandbox("--template", "cli-snap");
    expect(await x(["sandbox", "exec", child, "--", "cat", "/home/user/mark"])).toEqual({
      code: 0,
      out: "kept\n",
      err: "",
    });
    expect((await x(["sandbox", "kill", child])).code).toBe(0);
    expect((await x(["sandbox", "kill", id])).code).toBe(0);
    expect(await x(["template", "delete", snap.snapshotID])).toMatchObject({ code: 0 });
  });
});

describe("x volume", () => {
  it("creates a volume, copies files in and out, mounts it in a sandbox and deletes it", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "x-volume-cli-"));
    try {
      const { volumeID } = await xJson<{ volumeID: string }>(["volume", "create", "cli-vol", "--size", "32"]);
      expect((await x(["volume", "list"])).out).toMatch(/cli-vol\s+32 MB/);
      writeFileSync(path.join(dir, "in.txt"), "from the cli\n");
      const cp = await x(["volume", "cp", path.join(dir, "in.txt"), "cli-vol:/docs/in.txt", "--force"]);
      expect(cp).toEqual({ code: 0, out: "/docs/in.txt (13 bytes)\n", err: "" });
      expect((await x(["volume", "cp", path.join(dir, "in.txt"), "cli-vol:/docs/in.txt"])).err).toMatch(
        /already exists/,
      );
      const ls = await x(["volume", "ls", "cli-vol", "--depth", "2"]);
      expect(ls.out).toMatch(/d0755\s+1000:1000 .* \/docs\n/);
      expect(ls.out).toMatch(/-0644\s+1000:1000\s+13 .* \/docs\/in.txt/);

      const id = await createSandbox("--volume", "cli-vol:/mnt/cli");
      expect((await x(["sandbox", "exec", id, "--", "cat", "/mnt/cli/docs/in.txt"])).out).toBe(
        "from the cli\n",
      );
      await x(["sandbox", "exec", id, "--", "sh", "-c", "echo back > /mnt/cli/out.txt"]);
      expect((await x(["volume", "cp", "cli-vol:/out.txt", "-"])).out).toBe("back\n");
      await x(["volume", "cp", "cli-vol:/out.txt", path.join(dir, "out.txt")]);
      expect(readFileSync(path.join(dir, "out.txt"), "utf8")).toBe("back\n");
      const info = await xJson<{ mountedBy: string[] }>(["volume", "info", volumeID]);
      expect(info.mountedBy).toEqual([id]);
      expect((await x(["volume", "rm", "cli-vol"])).err).toMatch(/mounted by/);
      await x(["sandbox", "kill", id]);
      expect((await x(["volume", "rm", "cli-vol"])).out).toBe("deleted cli-vol\n");
      expect((await x(["volume", "info", "cli-vol"])).err).toMatch(/no volume 'cli-vol'/);
      expect((await x(["sandbox", "create", "--volume", "nope"])).err).toMatch(/NAME:\/PATH/);
      expect((await x(["volume", "cp", "a", "b"])).code).toBe(2);
      for (const c of ["create", "list", "info", "rm", "ls", "cp"]) {
        expect((await x(["volume", c, "--help"])).code).toBe(0);
      }
    } finally {
      await x(["volume", "rm", "cli-vol"]);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("x sandbox errors", () => {
  it("says a sandbox does not exist, for every command", async () => {
    const killed = await createSandbox();
    expect(await x(["sandbox", "kill", killed])).toEqual({ code: 0, out: `killed ${killed}\n`, err: "" });
    for (const argv of [
      ["info", killed],
      ["kill", killed],
      ["pause", "nosuchsandbox"],
      ["resume", "nosuchsandbox"],
      ["metrics", "nosuchsandbox"],
      ["logs", "nosuchsandbox"],
      ["exec", "nosuchsandbox", "--", "true"],
      ["shell", "nosuchsandbox"],
    ]) {
      const r = await x(["sandbox", ...argv]);
      expect({ argv, code: r.code }).toEqual({ argv, code: expect.any(Number) });
      expect(r.code).not.toBe(0);
      if (argv[0] !== "shell")
        expect(r.err).toMatch(new RegExp(`${argv[1]}.*not found|not found.*${argv[1]}`, "i"));
    }
    expect((await x(["snapshot", "create", "nosuchsandbox"])).err).toMatch(/not found/i);
  });

  it("explains a missing or refused key and an unreachable platform", async () => {
    const key = process.env.X_API_KEY;
    try {
      delete process.env.X_API_KEY;
      const missing = await x(["sandbox", "list"]);
      expect(missing.code).toBe(1);
      expect(missing.err).toBe(
        "no API key: run `x keys create NAME` on the platform's host and set X_API_KEY (or pass --api-key)\n",
      );
      // the e2b client's variables work too
      process.env.E2B_API_KEY = key;
      expect((await x(["sandbox", "list"])).code).toBe(0);
      delete process.env.E2B_API_KEY;

      const refused = await x(["sandbox", "list", "--api-key", `e2b_${"0".repeat(40)}`]);
      expect(refused.code).toBe(1);
      expect(refused.err).toMatch(/refused the API key.*x keys create/);
    } finally {
      process.env.X_API_KEY = key;
    }
    const url = `http://127.0.0.1:${await closedPort()}`;
    for (const argv of [
      ["sandbox", "list", "--api-url", url],
      ["template", "list", "--api-url", url],
      ["sandbox", "exec", "abc", "--api-url", url, "--", "true"],
    ]) {
      const r = await x(argv);
      expect(r.code).toBe(1);
      expect(r.err).toContain(`cannot reach the platform at ${url}`);
      expect(r.err).toContain("is `x serve` running?");
    }
  });

  it("explains usage mistakes and has help for every command", async () => {
    expect((await x(["sandbox"])).code).toBe(2);
    expect((await x(["sandbox", "frobnicate"])).code).toBe(2);
    expect((await x(["sandbox", "info"])).err).toMatch(/missing the sandbox ID/);
    expect((await x(["sandbox", "create", "--runtime", "kvm"])).err).toMatch(/runsc or runc/);
    expect((await x(["sandbox", "create", "--metadata", "novalue"])).err).toMatch(/KEY=VALUE/);
    expect((await x(["sandbox", "list", "--bogus"])).code).toBe(2);
    for (const argv of [
      ["--help"],
      ["sandbox", "--help"],
      ...["create", "list", "info", "kill", "pause", "resume", "logs", "metrics", "exec", "shell"].map(
        (c) => ["sandbox", c, "--help"],
      ),
      ["template", "--help"],
      ...["build", "list", "get", "tag", "delete"].map((c) => ["template", c, "--help"]),
      ["snapshot", "--help"],
      ["snapshot", "create", "--help"],
    ]) {
      const r = await x(argv);
      expect({ argv, code: r.code, err: r.err }).toEqual({ argv, code: 0, err: "" });
      expect(r.out).toMatch(/^(usage: )?x /);
    }
  });
});
