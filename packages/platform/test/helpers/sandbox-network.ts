import { CommandExitError, type Sandbox } from "e2b";
import type { TestPlatform } from "./platform.js";

/** Runs a command in a sandbox, resolving with its result whether or not it exits 0. */
export async function runCommand(sandbox: Sandbox, cmd: string, timeoutMs?: number) {
  try {
    return await sandbox.commands.run(cmd, timeoutMs === undefined ? {} : { timeoutMs });
  } catch (err) {
    if (err instanceof CommandExitError) return err;
    throw err;
  }
}

/** A sandbox's egress decision log, oldest first (the platform's extension). */
export async function networkDecisions(t: TestPlatform, sandboxId: string) {
  const res = await fetch(`${t.apiUrl}/sandboxes/${sandboxId}/network/decisions`, {
    headers: { "X-API-Key": t.apiKey },
  });
  if (res.status !== 200) throw new Error(`decisions of ${sandboxId}: ${res.status}`);
  return ((await res.json()) as { decisions: Array<Record<string, unknown>> }).decisions;
}

/**
 * A sandbox's decision log once it holds what `expected` asks for (an asymmetric matcher such
 * as expect.arrayContaining), or as it stands after `withinMs`. The kernel's verdicts reach the
 * log through `nft monitor trace`, a netlink stream read by another process: on a loaded host a
 * connection's line can arrive after the command that made it has returned.
 */
export async function networkDecisionsHolding(
  t: TestPlatform,
  sandboxId: string,
  expected: { asymmetricMatch(other: unknown): boolean },
  withinMs = 10_000,
) {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const log = await networkDecisions(t, sandboxId);
    if (expected.asymmetricMatch(log) || Date.now() > deadline) return log;
    await new Promise((r) => setTimeout(r, 200));
  }
}
