/**
 * Beyond one machine (issue 16), end to end on this one machine: a PostgreSQL catalog, three
 * `x node` processes on 127.0.1.1-3 (node 1 seeded with the cached base image, nodes 2 and 3
 * copying it from node 1 through the layer transfer), two `x api` and two `x proxy`, all real
 * processes. The public e2b client, unchanged, drives them: creates spread over the nodes;
 * pause, resume, snapshots and forks through another api and proxy than the create's; a
 * template built once starts on every node; a node's SIGKILL makes its sandboxes lost until it
 * is back; a node killed after it received a create's body leaves the team one sandbox when the
 * client retries; an api or a proxy killed leaves the other serving.
 */
import http from "node:http";
import { Sandbox, Template } from "e2b";
import { type ClientOptions, waitFor, XCluster } from "../helpers/x-cluster.js";

/** The catalog's state of a node as `x node list` shows it. */
const stateOf = async (c: XCluster, name: string) =>
  (await c.listNodes()).find((n) => n.id === name)?.state ?? "absent";

/** GET /sandboxes/{id} through an api, raw: what the client's getInfo leaves out (clientID, reason). */
async function detail(
  at: ClientOptions,
  id: string,
): Promise<{ status: number; body: { state?: string; clientID?: string; reason?: string } }> {
  const res = await fetch(`${at.apiUrl}/sandboxes/${id}`, { headers: { "X-API-Key": at.apiKey } });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

/** GET `path` from `proxyUrl` with the Host header `host` (fetch would send the URL's). */
function getByHost(proxyUrl: string, host: string, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get(`${proxyUrl}${path}`, { headers: { host } }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (d: string) => {
        body += d;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      res.on("error", reject);
    });
    req.on("error", reject);
  });
}

/**
 * Reads a sandbox through an api until `until` settles: what each read showed, its state or
 * the error ("503 …").
 */
