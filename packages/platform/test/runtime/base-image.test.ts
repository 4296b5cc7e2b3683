import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { command } from "../../src/lib/command.js";
import { baseRecipe, ensureImage, recipeHash } from "../../src/rootfs/base-image.js";
import { baseImage, DATA_DIR } from "./support/test-env.js";

// The base template's root filesystem, checked from the host with chroot (no runtime involved).
// Builds it on first run (debootstrap + apt, about 2 minutes), then reuses the cached image.

let rootfs: string;

/** Runs a shell command inside the image as root or as another user. */
function inImage(script: string, user = "root"): Promise<string> {
  return command("chroot", ["--userspec", user, rootfs, "/bin/bash", "-c", script], {
    env: {
      PATH: "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin",
      HOME: user === "root" ? "/root" : `/home/${user}`,
    },
  });
}

beforeAll(async () => {
  rootfs = (await baseImage()).rootfs;
}, 20 * 60_000);

test("the cache is keyed by the recipe and reused", async () => {
  const recipe = await baseRecipe();
  const again = await ensureImage(recipe, { dataDir: DATA_DIR });
  expect(again).toEqual({ rootfs, hash: recipeHash(recipe), built: false });
  expect(recipeHash({ ...recipe, packages: [...recipe.packages, "jq"] })).not.toBe(recipeHash(recipe));
  expect(rootfs).toBe(join(DATA_DIR, "images", `base-${recipeHash(recipe)}`, "rootfs"));
});

test("user is uid 1000 with home /home/user and bash", async () => {
  expect(await inImage("getent passwd user")).toBe("user:x:1000:1000::/home/user:/bin/bash\n");
  expect(await inImage("stat -c %U:%G /home/user")).toBe("user:user\n");
});

test("user has passwordless sudo", async () => {
  expect(await inImage("sudo -n id -u", "user")).toBe("0\n");
});

test("the expected tools are installed", async () => {
  const out = await inImage(
    "python3 --version && python --version && pip --version && node --version && npm --version && git --version && curl --version | head -1 && tput -T xterm cols && command -v ps",
    "user",
  );
  expect(out).toMatch(/^Python 3\.11[\s\S]*^Python 3\.11/m);
  expect(out).toMatch(/^pip \d+/m);
  // the platform's own Node.js, copied in ahead of Debian's (which npm's shebang finds too)
  expect(out).toMatch(new RegExp(`^${process.version.replace(/\./g, "\\.")}$`, "m"));
  expect(await inImage("command -v node", "user")).toBe("/usr/local/bin/node\n");
  expect(out).toMatch(/^git version/m);
  expect(out).toMatch(/^curl \d/m);
  expect(out).toMatch(/^\/usr\/bin\/ps$/m);
});

test("pip may install system-wide and the en_US locale exists", async () => {
  expect(await inImage("pip config list")).toMatch(/break-system-packages='true'/);
  expect(await inImage("locale -a")).toMatch(/en_US\.utf8/);
});

test("/tmp and /var/tmp are writable by user", async () => {
  for (const dir of ["tmp", "var/tmp"]) {
    expect(((await stat(join(rootfs, dir))).mode & 0o7777).toString(8)).toBe("1777");
  }
  await inImage("touch /tmp/.probe /var/tmp/.probe && rm /tmp/.probe /var/tmp/.probe", "user");
});

test("the build leaves no apt lists, policy-rc.d or host mounts behind", async () => {
  expect(await inImage("ls /var/lib/apt/lists | grep -v partial || true")).toBe("");
  await expect(stat(join(rootfs, "usr/sbin/policy-rc.d"))).rejects.toThrow(/ENOENT/);
  // mounted on, not mentioned: other tests' sandboxes name the image as an overlay lower dir
  const mountPoints = (await readFile("/proc/mounts", "utf8")).split("\n").map((l) => l.split(" ")[1] ?? "");
  expect(mountPoints.filter((m) => m === rootfs || m.startsWith(`${rootfs}/`))).toEqual([]);
});
