import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";

/**
 * The cgroup freezer of a container, written directly: what `runc pause`/`runc resume` do, in
 * well under a millisecond instead of a Go binary's start (runc reads the same freezer state
 * back, so `runc state` still says "paused"). For gVisor it stops the sandbox's sentry and
 * gofer as a whole, where `runsc pause` would cost a netns-joined runsc run each way (runsc's
 * own state keeps saying "running": see isFrozen). Works with cgroup v1 (also the hybrid
 * layout of these hosts) and v2. Returns false when the container's cgroup is not where we put
 * it, or when a freeze does not complete within a second (a task in an uninterruptible wait,
 * e.g. a gVisor gofer in the middle of disk I/O, can hold cgroup v1 in FREEZING): the cgroup is
 * thawed again and the caller falls back to the runtime's own pause.
 */
export async function setFrozen(
  cgroupPath: string,
  frozen: boolean,
  root = "/sys/fs/cgroup",
): Promise<boolean> {
  const deadline = Date.now() + (frozen ? 1_000 : 5_000);
  for (const layout of layouts(root, cgroupPath)) {
    const written = await writeFile(layout.control, frozen ? layout.freeze : layout.thaw).then(
      () => true,
      () => false,
    );
    if (!written) continue;
    // v1 says FREEZING until every task has stopped
    const want = frozen ? "FROZEN" : "THAWED";
    while ((await layout.state()) !== want) {
      if (Date.now() > deadline && frozen) {
        // a freeze that did not complete is undone; false tells the caller to pause another way
        await writeFile(layout.control, layout.thaw);
        return false;
      }
      if (Date.now() > deadline) throw new Error(`cgroup ${cgroupPath} did not thaw`);
      await new Promise((r) => setTimeout(r, 1));
    }
    return true;
  }
  return false;
}

/** Whether the container's cgroup is frozen (false when there is no such cgroup). */
export async function isFrozen(cgroupPath: string, root = "/sys/fs/cgroup"): Promise<boolean> {
  for (const layout of layouts(root, cgroupPath)) {
    const state = await layout.state().catch(() => undefined);
    if (state !== undefined) return state !== "THAWED";
  }
  return false;
}

interface FreezerLayout {
  /** The file a freeze or thaw is written to, and what is written. */
  control: string;
  freeze: string;
  thaw: string;
  /** v1's own words; v2 knows only frozen or not. */
  state(): Promise<"FROZEN" | "FREEZING" | "THAWED">;
}

/** cgroup v1 (also the hybrid layout of these hosts) first, then v2. */
function layouts(root: string, cgroupPath: string): FreezerLayout[] {
  const v1 = join(root, "freezer", cgroupPath, "freezer.state");
  const v2 = join(root, cgroupPath);
  return [
    {
      control: v1,
      freeze: "FROZEN",
      thaw: "THAWED",
      state: async () => (await readFile(v1, "utf8")).trim() as "FROZEN" | "FREEZING" | "THAWED",
    },
    {
      control: join(v2, "cgroup.freeze"),
      freeze: "1",
      thaw: "0",
      state: async () =>
        (await readFile(join(v2, "cgroup.events"), "utf8")).split("\n").includes("frozen 1")
          ? "FROZEN"
          : "THAWED",
    },
  ];
}