async function watchWhile(at: ClientOptions, id: string, until: Promise<unknown>): Promise<string[]> {
  let done = false;
  const settled = until.finally(() => {
    done = true;
  });
  const seen: string[] = [];
  while (!done) {
    const read = await detail(at, id).catch((err: Error) => ({
      status: 0,
      body: { reason: err.message } as { state?: string; reason?: string },
    }));
    seen.push(read.status === 200 ? (read.body.state ?? "?") : `${read.status} ${JSON.stringify(read.body)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  await settled;
  return seen;
}

/**
 * Of reads taken while a node restarts, those that went wrong once the catalog said the
 * sandbox was lost: none may (it is `lost` until the node answers for it, then `running`).
 * Before that, nobody had yet told the catalog the node was gone, and the api's 503 ("not
 * answering; try again") is the truth.
 */
function wrongOnceLost(seen: string[]): string[] {
  const from = seen.indexOf("lost");
  return from < 0 ? [] : seen.slice(from).filter((s) => s !== "lost" && s !== "running");
}

/** A PTY in the sandbox: input sent, its echo and output read back. */
async function ptyRoundTrip(sandbox: Sandbox): Promise<string> {
  let output = "";
  const terminal = await sandbox.pty.create({
    cols: 80,
    rows: 24,
    onData: (data) => {
      output += Buffer.from(data).toString();
    },
  });
  await sandbox.pty.sendInput(terminal.pid, new TextEncoder().encode("echo pty-$((6 * 7)); tty\nexit\n"));
  await terminal.wait().catch(() => undefined);
  return output;
}

describe("a cluster of three nodes, two apis and two proxies on one machine", () => {
  const c = new XCluster({
    nodes: 3,
    apis: 2,
    proxies: 2,
    nodeFlags: ["--runtime", "runc", "--pool-size", "1", "--dns-upstream", "none"],
    // nodes 1 and 2 pick their ports (and must advertise those); node 3, restarted, keeps its own
    nodePorts: ["zero", "zero", "fixed"],
  });
  const n2 = c.node("n2");
  const n3 = c.node("n3");
  /** The client through api A and proxy A, and through api B and proxy B. */
  let A: ClientOptions;
  let B: ClientOptions;
  /** Sandboxes still to kill at the end (best effort: the nodes go anyway). */
  const made = new Set<string>();
  const create = async (at: ClientOptions, template?: string): Promise<Sandbox> => {
    const opts = { ...at, timeoutMs: 600_000, metadata: { suite: "cluster" } };
    const sandbox = template ? await Sandbox.create(template, opts) : await Sandbox.create(opts);
    made.add(sandbox.sandboxId);
    return sandbox;
  };
  const kill = async (sandbox: Sandbox) => {
    expect(await sandbox.kill()).toBe(true);
    made.delete(sandbox.sandboxId);
  };

  /** Whether anything failed: the processes' logs are kept then (see XCluster.cleanup). */
  let failed = false;
  const noting = (fn: () => Promise<void>) => async () => {
    try {
      await fn();
    } catch (err) {
      failed = true;
      throw err;
    }
  };
  const step = (name: string, fn: () => Promise<void>) => it(name, noting(fn));

  beforeAll(
    noting(async () => {
      await c.start();
      A = c.client(0, 0);
      B = c.client(1, 1);
    }),
    300_000,
  );

  afterAll(async () => {
    // what the tests did not kill, through an api still up (best effort: the nodes go anyway)
    const api = c.apis.findIndex((a) => !a.ended);
    if (api >= 0 && c.apiKey) {
      const at = { ...c.client(api, 0), requestTimeoutMs: 10_000 };
      await Promise.all([...made].map((id) => Sandbox.kill(id, at).catch(() => false)));
    }
    await c.cleanup({ keepLogs: failed });
  }, 120_000);

  step("lists three ready nodes, at the addresses they listen on", async () => {
    const nodes = await c.listNodes();
    expect(nodes.map((n) => [n.id, n.state, n.apiUrl, n.trafficUrl])).toEqual(
      c.nodes.map((n) => [n.name, "ready", n.apiUrl, n.trafficUrl]),
    );
    for (const n of nodes) {
      // really there: the node API (its node-only routes want the cluster secret) and its proxy
      const layers = await fetch(`${n.apiUrl}/node/layers?path=${encodeURIComponent(c.baseLayer)}`);
      expect(layers.status).toBe(401);
      expect((await fetch(`${n.trafficUrl}/`)).status).toBe(400);
    }
    // nodes 2 and 3 copied the base image from node 1, with its digest checked
    for (const n of [n2, n3])
      expect(n.output).toMatch(new RegExp(`"layer":"${c.baseLayer}","from":"n1".*"msg":"layer fetched"`));
    const holders = await c.query<{ node_id: string }>(
      "select node_id from layer_copies where path = $1 order by node_id",
      [c.baseLayer],
    );
    expect(holders.map((h) => h.node_id)).toEqual(["n1", "n2", "n3"]);

    // what the console's cluster page shows, through an api: states and capacity, no addresses
    const { apiUrl, apiKey } = c.client(0, 0);
    const listed = await (await fetch(`${apiUrl}/nodes`, { headers: { "X-API-Key": apiKey } })).json();
    expect(listed.map((n: { nodeID: string; state: string }) => [n.nodeID, n.state])).toEqual(
      c.nodes.map((n) => [n.name, "ready"]),
    );
    expect(JSON.stringify(listed)).not.toContain(c.nodes[0]!.apiUrl);
    // the api serves the console, told it fronts a cluster
    const config = await (await fetch(`${apiUrl}/console/config.json`)).json();
    expect(config).toMatchObject({ cluster: true, envdUrl: expect.stringContaining("{sandboxID}") });
  });

  step("spreads creates over every node; commands, files and a PTY work through the proxy", async () => {
    const sandboxes = await Promise.all(Array.from({ length: 6 }, () => create(A)));
    const where = await Promise.all(sandboxes.map((s) => c.nodeOf(s.sandboxId)));
    expect(new Set(where)).toEqual(new Set(["n1", "n2", "n3"]));
    // the api says the same as the catalog (clientID is the node), and lists them all, wherever
    expect((await detail(A, sandboxes[0]!.sandboxId)).body.clientID).toBe(where[0]);
    const listed = await Sandbox.list({ ...B, query: { metadata: { suite: "cluster" } } }).nextItems();
    expect(listed.map((s) => s.sandboxId).sort()).toEqual(sandboxes.map((s) => s.sandboxId).sort());

    await Promise.all(
      sandboxes.map(async (sandbox, i) => {
        const run = await sandbox.commands.run("echo hello from $(whoami); cat /etc/debian_version");
        expect(run.stdout).toMatch(/^hello from user\n12\.\d+\n$/);
        await sandbox.files.write("/home/user/where.txt", `sandbox ${i} on ${where[i]}`);
        expect(await sandbox.files.read("/home/user/where.txt")).toBe(`sandbox ${i} on ${where[i]}`);
        expect((await sandbox.commands.run("cat /home/user/where.txt")).stdout).toBe(
          `sandbox ${i} on ${where[i]}`,
        );
        const pty = await ptyRoundTrip(sandbox);
        expect(pty).toContain("pty-42");
        expect(pty).toMatch(/\/dev\/pts\/\d+/);
        // a signed URL names no sandbox: the proxy finds it by the token that signed it
        const download = await fetch(await sandbox.downloadUrl("/home/user/where.txt"));
        expect(download.status).toBe(200);
        expect(await download.text()).toBe(`sandbox ${i} on ${where[i]}`);
      }),
    );

    // a port of a sandbox by its host name, {port}-{id}.{domain}, through the other proxy
    const [web] = sandboxes;
    await web!.files.write("/home/user/site/index.html", "served from a sandbox");
    await web!.commands.run("cd /home/user/site && python3 -m http.server 8080", {
      background: true,
      timeoutMs: 0,
    });
    const page = await waitFor(
      () => getByHost(B.sandboxUrl, `8080-${web!.sandboxId}.${c.domain}`, "/index.html"),
      (r) => r.status === 200,
      10_000,
    );
    expect(page).toEqual({ status: 200, body: "served from a sandbox" });

    for (const sandbox of sandboxes) await kill(sandbox);
    for (const sandbox of sandboxes) expect(await sandbox.isRunning()).toBe(false);
  });

  step(
    "pauses, resumes, forks and snapshots a sandbox on node 2 through the other api and proxy",
    async () => {
      await c.only("n2");
      try {
        const created = await create(A);
        const id = created.sandboxId;
        expect(await c.nodeOf(id)).toBe("n2");
        await created.files.write("/home/user/state.txt", "before the pause");
        await created.commands.run("sleep 3600", { background: true, timeoutMs: 0 });

        // every follow-up through api B and proxy B
        const viaB = await Sandbox.connect(id, B);
        expect(await viaB.pause()).toBe(true);
        expect((await Sandbox.getInfo(id, B)).state).toBe("paused");
        const resumed = await Sandbox.connect(id, B);
        expect((await Sandbox.getInfo(id, B)).state).toBe("running");
        expect(await resumed.files.read("/home/user/state.txt")).toBe("before the pause");
        // a frozen pause keeps processes
        expect((await resumed.commands.run("pgrep -x sleep")).stdout).toMatch(/^\d+\n$/);

        const forks = await resumed.fork({ count: 1, timeoutMs: 300_000 });
        expect(forks).toHaveLength(1);
        const fork = forks[0]!;
        if (!(fork instanceof Sandbox)) throw fork;
        made.add(fork.sandboxId);
        expect(await c.nodeOf(fork.sandboxId)).toBe("n2");
        expect(await fork.files.read("/home/user/state.txt")).toBe("before the pause");
        await kill(fork);

        await resumed.files.write("/home/user/state.txt", "in the snapshot");
        const snapshot = await resumed.createSnapshot();
        expect(snapshot.snapshotId).toMatch(/:default$/);
        expect(await resumed.isRunning()).toBe(true);

        // a sandbox from the snapshot on node 3: its layers come from node 2
        await c.only("n3");
        const fromSnapshot = await create(B, snapshot.snapshotId);
        expect(await c.nodeOf(fromSnapshot.sandboxId)).toBe("n3");
        expect(await fromSnapshot.files.read("/home/user/state.txt")).toBe("in the snapshot");
        expect(n3.output).toMatch(/"from":"n2".*"msg":"layer fetched"/);
        await kill(fromSnapshot);
        await kill(resumed);
      } finally {
        await c.undrainAll();
      }
    },
  );

  step("starts a template built through api A on every node, each with the build's file", async () => {
    const built = await Template.build(
      Template().fromTemplate("base").runCmd("echo built in the cluster > /home/user/built.txt"),
      "cluster-built",
      { ...A, onBuildLogs: () => undefined },
    );
    expect(built.buildId).toBeTruthy();
    try {
      for (const n of c.nodes) {
        await c.only(n.name);
        const sandbox = await create(A, "cluster-built");
        expect(await c.nodeOf(sandbox.sandboxId)).toBe(n.name);
        expect(await sandbox.files.read("/home/user/built.txt")).toBe("built in the cluster\n");
        await kill(sandbox);
      }
    } finally {
      await c.undrainAll();
    }
  });

  step(
    "marks a SIGKILLed node down and its sandbox lost, and has it back when the node starts again",
    async () => {
      await c.only("n3");
      const sandbox = await create(A).finally(() => c.undrainAll());
      const id = sandbox.sandboxId;
      expect(await c.nodeOf(id)).toBe("n3");
      await sandbox.files.write("/home/user/kept.txt", "kept through its node's crash");

      await n3.kill("SIGKILL");
      const killedAt = Date.now();
      const state = await waitFor(
        () => stateOf(c, "n3"),
        (s) => s === "down",
        10_000,
      );
      expect(state).toBe("down");
      const downAfter = Date.now() - killedAt;
      expect(downAfter).toBeLessThanOrEqual(10_000);

      expect((await Sandbox.getInfo(id, A)).state).toBe("lost");
      const shown = await detail(A, id);
      expect(shown.body).toMatchObject({ state: "lost", clientID: "n3" });
      expect(shown.body.reason).toMatch(/node n3 stopped answering/);
      // its traffic is refused by the proxy as not running (what e2b's isRunning reads), naming its node
      expect(await sandbox.isRunning()).toBe(false);
      const traffic = await fetch(`${A.sandboxUrl}/health`, {
        headers: { "E2b-Sandbox-Id": id, "E2b-Sandbox-Port": "49983" },
      });
      expect(traffic.status).toBe(502);
      const refusal = ((await traffic.json()) as { message: string }).message;
      expect(refusal).toMatch(/is lost: its node n3 stopped answering/);
      expect(refusal).toMatch(/back when its node is/);
      // connecting is refused as unavailable (503), saying why
      const refused = await Sandbox.connect(id, A).catch((err: Error & { statusCode?: number }) => err);
      expect(refused).toBeInstanceOf(Error);
      expect((refused as { statusCode?: number }).statusCode).toBe(503);
      expect((refused as Error).message).toMatch(
        new RegExp(`sandbox ${id} is lost: its node n3 stopped answering`),
      );

      // creates go on, elsewhere
      const another = await create(A);
      expect(["n1", "n2"]).toContain(await c.nodeOf(another.sandboxId));
      expect((await another.commands.run("echo still creating")).stdout).toBe("still creating\n");
      await kill(another);

      // the node starts again with the same flags: its sandbox is running again, and never
      // before the node answers for it (the api would say "node is not answering")
      const seen = await watchWhile(A, id, n3.start(60_000));
      expect(seen[0]).toBe("lost");
      expect(wrongOnceLost(seen)).toEqual([]);
      const back = await waitFor(
        async () => (await Sandbox.getInfo(id, A)).state,
        (s) => s === "running",
        15_000,
      );
      if (back !== "running") throw new Error(`sandbox ${id} is ${back} after n3's restart:\n${n3.tail()}`);
      expect(await stateOf(c, "n3")).toBe("ready");
      // the proxy forgot what it knew of the lost sandbox: its first handle works again as it was
      expect(await sandbox.isRunning()).toBe(true);
      expect((await sandbox.commands.run("echo back")).stdout).toBe("back\n");
      const again = await Sandbox.connect(id, A);
      expect((await again.commands.run("cat /home/user/kept.txt")).stdout).toBe(
        "kept through its node's crash",
      );
      await kill(again);
    },
  );

  step("a node killed and started again at once: its sandboxes are lost until it answers", async () => {
    await c.only("n3");
    const sandbox = await create(A).finally(() => c.undrainAll());
    const id = sandbox.sandboxId;
    expect(await c.nodeOf(id)).toBe("n3");
    await n3.kill("SIGKILL");
    // started before the apis mark it down: it says itself that its sandboxes are lost
    const seen = await watchWhile(A, id, n3.start(60_000));
    expect(seen).toContain("lost");
    expect(wrongOnceLost(seen)).toEqual([]);
    const back = await waitFor(
      async () => (await Sandbox.getInfo(id, A)).state,
      (s) => s === "running",
      15_000,
    );
    expect(back).toBe("running");
    expect((await sandbox.commands.run("echo back at once")).stdout).toBe("back at once\n");
    const events = await c.query<{ type: string }>(
      "SELECT type FROM events WHERE sandbox_id = $1 ORDER BY id",
      [id],
    );
    expect(events.map((e) => e.type)).toEqual(expect.arrayContaining(["sandbox.lost", "sandbox.reconciled"]));
    await kill(sandbox);
  });

  step(
    "a node killed after it received a create's body: the create is called off, the retry through the other api makes the team's one sandbox",
    async () => {
      const metadata = { suite: "cluster", drill: "create-crash" };
      const createVia = (at: ClientOptions) => Sandbox.create({ ...at, timeoutMs: 600_000, metadata });
      // n3 alone takes creates, and SIGKILLs itself once it has begun a sandbox for one
      await c.only("n3");
      let failed: unknown;
      try {
        await n3.kill("SIGTERM");
        await n3.start(60_000, { X_TEST_CRASH_AT: "create:started" });
        failed = await createVia(A).then(
          (s) => {
            made.add(s.sandboxId);
            return s;
          },
          (err: unknown) => err,
        );
      } finally {
        await c.undrainAll(); // n1 and n2; n3 is dead
      }
      expect(await waitFor(async () => n3.ended, Boolean, 10_000)).toBe(true);
      // honest: a 502 with no retry hint, saying what became of what the node had begun
      expect(failed).toBeInstanceOf(Error);
      expect((failed as { statusCode?: number }).statusCode).toBe(502);
      expect((failed as Error).message).toMatch(/node n3 failed after it received this create/);
      expect((failed as Error).message).toMatch(/creating again makes one sandbox/);
      const begun = await c.query<{ id: string; state: string; reason: string }>(
        "select id, state, reason from sandboxes where node_id = 'n3' and reason like 'its create was called off%'",
      );
      expect(begun).toHaveLength(1);
      expect(begun[0]!.state).toBe("killed");
      const calledOff = begun[0]!.id;
      expect((failed as Error).message).toContain(calledOff);

      // the client retries through api B, as often as it is told to (503 while n3 still looks alive)
      let retried: Sandbox | undefined;
      for (let attempt = 0; !retried; attempt++) {
        const outcome = await createVia(B).catch((err: Error & { statusCode?: number }) => err);
        if (outcome instanceof Sandbox) retried = outcome;
        else if (outcome.name !== "ServiceBusyError" || attempt >= 10) throw outcome;
        else await new Promise((r) => setTimeout(r, 2000));
      }
      made.add(retried.sandboxId);
      expect(["n1", "n2"]).toContain(await c.nodeOf(retried.sandboxId));

      // n3 back: it does not adopt the sandbox its create's api called off, and leaves none of it
      await n3.start(60_000);
      const listed = await Sandbox.list({ ...B, query: { metadata } }).nextItems();
      expect(listed.map((s) => s.sandboxId)).toEqual([retried.sandboxId]);
      expect((await c.query("select state from sandboxes where id = $1", [calledOff]))[0]).toEqual({
        state: "killed",
      });
      const left = c.leftovers();
      expect([...left.containers.runc, ...left.containers.runsc]).not.toContain(calledOff);
      expect(left.netns.filter((n) => n.includes(calledOff))).toEqual([]);
      expect((await retried.commands.run("echo the one")).stdout).toBe("the one\n");
      await kill(retried);
    },
  );

  step(
    "keeps serving through api B when api A is SIGKILLed, and through proxy B when proxy A is",
    async () => {
      const [apiA] = c.apis;
      const [proxyA] = c.proxies;
      await apiA!.kill("SIGKILL");
      await expect(fetch(`${A.apiUrl}/health`)).rejects.toThrow();
      const sandbox = await create({ ...B, sandboxUrl: A.sandboxUrl });
      expect((await sandbox.commands.run("echo through api B")).stdout).toBe("through api B\n");

      await proxyA!.kill("SIGKILL");
      await expect(fetch(`${A.sandboxUrl}/`)).rejects.toThrow();
      const viaB = await Sandbox.connect(sandbox.sandboxId, B);
      expect((await viaB.commands.run("echo through proxy B")).stdout).toBe("through proxy B\n");
      await viaB.files.write("/home/user/b.txt", "b");
      expect(await viaB.files.read("/home/user/b.txt")).toBe("b");
      await kill(viaB);
    },
  );
});
