import { mkdir, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { isOverlayMounted, mountOverlay, overlayMounts, unmountOverlay } from "../../src/rootfs/overlay.js";
import { runDir } from "./support/test-env.js";

// Real overlay mounts (needs root): template layers below, the sandbox's own layer on top.

let dir: string;

beforeAll(async () => {
  dir = await runDir("overlay");
});

afterAll(async () => {
  for (const m of await overlayMounts(dir)) await unmountOverlay(m);
  await rm(dir, { recursive: true, force: true });
});

async function layer(name: string, files: Record<string, string>): Promise<string> {
  const root = join(dir, name);
  for (const [path, text] of Object.entries(files)) {
    await mkdir(join(root, path, ".."), { recursive: true });
    await writeFile(join(root, path), text);
  }
  return root;
}

test("merges layers topmost first; writes and deletes land in the upper dir only", async () => {
  const base = await layer("base", { "etc/os": "base", "etc/gone": "x" });
  const step = await layer("step", { "etc/os": "step", "app/a.txt": "a" });
  const target = join(dir, "rootfs");
  const upperDir = join(dir, "upper");
  await mountOverlay({ lowers: [step, base], upperDir, workDir: join(dir, "work"), target });
  expect(await isOverlayMounted(target)).toBe(true);
  expect(await readFile(join(target, "etc/os"), "utf8")).toBe("step");
  expect(await readFile(join(target, "app/a.txt"), "utf8")).toBe("a");

  await writeFile(join(target, "app/new.txt"), "new");
  await rm(join(target, "etc/gone"));
  expect(await readFile(join(upperDir, "app/new.txt"), "utf8")).toBe("new");
  // a whiteout (0:0 character device) records the deletion in the upper layer
  expect((await stat(join(upperDir, "etc/gone"))).isCharacterDevice()).toBe(true);
  expect(await readFile(join(base, "etc/gone"), "utf8")).toBe("x");

  await unmountOverlay(target);
  await unmountOverlay(target);
  expect(await isOverlayMounted(target)).toBe(false);
  expect(await readdir(target)).toEqual([]);
});

test("many long layer paths still mount (relative lowerdirs past the page-size limit)", async () => {
  const lowers: string[] = [];
  for (let i = 0; i < 40; i++) {
    lowers.push(
      await layer(`layers/${"l".repeat(90)}-${String(i).padStart(2, "0")}`, { [`f${i}`]: String(i) }),
    );
  }
  expect(lowers.join(":").length).toBeGreaterThan(4000);
  const target = join(dir, "many");
  await mountOverlay({ lowers, upperDir: join(dir, "many-upper"), workDir: join(dir, "many-work"), target });
  try {
    expect(await readFile(join(target, "f0"), "utf8")).toBe("0");
    expect(await readFile(join(target, "f39"), "utf8")).toBe("39");
  } finally {
    await unmountOverlay(target);
  }
});

test("paths overlayfs cannot express are refused", async () => {
  await expect(
    mountOverlay({
      lowers: [join(dir, "a:b")],
      upperDir: join(dir, "u"),
      workDir: join(dir, "w"),
      target: join(dir, "t"),
    }),
  ).rejects.toThrow(/may not contain/);
});
