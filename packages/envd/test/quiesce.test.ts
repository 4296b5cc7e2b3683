/**
 * Quiesce and wake: before a checkpoint envd closes every socket (gVisor cannot save listening
 * ones) on SIGUSR1, and re-opens on SIGUSR2 with its processes still running.
 */
import { type RunningEnvd, startEnvd } from "./helpers/envd-process.js";

async function healthy(url: string): Promise<boolean> {
  return fetch(`${url}/health`, { signal: AbortSignal.timeout(2000) })
    .then((r) => r.status === 204)
    .catch(() => false);
}

async function until(check: () => Promise<boolean>, ms = 5000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return false;
}

describe("quiesce and wake", () => {
  let envd: RunningEnvd;
  beforeAll(async () => {
    envd = await startEnvd();
  });
  afterAll(async () => {
    await envd.stop();
  });

  it("closes every socket on SIGUSR1 and serves again on SIGUSR2 with processes intact", async () => {
    const stream = envd.client.process.start({
      process: { cmd: "/bin/sh", args: ["-c", "sleep 30"], envs: {} },
      tag: "survivor",
      stdin: false,
    });
    const first = await stream[Symbol.asyncIterator]().next();
    const pid = first.value?.event?.event.case === "start" ? first.value.event.event.value.pid : undefined;
    expect(pid).toBeGreaterThan(0);

    envd.child.kill("SIGUSR1");
    expect(await until(async () => !(await healthy(envd.url)))).toBe(true);
    // The open stream was cut too: nothing may hold a socket while the sandbox is saved.
    await expect(
      (async () => {
        for await (const _ of stream) {
          // drain until the cut
        }
      })(),
    ).rejects.toBeDefined();

    envd.child.kill("SIGUSR2");
    expect(await until(() => healthy(envd.url))).toBe(true);
    const { processes } = await envd.client.process.list({});
    expect(processes.map((p) => p.pid)).toContain(pid);
    await envd.client.process.sendSignal({
      process: { selector: { case: "tag", value: "survivor" } },
      signal: 9,
    });
  });

  it("stays alive while quiesced with nothing else running", async () => {
    envd.child.kill("SIGUSR1");
    expect(await until(async () => !(await healthy(envd.url)))).toBe(true);
    await new Promise((r) => setTimeout(r, 300));
    expect(envd.child.exitCode).toBeNull();
    envd.child.kill("SIGUSR2");
    expect(await until(() => healthy(envd.url))).toBe(true);
  });
});
