import { defaultProcessLimit, gvisorHeadroomMB, sandboxLimits } from "./resource-limits.js";

describe("sandboxLimits", () => {
  it("gives a runc sandbox exactly its memory and tasks that follow it", () => {
    const l = sandboxLimits("runc", { memoryMB: 1024 });
    expect(l.specMemoryBytes).toBe(2 ** 30);
    expect(l.cgroupMemoryBytes).toBe(2 ** 30);
    expect(l.pidsMax).toBe(1024 + 64);
    expect(l.envdEnv).toEqual([
      "ENVD_MEMORY_LIMIT_MB=1024",
      "ENVD_OOM_SCORE_ADJ=1000",
      "ENVD_PROCESS_LIMIT=1024",
    ]);
    expect(sandboxLimits("runc", { memoryMB: 1024, processLimit: 50 }).pidsMax).toBe(114);
  });

  it("gives a gVisor sandbox headroom for its own processes and caps tasks per account", () => {
    const l = sandboxLimits("runsc", { memoryMB: 512 });
    expect(l.specMemoryBytes).toBe(512 * 2 ** 20);
    expect(l.cgroupMemoryBytes).toBe((512 + 256) * 2 ** 20);
    expect(l.envdEnv).toContain("ENVD_MEMORY_WATCHDOG=1");
    expect(l.envdEnv).toContain("ENVD_PROCESS_LIMIT=128");
    expect(l.envdEnv).toContain("ENVD_PROCESS_RLIMIT=1");
    expect(gvisorHeadroomMB(4096)).toBe(1024);
  });

  it("bounds runc's default process limit", () => {
    expect(defaultProcessLimit("runc", 64)).toBe(128);
    expect(defaultProcessLimit("runc", 2048)).toBe(2048);
    expect(defaultProcessLimit("runc", 65536)).toBe(4096);
    expect(defaultProcessLimit("runsc", 65536)).toBe(128);
  });
});
