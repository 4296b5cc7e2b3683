/**
 * A fork counts all its forks against the team's sandboxes before anything is done, each fork
 * made uses one of them, and what is left (a fork that failed) is let go: the team's quota
 * after a fork is what its live sandboxes say, no more.
 */
import { DomainError } from "../model/errors.js";
import { LifecycleHarness } from "../orchestrator/testing/harness.js";
import type { LayerStore } from "../templates/layers.js";
import { type ForkResult, forkSandbox } from "./fork.js";

/** The fake host keeps no files: a snapshot's copy is only named. */
const layers = {
  ownName: (kind: string, id: string) => `layers/${kind}-${id}`,
  copyIn: async (_source: string, name: string) => name,
  remove: async () => {},
} as unknown as LayerStore;

const LIMITS = { templates: 100, snapshots: 100 };

describe("forkSandbox and the team's quota", () => {
  let h: LifecycleHarness;
  beforeEach(async () => {
    h = await LifecycleHarness.open();
  });
  afterEach(async () => {
    await h.close();
  });

  const fork = (sourceId: string, count: number, maxLivePerTeam: number) =>
    h.store.sandboxes.get(sourceId).then((source) =>
      forkSandbox({ store: h.store, orchestrator: h.orchestrator, layers }, source!, h.team, {
        count,
        timeoutSeconds: 60,
        maxLivePerTeam,
        limits: LIMITS,
      }),
    );
  const made = (results: ForkResult[]) => results.flatMap((r) => ("sandbox" in r ? [r.sandbox.id] : []));

  it("makes the forks that fit and holds no place after them", async () => {
    // runc: a files snapshot, so forks boot from its layers
    const source = await h.create({ runtime: "runc" });
    const forks = made(await fork(source.id, 2, 3));
    expect(forks).toHaveLength(2);
    expect(await h.store.sandboxes.countLive(h.team.id)).toBe(3);
    // three run, three may: a create is refused, and one goes once a fork is killed
    await expect(h.create({ maxLivePerTeam: 3 })).rejects.toMatchObject({ code: "quota" });
    await h.orchestrator.kill(forks[0]!);
    await expect(h.create({ maxLivePerTeam: 3 })).resolves.toMatchObject({ state: "running" });
  });

  it("lets go of the places of forks that failed", async () => {
    const source = await h.create({ runtime: "runc" });
    h.host.script.failNext("boot");
    const results = await fork(source.id, 2, 3);
    expect(made(results)).toHaveLength(1);
    expect(results.filter((r) => "error" in r)).toEqual([
      { error: { code: "failed", message: "boot failed" } },
    ]);
    // two run: the failed fork's place is free again
    await expect(h.create({ maxLivePerTeam: 3 })).resolves.toMatchObject({ state: "running" });
  });

  it("refuses a fork that does not fit whole before the source is touched", async () => {
    const source = await h.create({ runtime: "runc" });
    const refused = await fork(source.id, 3, 3).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(DomainError);
    expect((refused as DomainError).code).toBe("quota");
    expect(h.host.script.idsOf("freeze")).toEqual([]);
    expect(h.host.script.idsOf("boot")).toEqual([source.id]);
    // and holds nothing after it: two more fit
    expect(made(await fork(source.id, 2, 3))).toHaveLength(2);
  });
});
