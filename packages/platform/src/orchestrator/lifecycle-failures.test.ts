/**
 * A step of the host failing (or timing out) in the middle of each operation: the state the
 * sandbox is left in, what the caller is answered, and that it can be acted on again.
 */
import { LifecycleHarness } from "./testing/harness.js";

const failureOf = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (err: unknown) => err,
  );

/** What a boot that waited in vain for envd throws (see SandboxHost.boot). */
const envdTimeout = () => new Error("envd at 10.99.0.1:49983 did not answer within 30000 ms (ECONNREFUSED)");

describe("a host step that fails mid-operation", () => {
  let h: LifecycleHarness;
  beforeEach(async () => {
    h = await LifecycleHarness.open();
  });
  afterEach(async () => {
    await h.close();
  });

  describe("create", () => {
    it("fails with the boot's error and leaves nothing when the boot times out", async () => {
      const gate = h.host.script.hold("boot");
      const creating = failureOf(h.create());
      await gate.reached;
      gate.fail(envdTimeout());
      expect(await creating).toMatchObject({ message: expect.stringContaining("did not answer") });
      expect(await h.store.sandboxes.live()).toEqual([]);
      expect(h.host.sandboxes.size).toBe(0);
    });

    it("boots afresh under the same id when the member does not take its identity", async () => {
      h.host.script.failNext("init");
      const sandbox = await h.create();
      expect(await h.stateOf(sandbox.id)).toBe("running");
      expect(h.host.script.idsOf("boot")).toEqual([sandbox.id, sandbox.id]);
    });

    it("ends killed when the member fails and so does the boot that replaces it", async () => {
      const init = h.host.script.hold("init");
      const creating = failureOf(h.create());
      // the member booted; its /init fails, and so does the boot that replaces it
      await init.reached;
      h.host.script.failNext("boot");
      init.fail();
      expect(await creating).toMatchObject({ message: "boot failed" });
      const [id] = h.host.script.idsOf("init");
      expect((await h.store.sandboxes.get(id!))?.state).toBe("killed");
      expect(h.host.sandboxes.size).toBe(0);
    });
  });

  describe("pause", () => {
    it("a failed freeze leaves it running and served", async () => {
      const id = await h.sandboxIn("running");
      h.host.script.failNext("freeze");
      expect(await failureOf(h.orchestrator.pause(id))).toMatchObject({ message: "freeze failed" });
      expect(await h.stateOf(id)).toBe("running");
      expect(await h.orchestrator.route(id)).toMatchObject({ state: "running" });
    });

    it("a failed stop of a files-only pause leaves it frozen on record, and a connect brings it back", async () => {
      const id = await h.sandboxIn("running");
      h.host.script.failNext("stop");
      expect(await failureOf(h.orchestrator.pause(id, "stopped"))).toMatchObject({ message: "stop failed" });
      expect(await h.stateOf(id)).toBe("frozen");
      expect((await h.orchestrator.resume(id, 60)).resumed).toBe(true);
      expect(await h.stateOf(id)).toBe("running");
      expect(await h.orchestrator.route(id)).toMatchObject({ state: "running" });
    });
  });

  describe("deep pause", () => {
    it("stops the sandbox, files kept, when the checkpoint fails", async () => {
      const id = await h.sandboxIn("frozen");
      h.host.script.failNext("checkpoint");
      expect(await h.orchestrator.deepPause(id)).toBe("stopped");
      expect(await h.stateOf(id)).toBe("stopped");
      expect(h.host.conditionOf(id)).toBe("stopped");
    });

    it("stops a runc sandbox, which has no checkpoint", async () => {
      const id = await h.sandboxIn("frozen", { runtime: "runc" });
      expect(await h.orchestrator.deepPause(id)).toBe("stopped");
      expect(h.host.script.idsOf("checkpoint")).toEqual([]);
    });

    it("a failed thaw leaves it frozen, to be deepened later", async () => {
      const id = await h.sandboxIn("frozen");
      h.host.script.failNext("thaw");
      expect(await failureOf(h.orchestrator.deepPause(id))).toMatchObject({ message: "thaw failed" });
      expect(await h.stateOf(id)).toBe("frozen");
      expect(await h.orchestrator.deepPause(id)).toBe("checkpointed");
    });
  });

  describe("resume", () => {
    it.each([
      ["frozen", "thaw"],
      ["checkpointed", "restore"],
      ["stopped", "boot"],
    ] as const)(
      "of a %s sandbox whose %s fails: still paused, and a second resume works",
      async (state, step) => {
        const id = await h.sandboxIn(state);
        h.host.script.failNext(step);
        expect(await failureOf(h.orchestrator.resume(id, 60))).toMatchObject({ message: `${step} failed` });
        expect(await h.stateOf(id)).toBe(state);
        expect(await h.orchestrator.route(id)).toMatchObject({ state: "paused" });
        expect((await h.orchestrator.resume(id, 60)).resumed).toBe(true);
        expect(await h.stateOf(id)).toBe("running");
      },
    );

    it("of a stopped sandbox whose boot times out: still stopped, and a second resume works", async () => {
      const id = await h.sandboxIn("stopped");
      const gate = h.host.script.hold("boot");
      const resuming = failureOf(h.orchestrator.resume(id, 60));
      await gate.reached;
      gate.fail(envdTimeout());
      expect(await resuming).toMatchObject({ message: expect.stringContaining("did not answer") });
      expect(await h.stateOf(id)).toBe("stopped");
      expect((await h.orchestrator.resume(id, 60)).resumed).toBe(true);
    });

    it("does not count a failed resume against the team's quota", async () => {
      const limited = await LifecycleHarness.open({ maxLivePerTeam: 1 });
      try {
        const id = await limited.sandboxIn("stopped");
        limited.host.script.failNext("boot");
        await failureOf(limited.orchestrator.resume(id, 60));
        expect((await limited.orchestrator.resume(id, 60)).resumed).toBe(true);
      } finally {
        await limited.close();
      }
    });
  });

  describe("kill", () => {
    it("a failed destroy is answered, stops serving it, and a second kill finishes", async () => {
      const id = await h.sandboxIn("running");
      h.host.script.failNext("destroy");
      expect(await failureOf(h.orchestrator.kill(id))).toMatchObject({ message: "destroy failed" });
      expect(await h.orchestrator.route(id)).toBeUndefined();
      expect(h.unavailable).toContain(id);
      await h.orchestrator.kill(id);
      expect(await h.stateOf(id)).toBe("killed");
      expect(h.host.conditionOf(id)).toBeUndefined();
    });
  });

  describe("snapshot", () => {
    it("keeps files only, the sandbox frozen meanwhile, when the checkpoint fails", async () => {
      const id = await h.sandboxIn("running");
      h.host.script.failNext("checkpoint");
      const conditions: Array<string | undefined> = [];
      const still = await h.orchestrator.withStateStill(id, { memory: true }, async (s) => {
        conditions.push(h.host.conditionOf(id));
        return s;
      });
      expect(still.memoryImage).toBeUndefined();
      expect(conditions).toEqual(["frozen"]);
      expect(await h.stateOf(id)).toBe("running");
      expect(await h.orchestrator.route(id)).toMatchObject({ state: "running" });
    });

    it("boots the sandbox from its files when the restore after a memory snapshot fails", async () => {
      const id = await h.sandboxIn("running");
      h.host.script.failNext("restore");
      const still = await h.orchestrator.withStateStill(id, { memory: true }, async (s) => s);
      expect(still.memoryImage).toBe(h.host.paths(id).checkpoint);
      expect(await h.stateOf(id)).toBe("running");
      expect(h.host.conditionOf(id)).toBe("running");
      expect(await h.orchestrator.route(id)).toMatchObject({
        state: "running",
        address: h.host.sandboxes.get(id)?.address,
      });
    });
  });

  describe("health and network", () => {
    it("a broken sandbox is error even when what is left of its container cannot be removed", async () => {
      const id = await h.sandboxIn("running");
      h.host.breakAgent(id, { oomKill: true });
      h.host.script.failNext("stop");
      expect(await h.orchestrator.checkHealth(id)).toBe(true);
      expect(await h.orchestrator.route(id)).toMatchObject({
        state: "error",
        reason: expect.stringContaining("OOM killer"),
      });
    });

    it("a failed network update is answered and leaves the policy on record as it was", async () => {
      const id = await h.sandboxIn("running");
      h.host.script.failNext("setEgress");
      const before = (await h.store.sandboxes.get(id))?.egress;
      expect(
        await failureOf(h.orchestrator.setEgress(id, { ...before!, denyOut: ["10.0.0.0/8"] })),
      ).toMatchObject({ message: "setEgress failed" });
      expect((await h.store.sandboxes.get(id))?.egress).toEqual(before);
    });
  });

  describe("adopt", () => {
    it("recovers as stopped, files kept, a running sandbox whose container is gone", async () => {
      const id = await h.sandboxIn("running");
      h.host.sandboxes.delete(id);
      await h.restart();
      expect(await h.stateOf(id)).toBe("stopped");
      expect((await h.orchestrator.resume(id, 60)).resumed).toBe(true);
    });

    it("thaws a running sandbox found frozen (a pause cut short by a crash)", async () => {
      const id = await h.sandboxIn("running");
      await h.host.freeze({ id, runtime: "runsc" });
      await h.restart();
      expect(await h.stateOf(id)).toBe("running");
      expect(h.host.conditionOf(id)).toBe("running");
      expect(await h.orchestrator.route(id)).toMatchObject({ state: "running" });
    });
  });
});
