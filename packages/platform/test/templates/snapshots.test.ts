/**
 * Snapshots and forks through the public e2b client: the naming rules of the seed (4.2 rule 1),
 * files as they were (deletions included) in sandboxes started from a snapshot, the source
 * running on, listing, forks and deletion.
 */
import { Sandbox } from "e2b";
import type { RuntimeName } from "../../src/runtime/container-runtime.js";
import { type Dialect, startTemplatePlatform, type TemplatePlatform } from "./support.js";

// both runtimes over SQLite; the store's side of snapshots (templates, builds, tags) on PostgreSQL too
const SETUPS: [RuntimeName, Dialect][] = [
  ["runc", "sqlite"],
  ["runsc", "sqlite"],
  ["runc", "postgres"],
];

describe.each(SETUPS)("snapshots on %s over %s", (runtime, dialect) => {
  let p: TemplatePlatform;
  const sandboxes: Sandbox[] = [];
  const track = (s: Sandbox) => {
    sandboxes.push(s);
    return s;
  };

  beforeAll(async () => {
    p = await startTemplatePlatform(runtime, dialect);
    p.useClient();
  });

  afterAll(async () => {
    await Promise.all(sandboxes.map((s) => s.kill().catch(() => undefined)));
    await p?.stop();
  });

  it("names snapshots as the seed says and starts sandboxes with the files as they were", async () => {
    const source = track(await Sandbox.create());
    await source.files.write("/home/user/state.txt", "v1");
    await source.commands.run(
      "rm /home/user/.bashrc && mkdir -p /home/user/made/deep && echo x > /home/user/made/deep/f",
    );

    const unnamed = await source.createSnapshot();
    const templateId = unnamed.snapshotId.split(":")[0];
    expect(unnamed).toEqual({ snapshotId: `${templateId}:default`, names: [] });

    const name = `snap-${runtime}`;
    const first = await source.createSnapshot({ name });
    expect(first).toEqual({ snapshotId: `default/${name}:default`, names: [`default/${name}:default`] });

    // the source keeps running, with its files
    expect(await source.isRunning()).toBe(true);
    await source.files.write("/home/user/state.txt", "v2");
    // the same name again: a new build of the same template, the tag moves to it
    const second = await source.createSnapshot({ name });
    expect(second).toEqual(first);
    const tagged = await source.createSnapshot({ name: `${name}:v2` });
    expect(tagged).toEqual({ snapshotId: `default/${name}:v2`, names: [`default/${name}:v2`] });

    const template = await p.api("GET", `/templates/${encodeURIComponent(`default/${name}`)}`);
    expect(template.status).toBe(200);
    expect(template.body.builds).toHaveLength(3);

    const fromFirst = track(await Sandbox.create(unnamed.snapshotId));
    expect(await fromFirst.files.read("/home/user/state.txt")).toBe("v1");
    const check = await fromFirst.commands.run(
      "test -e /home/user/.bashrc || echo gone; cat /home/user/made/deep/f",
    );
    expect(check.stdout).toBe("gone\nx\n");

    const fromName = track(await Sandbox.create(name));
    expect(await fromName.files.read("/home/user/state.txt")).toBe("v2");
    expect((await fromName.commands.run("whoami && pwd")).stdout).toBe("user\n/home/user\n");

    // a snapshot of a sandbox started from a snapshot stacks on it
    await fromName.files.write("/home/user/more.txt", "more");
    const nested = await fromName.createSnapshot();
    const fromNested = track(await Sandbox.create(nested.snapshotId));
    expect(
      await fromNested.commands.run("cat /home/user/state.txt /home/user/more.txt").then((r) => r.stdout),
    ).toBe("v2more");

    const listed = await source.listSnapshots().nextItems();
    expect(listed.map((s) => s.snapshotId).sort()).toEqual(
      [unnamed.snapshotId, `default/${name}:default`, `default/${name}:v2`].sort(),
    );
    const byName = await Sandbox.listSnapshots({ name: `${name}:v2` }).nextItems();
    expect(byName).toEqual([{ snapshotId: `default/${name}:v2`, names: [`default/${name}:v2`] }]);

    await expect(source.createSnapshot({ name: "someone-else/snap" })).rejects.toThrow(/namespace/);
    await expect(Sandbox.createSnapshot("no-such-sandbox")).rejects.toThrow(/not found/i);

    // deleting is refused while sandboxes run from it, then works once; the second time it is gone
    const refused = await p.api("DELETE", `/templates/${encodeURIComponent(`default/${name}:default`)}`);
    expect(refused.status).toBe(409);
    await fromName.kill();
    await fromNested.kill();
    expect(await Sandbox.deleteSnapshot(`default/${name}:default`)).toBe(true);
    expect(await Sandbox.deleteSnapshot(`default/${name}:default`)).toBe(false);
  });

  it("forks a running sandbox into new sandboxes with its files", async () => {
    const source = track(await Sandbox.create());
    await source.files.write("/home/user/fork.txt", "from the source");
    const forks = await source.fork({ count: 2, timeoutMs: 60_000 });
    expect(forks).toHaveLength(2);
    for (const fork of forks) {
      if (!(fork instanceof Sandbox)) throw fork;
      track(fork);
      expect(fork.sandboxId).not.toBe(source.sandboxId);
      expect(await fork.files.read("/home/user/fork.txt")).toBe("from the source");
    }
    expect(await source.isRunning()).toBe(true);
  });
});
