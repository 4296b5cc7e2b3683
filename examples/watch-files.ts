/** Watches a directory in the sandbox while a command writes, renames and removes files in it. */
import { EventType, type FilesystemEvent, Sandbox } from "@x/sdk";
import type { ExampleOptions } from "./shared.js";

export async function main(options: ExampleOptions = {}): Promise<string[]> {
  const log = options.log ?? console.log;
  const sandbox = await Sandbox.create({ ...options, timeoutMs: 60_000 });
  try {
    await sandbox.files.makeDir("/home/user/inbox");
    const events: FilesystemEvent[] = [];
    const watch = await sandbox.files.watchDir("/home/user/inbox", (event) => {
      events.push(event);
      log(`${EventType[event.type]} ${event.name}`);
    });
    await sandbox.commands.run("cd ~/inbox && echo hi > a.txt && mv a.txt b.txt && rm b.txt");
    // Events arrive asynchronously: wait for the last one.
    const deadline = Date.now() + 10_000;
    while (!events.some((e) => e.type === EventType.REMOVE) && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 50));
    await watch.stop();
    return events.map((e) => `${EventType[e.type]} ${e.name}`);
  } finally {
    await sandbox.kill();
  }
}
