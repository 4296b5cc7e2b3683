/** When a failed delivery is tried again, and when it is given up. */
export interface RetryPolicy {
  /** The wait after the first failed attempt; each further one doubles it. */
  baseDelayMs: number;
  /** The longest wait between two attempts. */
  maxDelayMs: number;
  /** Attempts in all, the first included. */
  maxAttempts: number;
  /** A delivery this long after its event was matched is not tried again. */
  maxAgeMs: number;
  /** Each wait is spread by up to this fraction either way, so retries of many deliveries do not come in step. */
  jitter: number;
}

/** 1s, 2s, 4s … 256s: ten attempts over about eight and a half minutes; nothing after a day. */
export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  baseDelayMs: 1000,
  maxDelayMs: 10 * 60_000,
  maxAttempts: 10,
  maxAgeMs: 24 * 3600_000,
  jitter: 0.1,
};

/** The wait after attempt `attempt` (1 for the first) failed; `random` in [0, 1). */
export function retryDelayMs(policy: RetryPolicy, attempt: number, random: number): number {
  const plain = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(plain * (1 + policy.jitter * (2 * random - 1)));
}

/**
 * After attempt `attempt` of a delivery matched at `createdAtMs` failed at `nowMs`: when to
 * try again, or undefined when it is given up (attempts spent, or too old by then).
 */
export function nextAttemptAt(
  policy: RetryPolicy,
  attempt: number,
  createdAtMs: number,
  nowMs: number,
  random: number,
): number | undefined {
  if (attempt >= policy.maxAttempts) return undefined;
  const at = nowMs + retryDelayMs(policy, attempt, random);
  return at - createdAtMs > policy.maxAgeMs ? undefined : at;
}
