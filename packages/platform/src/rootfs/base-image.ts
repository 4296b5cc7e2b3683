import { createHash, randomBytes } from "node:crypto";
import { chmod, copyFile, mkdir, readdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { command, commandLines, requireBinary } from "../lib/command.js";
import { type AptMirrors, hostAptMirrors } from "./apt-mirror.js";

/** Everything that decides an image's contents; its hash is the cache key. */
export interface ImageRecipe {
  name: string;
  suite: string;
  mirrors: AptMirrors;
  packages: string[];
  /** Shell run as root inside the new root filesystem after the packages are installed. */
  setup: string;
  /**
   * The version of the Node.js running the platform, whose binary is copied to
   * /usr/local/bin/node, ahead of the distribution's on PATH: Debian's node loads an 80 MB
   * libnode at every start (17 ms per `node -v` under runc, ~115 ms under gVisor, against 3 ms
   * and ~50 ms for this one). A copy, not a mount, so a template keeps its node when the host's
   * changes; a new version makes a new recipe.
   */
  nodeVersion?: string;
}

export type ImageBuildPhase = "debootstrap" | "packages" | "finalize";

export interface ImageBuildProgress {
  phase: ImageBuildPhase;
  line: string;
  /** Lines printed so far, of about `total` (what the last build of this image printed). */
  done: number;
  total: number;
}

/** Lines a first base image build prints (debootstrap, then apt), before any build was counted. */
const EXPECTED_LINES = 2900;

export interface ImageBuildOptions {
  /** Images live in `<dataDir>/images/<name>-<hash>/rootfs`. */
  dataDir: string;
  onProgress?: (p: ImageBuildProgress) => void;
}

export interface BuiltImage {
  rootfs: string;
  hash: string;
  /** False when the cached image was reused. */
  built: boolean;
}

/** Bump when the build procedure itself changes in a way the recipe does not show. */
const BUILDER_VERSION = 1;

// What users of E2B's base expect; attr (setfattr) and iproute2 (ss, for readiness checks
// like waitForPort) are used by the public client's own tooling and tests.
const BASE_PACKAGES = [
  "attr",
  "bash",
  "ca-certificates",
  "curl",
  "git",
  "iproute2",
  "locales",
  "ncurses-bin",
  "nodejs",
  "npm",
  "procps",
  "python3",
  // `python` as well as `python3`, as E2B's base has (its own tests run `python -m http.server`)
  "python-is-python3",
  "python3-pip",
  "python3-venv",
  "sudo",
];

const BASE_SETUP = `set -eu
useradd --create-home --uid 1000 --user-group --shell /bin/bash user
echo 'user ALL=(ALL:ALL) NOPASSWD: ALL' > /etc/sudoers.d/user
chmod 0440 /etc/sudoers.d/user
chmod 1777 /tmp /var/tmp
# pip refuses system-wide installs on Debian 12 (PEP 668); sandbox users expect 'pip install' to work
printf '[global]\\nbreak-system-packages = true\\n' > /etc/pip.conf
# a login shell runs /etc/profile for every command the client sends (bash -l -c): its
# $(id -u) is a fork and an exec each time (~15 ms under gVisor); bash knows its EUID
sed -i 's/"$(id -u)"/"\${EUID:-$(id -u)}"/' /etc/profile
sed -i 's/^# *\\(en_US.UTF-8 UTF-8\\)/\\1/' /etc/locale.gen
locale-gen
echo 'LANG=C.UTF-8' > /etc/default/locale
`;

/** The recipe of the \`base\` template: a Debian 12 system matching what e2b users expect of their base. */
export async function baseRecipe(mirrors?: AptMirrors): Promise<ImageRecipe> {
  return {
    name: "base",
    suite: "bookworm",
    mirrors: mirrors ?? (await hostAptMirrors("bookworm")),
    packages: BASE_PACKAGES,
    setup: BASE_SETUP,
    nodeVersion: process.version,
  };
}

export function recipeHash(recipe: ImageRecipe): string {
  return createHash("sha256")
    .update(JSON.stringify({ v: BUILDER_VERSION, ...recipe }))
    .digest("hex")
    .slice(0, 16);
}

const building = new Map<string, Promise<BuiltImage>>();

/**
 * Returns the image for `recipe`, building it first if no image with the recipe's hash exists.
 * Builds go to a temporary directory that is renamed into place only when complete, so a crash
 * never leaves a half-built image that looks finished.
 */
export function ensureImage(recipe: ImageRecipe, opts: ImageBuildOptions): Promise<BuiltImage> {
  const hash = recipeHash(recipe);
  const key = `${opts.dataDir}\0${hash}`;
  let pending = building.get(key);
  if (!pending) {
    pending = buildOnce(recipe, hash, opts).finally(() => building.delete(key));
    building.set(key, pending);
  }
  return pending;
}

async function buildOnce(recipe: ImageRecipe, hash: string, opts: ImageBuildOptions): Promise<BuiltImage> {
  const imagesDir = join(opts.dataDir, "images");
  const finalDir = join(imagesDir, `${recipe.name}-${hash}`);
  const rootfs = join(finalDir, "rootfs");
  if (await exists(rootfs)) return { rootfs, hash, built: false };

  const debootstrap = await requireBinary("debootstrap", "apt-get install debootstrap");
  await mkdir(imagesDir, { recursive: true });
  await removeStaleBuilds(imagesDir, `${recipe.name}-${hash}`);
  const tmpDir = join(
    imagesDir,
    `.tmp-${recipe.name}-${hash}-${process.pid}-${randomBytes(4).toString("hex")}`,
  );
  const tmpRoot = join(tmpDir, "rootfs");
  // how many lines the build prints is what the last one printed: the share done can be shown
  const countFile = join(imagesDir, `${recipe.name}.lines`);
  const total = Number(await readFile(countFile, "utf8").catch(() => "")) || EXPECTED_LINES;
  let done = 0;
  const report = (phase: ImageBuildPhase) => (line: string) =>
    opts.onProgress?.({ phase, line, done: ++done, total: Math.max(total, done) });
  try {
    await mkdir(tmpDir);
    await commandLines(
      debootstrap,
      ["--variant=minbase", "--components=main", recipe.suite, tmpRoot, recipe.mirrors.main],
      report("debootstrap"),
    );
    await writeAptConfig(tmpRoot, recipe);
    const install = [
      "apt-get update",
      `apt-get install -y --no-install-recommends ${recipe.packages.join(" ")}`,
      recipe.setup,
      "apt-get clean",
    ].join("\n");
    await inChroot(tmpRoot, install, report("packages"));
    const finalize = report("finalize");
    if (recipe.nodeVersion) await installNode(tmpRoot, recipe.nodeVersion);
    await rm(join(tmpRoot, "usr/sbin/policy-rc.d"));
    await rm(join(tmpRoot, "var/lib/apt/lists"), { recursive: true });
    await mkdir(join(tmpRoot, "var/lib/apt/lists/partial"), { recursive: true });
    finalize(`image size ${(await command("du", ["-sh", tmpRoot])).split("\t")[0]}`);
    try {
      await rename(tmpDir, finalDir);
    } catch (err) {
      // another process finished the same recipe first: theirs is as good as ours
      if (!(await exists(rootfs))) throw err;
      await rm(tmpDir, { recursive: true, force: true });
      return { rootfs, hash, built: false };
    }
    finalize(`image ready at ${rootfs}`);
    await writeFile(countFile, String(done));
    return { rootfs, hash, built: true };
  } catch (err) {
    await rm(tmpDir, { recursive: true, force: true });
    throw err;
  }
}

async function installNode(root: string, version: string): Promise<void> {
  if (version !== process.version)
    throw new Error(`the recipe wants Node.js ${version} but the platform runs ${process.version}`);
  await copyFile(process.execPath, join(root, "usr/local/bin/node"));
  await chmod(join(root, "usr/local/bin/node"), 0o755);
}

async function writeAptConfig(root: string, recipe: ImageRecipe): Promise<void> {
  const { main, security } = recipe.mirrors;
  const s = recipe.suite;
  await writeFile(
    join(root, "etc/apt/sources.list"),
    `deb ${main} ${s} main\ndeb ${main} ${s}-updates main\ndeb ${security} ${s}-security main\n`,
  );
  // keeps package maintainer scripts from starting daemons inside the build chroot
  await writeFile(join(root, "usr/sbin/policy-rc.d"), "#!/bin/sh\nexit 101\n", { mode: 0o755 });
  await copyFile("/etc/resolv.conf", join(root, "etc/resolv.conf"));
}

/**
 * Runs a script chrooted into `root` with /proc and /dev mounted in a private mount namespace:
 * the mounts vanish with the namespace, so a failed build never leaves mounts behind.
 */
async function inChroot(root: string, script: string, onLine: (line: string) => void): Promise<void> {
  const outer = [
    "set -e",
    `mount -t proc proc "$1/proc"`,
    `mount --bind /dev "$1/dev"`,
    `exec chroot "$1" /bin/sh -c "$2"`,
  ].join("\n");
  await commandLines(
    "unshare",
    [
      "--mount",
      "--propagation",
      "private",
      "--pid",
      "--fork",
      "sh",
      "-c",
      outer,
      "sh",
      root,
      `set -e\n${script}`,
    ],
    onLine,
    {
      env: {
        PATH: "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        DEBIAN_FRONTEND: "noninteractive",
        LANG: "C.UTF-8",
      },
    },
  );
}

/** Leftovers of builds whose process died; builds of live processes (named by pid) are left alone. */
async function removeStaleBuilds(imagesDir: string, stem: string): Promise<void> {
  for (const name of await readdir(imagesDir)) {
    if (!name.startsWith(`.tmp-${stem}-`)) continue;
    const pid = Number(name.slice(`.tmp-${stem}-`.length).split("-")[0]);
    if (!isAlive(pid)) await rm(join(imagesDir, name), { recursive: true, force: true });
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

/** The \`base\` template's root filesystem, built on first need. */
export async function ensureBaseImage(opts: ImageBuildOptions): Promise<BuiltImage> {
  return ensureImage(await baseRecipe(), opts);
}
