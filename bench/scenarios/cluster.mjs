// Beyond one machine: what the cluster's front costs. One node with x serve's defaults (runc,
// warm pool) and, in the same process, an x api and an x proxy on a PostgreSQL catalog of the
// bench's own. The unchanged public e2b client goes once straight to the node (its own API and
// proxy, as x serve serves them) and once through the api and the proxy, alternating, on the
// same node and the same sandboxes: the difference is the hop and the catalog lookups.
import { randomBytes } from "node:crypto";
import { createRequire } from "node:module";
import { bench, log, now, PKG, scenario, stats } from "../lib.mjs";
import { DEFAULTS } from "../platform.mjs";

const { createLogger, startApiRole, startPlatform, startProxyRole } = await import(
  PKG("platform/dist/index.js")
);

const pg = createRequire(PKG("platform/package.json"))("pg");

const ADMIN_URL = process.env.X_BENCH_POSTGRES_URL ?? "postgres://xsandbox:xsandbox@127.0.0.1:5432/postgres";

/** A database of the run's own on the machine's PostgreSQL (scripts/setup.sh makes the role). */
async function scratchDatabase() {
  const name = `x_bench_${randomBytes(4).toString("hex")}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: ADMIN_URL });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

export async function clusterScenarios(dataDir, { runs = 20 } = {}) {
  const R = {};
  bench.results.cluster = R;
  const db = await scratchDatabase();
  const logger = createLogger({
    level: "warn",
    format: "json",
    destination: bench.platformLog ?? process.stderr,
  });
  const parts = [];
  const saved = { ...process.env };
  try {
    const node = await startPlatform(
      {
        ...DEFAULTS,
        dataDir,
        databaseUrl: db.url,
        apiPort: 0,
        proxyPort: 0,
        host: "127.0.0.1",
        envdDir: PKG("envd/dist/bundle"),
        networkPrefix: `bc${randomBytes(2).toString("hex").slice(0, 3)}`,
        networkCidr: "10.255.0.0/16",
        defaultRuntime: "runc",
        cluster: { nodeId: "bench", secret: randomBytes(16).toString("hex"), advertise: "127.0.0.1" },
      },
      { log: logger },
    );
    parts.push(() => node.close({ destroy: true }));
    const role = { databaseUrl: db.url, host: "127.0.0.1", port: 0 };
    const api = await startApiRole(role, logger);
    parts.push(() => api.close());
    const proxy = await startProxyRole({ ...role, domain: DEFAULTS.domain }, logger);
    parts.push(() => proxy.close());
    const paths = {
      direct: {
        apiUrl: `http://127.0.0.1:${node.apiPort}`,
        sandboxUrl: `http://127.0.0.1:${node.proxyPort}`,
      },
      cluster: { apiUrl: `http://127.0.0.1:${api.port}`, sandboxUrl: `http://127.0.0.1:${proxy.port}` },
    };
    process.env.E2B_API_KEY = node.firstApiKey;
    const require = createRequire(PKG("platform/package.json"));
    const { Sandbox } = require("e2b");
    const settle = () => node.warmPool.whenFull(120_000).catch(() => undefined);
    // the client's first calls in a process pay for its own start
    await (await Sandbox.create(paths.cluster)).kill();

    await scenario(
      "cluster: create → first run(true), pooled, straight to the node and through api + proxy",
      async () => {
        const samples = { direct: [], cluster: [] };
        for (let i = 0; i < runs * 2; i++) {
          const via = i % 2 === 0 ? "direct" : "cluster";
          await settle();
          const t = now();
          const sandbox = await Sandbox.create(paths[via]);
          await sandbox.commands.run("true");
          samples[via].push(now() - t);
          await sandbox.kill();
        }
        R.create = { direct: stats(samples.direct), cluster: stats(samples.cluster) };
      },
    );

    await scenario("cluster: run(true) round trip, straight to the node and through the proxy", async () => {
      await settle();
      const samples = { direct: [], cluster: [] };
      const sandbox = await Sandbox.create(paths.direct);
      try {
        const handles = { direct: sandbox, cluster: await Sandbox.connect(sandbox.sandboxId, paths.cluster) };
        for (let i = 0; i < runs * 5; i++) {
          const via = i % 2 === 0 ? "direct" : "cluster";
          const t = now();
          await handles[via].commands.run("true");
          samples[via].push(now() - t);
        }
      } finally {
        await sandbox.kill();
      }
      R.run = { direct: stats(samples.direct), cluster: stats(samples.cluster) };
    });

    await scenario("cluster: getInfo round trip, straight to the node and through the api", async () => {
      await settle();
      const samples = { direct: [], cluster: [] };
      const sandbox = await Sandbox.create(paths.direct);
      try {
        for (let i = 0; i < runs * 10; i++) {
          const via = i % 2 === 0 ? "direct" : "cluster";
          const t = now();
          await Sandbox.getInfo(sandbox.sandboxId, paths[via]);
          samples[via].push(now() - t);
        }
      } finally {
        await sandbox.kill();
      }
      R.getInfo = { direct: stats(samples.direct), cluster: stats(samples.cluster) };
    });
    log(
      `cluster: create+run p50 ${R.create?.direct.p50?.toFixed(1)} → ${R.create?.cluster.p50?.toFixed(1)} ms; run(true) ${R.run?.direct.p50?.toFixed(1)} → ${R.run?.cluster.p50?.toFixed(1)} ms`,
    );
  } finally {
    process.env = saved;
    for (const close of parts.reverse())
      await close().catch((err) => log(`cluster: close failed: ${err.message}`));
    await db.drop().catch((err) => log(`cluster: could not drop the bench database: ${err.message}`));
  }
}
