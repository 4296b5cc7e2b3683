/** Snapshots a sandbox, starts a new one from the snapshot, and forks the running one. */
import { Sandbox, Snapshot } from "@x/sdk";
import type { ExampleOptions } from "./shared.js";

export async function main(
  options: ExampleOptions = {},
): Promise<{ fromSnapshot: string; fromFork: string }> {
  const log = options.log ?? console.log;
  const sandbox = await Sandbox.create({ ...options, timeoutMs: 120_000 });
  const started: Sandbox[] = [];
  try {
    await sandbox.files.write("/home/user/notes.txt", "written before the snapshot");
    const snapshot = await sandbox.createSnapshot();
    log(`snapshot ${snapshot.snapshotID}`);
    await sandbox.files.write("/home/user/notes.txt", "written before the fork");

    const restored = await Sandbox.create({ ...options, template: snapshot.snapshotID, timeoutMs: 60_000 });
    started.push(restored);
    const fromSnapshot = await restored.files.read("/home/user/notes.txt");
    log(`from the snapshot: ${fromSnapshot}`);

    const [fork] = await sandbox.fork({ timeoutMs: 60_000 });
    if (!(fork instanceof Sandbox)) throw fork ?? new Error("no fork was made");
    started.push(fork);
    const fromFork = await fork.files.read("/home/user/notes.txt");
    log(`from the fork ${fork.sandboxId}: ${fromFork}`);
    return { fromSnapshot, fromFork };
  } finally {
    for (const s of started) await s.kill();
    await sandbox.kill();
    // Snapshots outlive their sandbox: delete this one's (the fork made one too).
    for (const snap of await Snapshot.list({ ...options, sandboxId: sandbox.sandboxId }))
      await Snapshot.delete(snap.snapshotID, options);
  }
}
