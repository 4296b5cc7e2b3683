/**
 * What makes a platform a node of a cluster (`x node`): layers fetched from other nodes and
 * published for them, the bootstrap shared with them, the node-only routes, and its presence in
 * the catalog (node-agent.ts). platform.ts wires it in when `cluster` is configured.
 */

import { readdir, rm } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import os from "node:os";
import path from "node:path";
import type { Logger } from "../lib/log.js";
import { SYSTEM_NAMESPACE } from "../model/team.js";
import { BASE_ALIAS, DEFAULT_TAG } from "../model/template.js";
import type { NodeCapacity, Store } from "../store/index.js";
import { LayerSync } from "./layer-transfer.js";
import { availableMemoryMB, NodeAgent } from "./node-agent.js";

/** Beyond one machine: the platform runs as one node of a cluster (`x node`). */
export interface ClusterNodeConfig {
  /** The node's name in the catalog (unique in the cluster). */
  nodeId: string;
  /** Shared by the cluster's nodes: authorizes node-only routes (copies of layers). */
  secret: string;
  /** The host name or address the other roles reach this node at. */
  advertise: string;
  /** Sandboxes it takes at most; by default one per 64 MiB of the host's memory. */
  maxSandboxes?: number;
  /** A directory every node mounts where layers are kept too, by digest (see LayerSync). */
  layerStore?: string;
}

/** How long a node starting waits for another to hold the base image before building its own. */
const BASE_WAIT_MS = 120_000;

export interface NodeLive {
  runtimes: string[];
  /** Sandboxes running or starting here. */
  sandboxes(): number;
  /** Ready warm-pool members by build. */
  pool(): Record<string, number>;
  /** Adopts this node's sandboxes again (it was marked down while it ran). */
  reconcile(): Promise<void>;
}

export class NodeRole {
  readonly layers: LayerSync;
  private agent: NodeAgent | undefined;

  constructor(
    private readonly o: {
      config: ClusterNodeConfig;
      /** Opened with the node's id (`openStore({ nodeId })`) on the cluster's PostgreSQL. */
      store: Store;
      dataDir: string;
      memoryReserveMB?: number;
      log: Logger;
    },
  ) {
    const { store } = o;
    this.layers = new LayerSync({
      store,
      dataDir: o.dataDir,
      nodeId: o.config.nodeId,
      secret: o.config.secret,
      log: o.log.child({ component: "layers" }),
      nodeUrl: async (id) => (await store.nodes.get(id))?.apiUrl,
      ...(o.config.layerStore ? { sharedDir: o.config.layerStore } : {}),
    });
  }

  /**
   * Removes what copies cut short by a crash left (`.fetch-*` beside where layers go). A node's
   * data directory is its own, so everything of that name is a leftover.
   */
  async sweepFetches(): Promise<void> {
    const dirs = [path.join(this.o.dataDir, "layers"), path.join(this.o.dataDir, "images")];
    const images = await readdir(dirs[1]!, { withFileTypes: true }).catch(() => []);
    dirs.push(...images.filter((e) => e.isDirectory()).map((e) => path.join(dirs[1]!, e.name)));
    for (const dir of dirs) {
      for (const name of await readdir(dir).catch(() => [] as string[])) {
        if (name.startsWith(".fetch-")) await rm(path.join(dir, name), { recursive: true, force: true });
      }
    }
  }

  /** For the sandbox host: layers (absolute paths) under the data directory that are not here are fetched. */
  ensureLayers = async (lowers: string[]): Promise<void> => {
    const inside = lowers.map((l) => path.relative(this.o.dataDir, l)).filter((r) => !r.startsWith(".."));
    await this.layers.ensure(inside);
  };

  /** For the layer store: a layer made here is published with its digest before anyone uses it. */
  onLayer = (rel: string): Promise<void> => this.layers.publish([rel]);

  /**
   * Runs what every node shares but only one must make (the system team, the base template,
   * the first team) under the cluster's bootstrap lock. The base image is fetched from a node
   * that has it when the catalog names one; built here only when none answers.
   */
  async bootstrap<T>(make: () => Promise<T>): Promise<T> {
    const { store } = this.o;
    const alias = await store.templates.aliasTarget(SYSTEM_NAMESPACE, BASE_ALIAS);
    const base = alias && (await store.templates.buildForTag(alias, DEFAULT_TAG));
    if (base) {
      await this.layers.ensure(base.layers, { waitMs: BASE_WAIT_MS }).catch((err: unknown) => {
        this.o.log.warn({ err }, "no node gave the base image: building it here");
      });
    }
    // make() uses the store of its own: one bootstrap a process, so its lock holds one connection
    return store.locked("bootstrap", () => make());
  }

  /**
   * At start, before adopting: this node's sandboxes are `lost` in the catalog ("its node is
   * restarting") until it answers again (Orchestrator.nowServing after join), so the apis
   * say so rather than send requests to a node that does not listen yet. Creates it had under
   * way stay `starting`, for adopt to remove.
   */
  async markRestarting(): Promise<void> {
    const { store, config } = this.o;
    const reason = `its node ${config.nodeId} is restarting`;
    // nor is the node itself one the apis send anything to before it joins again
    await store.nodes.markStarting(config.nodeId);
    const lost = await store.sandboxes.markLost(config.nodeId, reason, ["starting"]);
    for (const sandboxId of lost) {
      const sandbox = await store.sandboxes.where(sandboxId);
      await store.events.record("sandbox.lost", {
        ...(sandbox ? { teamId: sandbox.teamId } : {}),
        sandboxId,
        data: { nodeId: config.nodeId, restarting: true },
      });
    }
    if (lost.length > 0)
      this.o.log.info({ sandboxes: lost.length }, "sandboxes lost until this node answers");
  }

  /** Joins the cluster: registered, then a heartbeat every two seconds. */
  async join(ports: { api: number; traffic: number }, live: NodeLive): Promise<void> {
    const { store } = this.o;
    const at = this.o.config.advertise;
    const totalMB = Math.floor(os.totalmem() / 2 ** 20);
    const reserveMB = this.o.memoryReserveMB ?? Math.floor(totalMB / 10);
    const capacity = (): NodeCapacity => ({
      cpus: os.cpus().length,
      memoryTotalMB: totalMB,
      memoryFreeMB: availableMemoryMB() - reserveMB,
      sandboxes: live.sandboxes(),
      maxSandboxes: this.o.config.maxSandboxes ?? Math.max(8, Math.floor(totalMB / 64)),
      load: os.loadavg()[0] ?? 0,
      runtimes: live.runtimes,
      pool: live.pool(),
    });
    this.agent = new NodeAgent({
      store,
      nodeId: this.o.config.nodeId,
      apiUrl: `http://${at}:${ports.api}`,
      trafficUrl: `http://${at}:${ports.traffic}`,
      capacity,
      reconcile: live.reconcile,
      log: this.o.log.child({ component: "node" }),
    });
    await this.agent.start();
  }

  /** Node-only routes (`/node/…`, the cluster secret's): a surface of the API's front door, before the API. */
  surface(): (req: IncomingMessage, res: ServerResponse) => boolean {
    return this.layers.handler();
  }

  async leave(): Promise<void> {
    await this.agent?.stop();
  }
}
