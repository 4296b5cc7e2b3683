/**
 * Expected to fail: what KNOWN-UNSUPPORTED.md lists that has no other test, asserted as it is
 * refused today, through the public e2b client and the raw API. Each test fails once its
 * feature starts working (a runtime, a kernel or a package that can do it): then take the
 * entry out of KNOWN-UNSUPPORTED.md and turn the test into one of the feature's own.
 */
import { Sandbox } from "e2b";
import { pointE2bClient, startTestPlatform, type TestPlatform } from "../helpers/platform.js";
import { runCommand } from "../helpers/sandbox-network.js";

describe.each(["runc", "runsc"] as const)("known unsupported on %s", (runtime) => {
  let t: TestPlatform;
  let restoreEnv = () => {};
  const sandboxes: Sandbox[] = [];
  const snapshots: string[] = [];

  async function api(method: string, p: string, body?: unknown) {
    const res = await fetch(`${t.apiUrl}${p}`, {
      method,
      headers: { "X-API-Key": t.apiKey, ...(body ? { "Content-Type": "application/json" } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  }

  async function sandbox(): Promise<Sandbox> {
    const sb = await Sandbox.create({ timeoutMs: 180_000 });
    sandboxes.push(sb);
    return sb;
  }

  beforeAll(async () => {
    t = await startTestPlatform({ runtime });
    restoreEnv = pointE2bClient(t);
  });

  afterAll(async () => {
    for (const sb of sandboxes) await sb.kill().catch(() => undefined);
    for (const id of snapshots)
      await api("DELETE", `/templates/${encodeURIComponent(id)}`).catch(() => undefined);
    restoreEnv();
    await t?.stop();
  });

  if (runtime === "runsc") {
    // KNOWN-UNSUPPORTED.md, "Extended attributes on the sandbox's disk under gVisor": E2B's
    // files/metadata case "metadata set via xattrs is surfaced in getInfo". Move it when it works.
    it("refuses user xattrs on the sandbox's disk, so metadata set with setfattr is not surfaced", async () => {
      const sb = await sandbox();
      await sb.files.write("metadata_xattr.txt", "content");
      const set = await runCommand(sb, "setfattr -n user.e2b.author -v mish /home/user/metadata_xattr.txt");
      expect(set.exitCode).not.toBe(0);
      expect(set.stderr).toMatch(/Operation not supported/);
      expect((await sb.files.getInfo("metadata_xattr.txt")).metadata).toBeUndefined();
      // what works meanwhile: metadata given through the client, which envd keeps itself
      await sb.files.write("with_metadata.txt", "content", { metadata: { author: "mish" } });
      expect((await sb.files.getInfo("with_metadata.txt")).metadata).toEqual({ author: "mish" });
    });

    // KNOWN-UNSUPPORTED.md, "Checkpoints of gVisor sandboxes with open TCP connections". Move
    // it when it works.
    it("keeps only files in a snapshot of a sandbox whose processes hold an open TCP connection", async () => {
      const sb = await sandbox();
      // two processes of the sandbox's own, connected to each other, the listener closed
      const hold =
        "import socket, time; s = socket.socket(); s.bind(('127.0.0.1', 7070)); s.listen(); " +
        "c = socket.create_connection(('127.0.0.1', 7070)); a, _ = s.accept(); s.close(); " +
        "open('/tmp/connected', 'w').close(); time.sleep(600)";
      await sb.commands.run(`python3 -c "${hold}"`, { background: true, timeoutMs: 0 });
      for (let i = 0; i < 50 && !(await sb.files.exists("/tmp/connected")); i++)
        await new Promise((r) => setTimeout(r, 200));
      expect(await sb.files.exists("/tmp/connected")).toBe(true);
      const snap = await api("POST", `/sandboxes/${sb.sandboxId}/snapshots`, {});
      expect(snap.status).toBe(200);
      snapshots.push(snap.body.snapshotID);
      expect(snap.body.kind).toBe("files");
    });
  } else {
    // KNOWN-UNSUPPORTED.md, "Memory snapshots and checkpointed pauses under runc". Move it
    // when it works.
    it("keeps only files in a snapshot, the memory asked for or not", async () => {
      const sb = await sandbox();
      const snap = await api("POST", `/sandboxes/${sb.sandboxId}/snapshots`, { memory: true });
      expect(snap.status).toBe(200);
      snapshots.push(snap.body.snapshotID);
      expect(snap.body.kind).toBe("files");
    });
  }
});
