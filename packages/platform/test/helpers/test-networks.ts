/**
 * Names and address ranges of test platforms, which run side by side in parallel jest workers:
 * each worker draws from a block of its own, so two platforms alive at once never share a
 * range, and a leftover of a killed run is swept before the next (see sweepTestLeftovers).
 * Fixed ranges elsewhere (10.250 for the runtime smoke test, 10.252 for the network test)
 * are outside 10.100-10.249, where these come from.
 * X_TEST_WORKER_OFFSET shifts a whole run's workers to later blocks, so a second run of a few
 * test files (by hand, beside a full run, with X_TEST_NO_SWEEP=1) does not collide with it.
 */
const SLOTS = 150;
const PER_WORKER = 15;
let drawn = 0;

/** Prefixes of test platforms: `t` (in-process) or `r` (a real `x serve`), then 2 + 2 characters. */
export const TEST_PREFIX = /^[tr][0-9a-z]{4}$/;

export function testNetwork(kind: "t" | "r"): { prefix: string; cidr: string } {
  const worker = Number(process.env.JEST_WORKER_ID ?? 1) + Number(process.env.X_TEST_WORKER_OFFSET ?? 0);
  const slot = (((worker - 1) * PER_WORKER) % SLOTS) + (drawn++ % PER_WORKER);
  const salt = Math.floor(Math.random() * 36 ** 2)
    .toString(36)
    .padStart(2, "0");
  return { prefix: `${kind}${slot.toString(36).padStart(2, "0")}${salt}`, cidr: `10.${100 + slot}.0.0/16` };
}
