/**
 * `minFreeDiskMb` of a template build, as the public e2b client sends it, under both runtimes:
 * a sandbox of the build has at least that much free on its disk (`df` inside it), whatever
 * the build's steps wrote (they lie in layers below the sandbox's own disk), and a build that
 * asks for more than a sandbox's disk leaves free is refused before anything is built.
 */
import path from "node:path";
import { Sandbox, Template } from "e2b";
import { diskFreeSpaceMB } from "../../src/rootfs/disk.js";
import { TEST_DATA_DIR } from "../helpers/platform.js";
import { RUNTIMES } from "../helpers/x-serve.js";
import { startTemplatePlatform, type TemplatePlatform } from "./support.js";

const DISK_MB = 1024;

describe.each(RUNTIMES)("minFreeDiskMb under %s", (runtime) => {
  let p: TemplatePlatform;
  let most: number;
  const sandboxes: Sandbox[] = [];

  beforeAll(async () => {
    p = await startTemplatePlatform(runtime, "sqlite", { diskSizeMB: DISK_MB });
    p.useClient();
    most = await diskFreeSpaceMB(DISK_MB, path.join(TEST_DATA_DIR, "disks"));
  }, 120_000);

  afterAll(async () => {
    await Promise.all(sandboxes.map((s) => s.kill().catch(() => undefined)));
    await p?.stop();
  });

  it("gives a sandbox of the build at least the free disk it asked for, whatever its steps wrote", async () => {
    // ext4 keeps a little of the disk (journal, inode tables, a reserve), a sandbox's boot a little more
    expect(most).toBeGreaterThan(DISK_MB * 0.9);
    expect(most).toBeLessThan(DISK_MB);
    const name = `free-disk-${runtime}`;
    const built = await Template.build(
      Template().fromTemplate("base").runCmd("head -c 300M /dev/zero > /home/user/filler"),
      name,
      { minFreeDiskMb: most },
    );
    const sandbox = await Sandbox.create(name);
    sandboxes.push(sandbox);
    const df = await sandbox.commands.run("stat -c %s /home/user/filler; df -m --output=avail / | tail -1");
    const [filler, avail] = df.stdout.trim().split("\n").map(Number);
    expect(filler).toBe(300 * 2 ** 20);
    expect(avail).toBeGreaterThanOrEqual(most);
    // and it may fill it: the free space is its own
    const write = await sandbox.commands.run(`fallocate -l ${most - 8}M /home/user/room && echo ok`);
    expect(write.stdout).toBe("ok\n");
    const build = await p.t.platform.store.templates.getBuild(built.buildId);
    expect(build?.diskSizeMB).toBe(DISK_MB);
  }, 180_000);

  it("refuses a build asking for more free disk than a sandbox's disk leaves, in the platform's words, before building", async () => {
    const name = `too-much-disk-${runtime}`;
    const refused = await Template.build(Template().fromTemplate("base").runCmd("true"), name, {
      minFreeDiskMb: most + 1,
    }).catch((err: Error) => err);
    expect(refused).toBeInstanceOf(Error);
    expect((refused as Error).message).toContain(
      `minFreeDiskMb exceeds team limits (max: ${most} MiB, what a sandbox's disk of ${DISK_MB} MiB leaves free), got ${most + 1}`,
    );
    expect(await Template.exists(name)).toBe(false);
  });
});
