/**
 * Operations that meet on one sandbox: the second waits for the first, then is decided from
 * the state the first left (lifecycle.ts). Gates of the fake host hold the first mid-step.
 */
import { DomainError } from "../model/errors.js";
import { LifecycleHarness } from "./testing/harness.js";

/** The error a promise rejects with (undefined when it resolves). */
const failureOf = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (err: unknown) => err,
  );

describe("operations that meet on one sandbox", () => {
  let h: LifecycleHarness;
  beforeEach(async () => {
    h = await LifecycleHarness.open();
  });
  afterEach(async () => {
    await h.close();
  });

  it("a pause while pausing waits, then answers 409: already paused", async () => {
    const id = await h.sandboxIn("running");
    const gate = h.host.script.hold("freeze");
    const first = h.orchestrator.pause(id);
    await gate.reached;
    const second = failureOf(h.orchestrator.pause(id));
    gate.open();
    expect(await first).toBe("frozen");
    expect(await second).toMatchObject({ code: "conflict", message: `sandbox ${id} is already paused` });
    expect(h.host.script.idsOf("freeze")).toEqual([id]);
    expect(await h.stateOf(id)).toBe("frozen");
  });

  it("a kill while resuming waits for the resume, then kills the running sandbox", async () => {
    const id = await h.sandboxIn("stopped");
    const gate = h.host.script.hold("boot");
    const resuming = h.orchestrator.resume(id, 60);
    await gate.reached;
    const killing = h.orchestrator.kill(id);
    gate.open();
    expect((await resuming).resumed).toBe(true);
    await killing;
    expect(await h.stateOf(id)).toBe("killed");
    expect(h.host.conditionOf(id)).toBeUndefined();
    expect(await h.orchestrator.route(id)).toBeUndefined();
  });

  it("a resume while killing answers 404", async () => {
    const id = await h.sandboxIn("frozen");
    const gate = h.host.script.hold("destroy");
    const killing = h.orchestrator.kill(id);
    await gate.reached;
    const resuming = failureOf(h.orchestrator.resume(id, 60));
    gate.open();
    await killing;
    expect(await resuming).toMatchObject({ code: "not_found", message: `sandbox ${id} not found` });
  });

  it("a resume of a lost sandbox answers 503 with a time to retry, and changes nothing", async () => {
    const id = await h.sandboxIn("lost");
    const err = await failureOf(h.orchestrator.resume(id, 60));
    expect(err).toBeInstanceOf(DomainError);
    expect(err).toMatchObject({ code: "unavailable", retryAfterSeconds: 5 });
    expect(await h.stateOf(id)).toBe("lost");
  });

  it("an operation on a sandbox still starting waits for its create", async () => {
    const gate = h.host.script.hold("init");
    const creating = h.create();
    await gate.reached;
    // on record already, under its lock
    const [starting] = await h.store.sandboxes.live();
    expect(starting?.state).toBe("starting");
    const killing = h.orchestrator.kill(starting!.id);
    gate.open();
    const created = await creating;
    expect(created.id).toBe(starting!.id);
    await killing;
    expect(await h.stateOf(created.id)).toBe("killed");
    expect(h.host.conditionOf(created.id)).toBeUndefined();
  });

  it("a snapshot while pausing waits, then keeps the paused sandbox's files without a checkpoint", async () => {
    const id = await h.sandboxIn("running");
    const gate = h.host.script.hold("freeze");
    const pausing = h.orchestrator.pause(id);
    await gate.reached;
    const snapshot = h.orchestrator.withStateStill(id, { memory: true }, async (s) => s);
    gate.open();
    await pausing;
    expect(await snapshot).toMatchObject({ upper: h.host.paths(id).upper });
    expect((await snapshot).memoryImage).toBeUndefined();
    expect(h.host.script.idsOf("checkpoint")).toEqual([]);
    expect(await h.stateOf(id)).toBe("frozen");
  });

  it("a timeout while the user pauses leaves the sandbox paused", async () => {
    const id = await h.sandboxIn("running", { autoPause: true });
    await h.store.sandboxes.update(id, { endAt: new Date(Date.now() - 1000).toISOString() });
    const gate = h.host.script.hold("freeze");
    const pausing = h.orchestrator.pause(id, "stopped");
    await gate.reached;
    const expiring = h.orchestrator.expire(id);
    gate.open();
    expect(await pausing).toBe("stopped");
    await expiring;
    expect(await h.stateOf(id)).toBe("stopped");
    expect(h.host.script.idsOf("freeze")).toEqual([id]);
  });

  it("a deep pause while resuming finds the sandbox running and does nothing", async () => {
    const id = await h.sandboxIn("frozen");
    const gate = h.host.script.hold("thaw");
    const resuming = h.orchestrator.resume(id, 60);
    await gate.reached;
    const deepening = h.orchestrator.deepPause(id);
    gate.open();
    await resuming;
    expect(await deepening).toBeUndefined();
    expect(await h.stateOf(id)).toBe("running");
    expect(h.host.script.idsOf("checkpoint")).toEqual([]);
  });
});
