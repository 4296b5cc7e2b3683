// Where one TTI's milliseconds go, read from the outside while the public client runs unchanged:
// its HTTP requests through undici's diagnostics channels (request sent, headers, each body chunk,
// done; a Connect stream's events decoded from its chunks), and the platform's own spans
// (create: claim, record, identity hand-off) from the `x:spans` channel it publishes to.
import { subscribe, unsubscribe } from "node:diagnostics_channel";
import { now, stats } from "./lib.mjs";

/** A request of the flow, by what it is on the wire. */
function kindOf(method, path) {
  if (method === "POST" && path.startsWith("/v2/sandboxes")) return "create";
  if (path.includes("process.Process/Start")) return "command";
  return `${method} ${path.split("?")[0]}`;
}

/**
 * Connect's streaming framing (1 byte of flags, 4 of length, the message; JSON, as the client
 * sends `useBinaryFormat: false`): the names of the events in `bytes`, `buffered` kept between
 * chunks.
 */
function eventsIn(state, chunk) {
  state.buf = state.buf.length ? Buffer.concat([state.buf, chunk]) : Buffer.from(chunk);
  const names = [];
  while (state.buf.length >= 5) {
    const len = state.buf.readUInt32BE(1);
    if (state.buf.length < 5 + len) break;
    const flags = state.buf[0];
    const body = state.buf.subarray(5, 5 + len).toString("utf8");
    state.buf = state.buf.subarray(5 + len);
    if (flags & 2) names.push("trailer");
    else {
      const event = JSON.parse(body).event ?? {};
      names.push(Object.keys(event)[0] ?? "unknown");
    }
  }
  return names;
}

/** envd's `Server-Timing` (`name;dur=ms, …`) from undici's raw header list, by name. */
function serverTimingOf(raw) {
  const out = {};
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (raw[i].toString().toLowerCase() !== "server-timing") continue;
    for (const m of raw[i + 1].toString().matchAll(/([\w-]+);dur=([\d.]+)/g)) out[m[1]] = Number(m[2]);
  }
  return out;
}

/** Records requests and spans from `start()` on; `take()` returns those since the last take. */
export function recorder(spansChannel) {
  let requests = [];
  let spans = [];
  const byRequest = new WeakMap();
  const handlers = {
    "undici:request:create": ({ request }) => {
      const r = { kind: kindOf(request.method, request.path), sent: now(), events: {} };
      byRequest.set(request, r);
      requests.push(r);
    },
    "undici:request:headers": ({ request, response }) => {
      const r = byRequest.get(request);
      if (!r) return;
      r.headers = now();
      r.serverTiming = serverTimingOf(response.headers);
    },
    "undici:request:bodyChunkReceived": ({ request, chunk }) => {
      const r = byRequest.get(request);
      if (r?.kind !== "command") return;
      r.stream ??= { buf: Buffer.alloc(0) };
      const t = now();
      for (const name of eventsIn(r.stream, chunk)) r.events[name] ??= t;
    },
    "undici:request:trailers": ({ request }) => {
      const r = byRequest.get(request);
      if (r) r.done = now();
    },
    [spansChannel]: (message) => spans.push({ ...message, at: now() }),
  };
  for (const [name, fn] of Object.entries(handlers)) subscribe(name, fn);
  return {
    take() {
      const out = { requests, spans };
      requests = [];
      spans = [];
      return out;
    },
    stop() {
      for (const [name, fn] of Object.entries(handlers)) unsubscribe(name, fn);
    },
  };
}

/**
 * One flow's phases in ms, from its requests and spans: `flowMs` is the client's own clock from
 * before `Sandbox.create()` to `node -v` returned. Undefined when the flow is not the expected
 * create + two commands (e.g. a retry), so odd ones do not blur the p50s.
 */
export function phasesOf({ requests, spans }, startedAt, flowMs) {
  const create = requests.find((r) => r.kind === "create");
  const commands = requests.filter((r) => r.kind === "command");
  const created = spans.find((s) => s.what === "sandbox created");
  if (!create?.done || commands.length !== 2 || commands.some((c) => !c.done)) return undefined;
  const p = {};
  p["client: before the create request"] = create.sent - startedAt;
  p["create: round trip (POST /v2/sandboxes)"] = create.done - create.sent;
  if (created) {
    p["create ↳ claim a pool member"] = created.ms.pool ?? created.ms.boot;
    p["create ↳ on record (insert)"] = created.ms.record;
    p["create ↳ identity hand-off (envd /init)"] = created.ms.handover ?? created.ms["cold boot"];
    p["create ↳ orchestrator total"] = created.ms.total;
    p["create ↳ HTTP, auth, route, client parse"] = create.done - create.sent - created.ms.total;
  }
  let last = create.done;
  for (const [i, c] of commands.entries()) {
    const name = i === 0 ? "probe" : "`node -v`";
    p[`client: before ${name}`] = c.sent - last;
    // envd answers the headers with the start event, once the process is spawned
    p[`${name}: request → start event (spawned)`] = (c.events.start ?? c.headers ?? c.done) - c.sent;
    // envd's own steps of that (its Server-Timing): the rest is transport, proxy and parsing
    for (const [step, ms] of Object.entries(c.serverTiming ?? {})) p[`${name} ↳ envd ${step}`] = ms;
    p[`${name}: → first output`] = (c.events.data ?? c.done) - (c.events.start ?? c.sent);
    p[`${name}: → end event (exited)`] =
      (c.events.end ?? c.done) - (c.events.data ?? c.events.start ?? c.sent);
    p[`${name}: → stream closed`] = c.done - (c.events.end ?? c.done);
    last = c.done;
  }
  p["client: after `node -v`'s stream"] = startedAt + flowMs - last;
  p["other requests in the flow"] = requests.filter(
    (r) => !["create", "command"].includes(r.kind) && !r.kind.startsWith("DELETE"),
  ).length;
  p.total = flowMs;
  return p;
}

/** p50 of every phase over the flows that had one. */
export function summarize(flows) {
  const ok = flows.filter(Boolean);
  const out = {};
  for (const key of Object.keys(ok[0] ?? {}))
    out[key] = stats(ok.map((f) => f[key]).filter((v) => v !== undefined && !Number.isNaN(v)));
  return { flows: ok.length, phases: out };
}
