import { DEFAULT_RETRY_POLICY, nextAttemptAt, type RetryPolicy, retryDelayMs } from "./backoff.js";

const plain: RetryPolicy = { ...DEFAULT_RETRY_POLICY, jitter: 0 };

describe("webhook retry backoff", () => {
  it("doubles from the base delay: 1s, 2s, 4s, …", () => {
    expect([1, 2, 3, 4, 5].map((n) => retryDelayMs(plain, n, 0.5))).toEqual([1000, 2000, 4000, 8000, 16000]);
  });

  it("never waits longer than the cap", () => {
    const capped = { ...plain, maxDelayMs: 5000 };
    expect([3, 4, 20, 60].map((n) => retryDelayMs(capped, n, 0.5))).toEqual([4000, 5000, 5000, 5000]);
  });

  it("spreads each wait by at most the jitter either way", () => {
    const policy = { ...plain, jitter: 0.2 };
    expect(retryDelayMs(policy, 3, 0)).toBe(3200);
    expect(retryDelayMs(policy, 3, 0.5)).toBe(4000);
    expect(retryDelayMs(policy, 3, 0.999999)).toBe(4800);
  });

  it("gives up after the last attempt", () => {
    const policy = { ...plain, maxAttempts: 3 };
    expect(nextAttemptAt(policy, 1, 0, 100, 0.5)).toBe(1100);
    expect(nextAttemptAt(policy, 2, 0, 100, 0.5)).toBe(2100);
    expect(nextAttemptAt(policy, 3, 0, 100, 0.5)).toBeUndefined();
  });

  it("gives up a delivery that would be retried past its age limit", () => {
    const policy = { ...plain, maxAgeMs: 10_000 };
    expect(nextAttemptAt(policy, 3, 0, 5_000, 0.5)).toBe(9_000);
    expect(nextAttemptAt(policy, 3, 0, 7_000, 0.5)).toBeUndefined();
  });

  it("by default tries ten times over about eight and a half minutes", () => {
    const waits = Array.from({ length: DEFAULT_RETRY_POLICY.maxAttempts - 1 }, (_, i) =>
      retryDelayMs(plain, i + 1, 0.5),
    );
    expect(DEFAULT_RETRY_POLICY.maxAttempts).toBe(10);
    expect(waits.reduce((a, b) => a + b, 0)).toBe(511_000);
  });
});
