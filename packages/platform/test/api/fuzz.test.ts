/**
 * Malformed input for every operation of openapi.yaml, generated from the spec with
 * fast-check: bad path parameters, query values and bodies, and raw request targets. No
 * request may get a 5xx or an error body other than `{code, message}`, none may change the
 * store, and the server must keep serving. Ids in paths never exist and bodies never pass
 * validation, so no sandbox is ever started.
 */
import net from "node:net";
import { openapiDocument } from "@x/platform-client";
import fc from "fast-check";
import { OpenApiRouter, type Operation } from "../../src/api/openapi.js";
import type { Store } from "../../src/store/index.js";
import { DIALECTS } from "../helpers/stores.js";
import { type ApiPlatform, type ApiResponse, startApiPlatform } from "./support.js";

type Json = Record<string, unknown>;

const doc = openapiDocument as Json;
const operations = [...new OpenApiRouter(doc).operations.values()];
/** Runs per operation and kind of malformation (path, query, body). */
const RUNS = 12;

function resolve(node: unknown): Json {
  let out = node as Json;
  while (out && typeof out.$ref === "string") {
    out = (out.$ref as string)
      .replace(/^#\//, "")
      .split("/")
      .reduce<Json>((acc, key) => acc[key] as Json, doc);
  }
  return out ?? {};
}

function bodySchema(op: Operation): Json | undefined {
  const raw = ((doc.paths as Json)[op.path] as Json)[op.method.toLowerCase()] as Json;
  const body = raw.requestBody ? resolve(raw.requestBody) : undefined;
  const schema = ((body?.content as Json | undefined)?.["application/json"] as Json | undefined)?.schema;
  return schema ? resolve(schema) : undefined;
}

/**
 * Strings that could name something that exists (the public base template) are left out, and
 * so are empty and dot segments: clients normalise those away, so they address other paths.
 */
const harmless = (s: string) => !/^(system\/)?base(:.*)?$/.test(s) && !["", ".", ".."].includes(s);

const nastyStrings = fc.constantFrom(
  "..",
  ".",
  "%",
  "%%",
  "\u0000",
  "null",
  "undefined",
  "-1",
  "1e400",
  "NaN",
  "[]",
  "{}",
  "'; DROP TABLE sandboxes; --",
  "😀🚀",
  "\u202e\u200b",
  "x".repeat(8000),
  "a/b",
  "a:b:c",
  "team/name:tag",
  "i00000000000000000000",
);
const anyString = fc.oneof(
  fc.string(),
  fc.string({ unit: "grapheme", maxLength: 40 }),
  fc.string({ unit: "binary", maxLength: 40 }),
  nastyStrings,
);

const pathValue = anyString.filter(harmless).map(encodeURIComponent);

const queryValue = fc.oneof(
  anyString,
  fc.integer({ min: -1e12, max: 1e12 }).map(String),
  fc.double().map(String),
  fc.constantFrom("9".repeat(400), "-0", "0x10", "1.5", "true", "９", "", "a,b,,c", ",".repeat(200)),
);

function wrongTypeValue(schema: Json): fc.Arbitrary<unknown> | undefined {
  const s = resolve(schema);
  const type = s.type as string | undefined;
  if (!type) return undefined;
  const candidates: Record<string, fc.Arbitrary<unknown>> = {
    string: fc.oneof(
      fc.integer(),
      fc.boolean(),
      fc.array(fc.string(), { maxLength: 3 }),
      fc.dictionary(fc.string(), fc.string(), { maxKeys: 2 }),
    ),
    integer: fc.oneof(
      fc.string(),
      fc.boolean(),
      fc.double({ min: 0.1, max: 1e6, noNaN: true }).filter((d) => !Number.isInteger(d)),
      fc.constant([]),
    ),
    number: fc.oneof(fc.string(), fc.boolean(), fc.constant({})),
    boolean: fc.oneof(fc.string(), fc.integer(), fc.constant([true])),
    array: fc.oneof(fc.string(), fc.integer(), fc.dictionary(fc.string(), fc.string(), { maxKeys: 2 })),
    object: fc.oneof(fc.string(), fc.integer(), fc.array(fc.integer(), { maxLength: 3 })),
  };
  const wrong = candidates[type];
  // null is valid for nullable fields, so it is only a wrong value elsewhere
  return wrong && !s.nullable ? fc.oneof(wrong, fc.constant(null)) : wrong;
}

/** JSON bodies guaranteed to fail the operation's schema, or raw text that is not JSON at all. */
function invalidBody(op: Operation): fc.Arbitrary<{ raw: string }> | undefined {
  const schema = bodySchema(op);
  if (!op.jsonBody || !schema) return undefined;
  const rawText = fc.oneof(
    fc.constantFrom(
      "{",
      "[1,",
      "nul",
      '"open',
      '{"a":}',
      "\u0000",
      "{'a':1}",
      "[".repeat(3000),
      `${"[".repeat(20_000)}${"]".repeat(20_000)}`,
      // deep, valid JSON: only the NUL deep inside makes it invalid
      `{"nested":${"[".repeat(5000)}"\\u0000"${"]".repeat(5000)}}`,
    ),
    fc.string({ minLength: 1 }).filter((s) => {
      try {
        JSON.parse(s);
        return false;
      } catch {
        return s.trim() !== "";
      }
    }),
  );
  const notObject = fc.oneof(
    fc.integer(),
    fc.string(),
    fc.boolean(),
    fc.constant(null),
    fc.array(fc.jsonValue(), { maxLength: 4 }),
  );
  const junk = fc.dictionary(fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 });
  const variants: fc.Arbitrary<unknown>[] = [notObject];
  const properties = (schema.properties ?? {}) as Record<string, Json>;
  const typed = Object.entries(properties).flatMap(([name, prop]) => {
    const wrong = wrongTypeValue(prop);
    return wrong ? [{ name, wrong }] : [];
  });
  if (typed.length > 0) {
    variants.push(
      fc
        .tuple(junk, fc.constantFrom(...typed))
        .chain(([base, pick]) => pick.wrong.map((value) => ({ ...base, [pick.name]: value }))),
    );
  }
  const required = (schema.required ?? []) as string[];
  if (required.length > 0) {
    variants.push(
      junk.map((base) => {
        const out = { ...base };
        for (const name of required) delete out[name];
        return out;
      }),
    );
  }
  return fc.oneof(
    rawText.map((raw) => ({ raw })),
    fc.oneof(...variants).map((value) => ({ raw: JSON.stringify(value) })),
  );
}

type Auth = "valid" | "lowercase" | "missing" | "garbage" | "other";
const authArb = fc.constantFrom<Auth>("valid", "valid", "valid", "lowercase", "missing", "garbage", "other");

interface Generated {
  path: string;
  query: string;
  body?: string;
  auth: Auth;
}

function pathFor(op: Operation, values: Record<string, string>): string {
  return op.path.replace(/\{([^}]+)\}/g, (_, name: string) => values[name] ?? "i00000000000000000000");
}

function requestArb(op: Operation, kind: "path" | "query" | "body"): fc.Arbitrary<Generated> | undefined {
  const pathParams = op.params.filter((p) => p.in === "path").map((p) => p.name);
  const queryParams = op.params.filter((p) => p.in === "query").map((p) => p.name);
  const fixedPath = pathFor(op, {});
  if (kind === "path") {
    if (pathParams.length === 0) return undefined;
    return fc
      .record({ values: fc.record(Object.fromEntries(pathParams.map((n) => [n, pathValue]))), auth: authArb })
      .map(({ values, auth }) => ({ path: pathFor(op, values as Record<string, string>), query: "", auth }));
  }
  if (kind === "query") {
    const names = fc.oneof(fc.constantFrom(...queryParams, "junk"), fc.string({ maxLength: 10 }));
    return fc
      .record({
        pairs: fc.array(fc.tuple(queryParams.length ? names : fc.string({ maxLength: 10 }), queryValue), {
          minLength: 1,
          maxLength: 4,
        }),
        auth: authArb,
      })
      .map(({ pairs, auth }) => ({
        path: fixedPath,
        query: `?${pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join("&")}`,
        auth,
      }));
  }
  const body = invalidBody(op);
  if (!body) return undefined;
  return fc
    .record({ body, auth: authArb })
    .map(({ body: b, auth }) => ({ path: fixedPath, query: "", body: b.raw, auth }));
}

/** Every table's rows, in a stable order; when a key was last used is bookkeeping, not data. */
async function snapshotStore(store: Store): Promise<Record<string, string[]>> {
  const db = store.db.kysely;
  const tables = (await db.introspection.getTables()).map((t) => t.name).sort();
  const out: Record<string, string[]> = {};
  for (const table of tables) {
    const rows = (await db
      .selectFrom(table as never)
      .selectAll()
      .execute()) as Json[];
    out[table] = rows.map((row) => JSON.stringify({ ...row, last_used_at: undefined })).sort();
  }
  return out;
}

function rawRequest(port: number, head: string): Promise<number | undefined> {
  return new Promise((resolvePromise, reject) => {
    const socket = net.connect(port, "127.0.0.1", () => socket.write(head));
    let data = "";
    socket.setEncoding("latin1");
    socket.on("data", (chunk: string) => {
      data += chunk;
    });
    socket.on("end", () => resolvePromise(Number(/^HTTP\/1\.1 (\d{3})/.exec(data)?.[1]) || undefined));
    socket.on("error", reject);
    socket.setTimeout(5000, () => socket.destroy(new Error("no answer within 5 s")));
  });
}

describe.each(DIALECTS)("malformed input on %s", (dialect) => {
  let api: ApiPlatform;
  let requests = 0;

  beforeAll(async () => {
    api = await startApiPlatform(dialect);
  });

  afterAll(async () => {
    await api?.stop();
    process.stderr.write(`fuzz on ${dialect}: ${requests} requests\n`);
  });

  async function send(op: Operation, g: Generated): Promise<ApiResponse> {
    const key = {
      valid: api.t.apiKey,
      lowercase: api.t.apiKey,
      missing: null,
      garbage: "e2b_nope",
      other: api.other.key,
    }[g.auth];
    const headers: Record<string, string> = g.auth === "lowercase" ? { "x-api-key": api.t.apiKey } : {};
    requests++;
    return api.request(op.method, `${g.path}${g.query}`, {
      key: g.auth === "lowercase" ? null : key,
      headers,
      rawBody: g.body,
    });
  }

  function expectSane(op: Operation, g: Generated, res: ApiResponse): void {
    const context = {
      op: op.id,
      request: { ...g, body: g.body?.slice(0, 200) },
      status: res.status,
      body: res.body,
    };
    if (res.status >= 500) throw new Error(`5xx: ${JSON.stringify(context)}`);
    if (
      res.status >= 400 &&
      !(res.body && res.body.code === res.status && typeof res.body.message === "string")
    ) {
      throw new Error(`error body is not {code, message}: ${JSON.stringify(context)}`);
    }
    if (op.authenticated && (g.auth === "missing" || g.auth === "garbage") && res.status !== 401) {
      throw new Error(`unauthenticated request not refused with 401: ${JSON.stringify(context)}`);
    }
  }

  it("every operation of openapi.yaml is served (no 501)", async () => {
    const missing: string[] = [];
    for (const op of operations) {
      const res = await api.request(op.method, pathFor(op, {}), { rawBody: op.jsonBody ? "{" : undefined });
      requests++;
      if (res.status === 501) missing.push(op.id);
    }
    expect(missing).toEqual([]);
  });

  it("answers malformed paths, queries and bodies of every operation without 5xx or side effects", async () => {
    const before = await snapshotStore(api.t.platform.store);
    for (const op of operations) {
      for (const kind of ["path", "query", "body"] as const) {
        const arb = requestArb(op, kind);
        if (!arb) continue;
        await fc.assert(
          fc.asyncProperty(arb, async (g) => {
            const res = await send(op, g);
            if (res.status === 501) return; // reported by the test above
            expectSane(op, g, res);
            if (kind === "body" && g.auth === "valid" && op.authenticated)
              expect([400, 404, 413]).toContain(res.status);
          }),
          { numRuns: RUNS, endOnFailure: true },
        );
      }
    }
    expect(await snapshotStore(api.t.platform.store)).toEqual(before);
    expect((await api.request("GET", "/health", { key: null })).status).toBe(200);
  });

  it("refuses creates from templates that do not resolve with 400 or 404", async () => {
    const before = await snapshotStore(api.t.platform.store);
    const creates = operations.filter((op) => op.id === "createSandbox" || op.id === "createSandboxLegacy");
    const ref = fc.oneof(
      anyString,
      fc.tuple(fc.string({ maxLength: 10 }), fc.string({ maxLength: 10 })).map(([a, b]) => `${a}/${b}`),
      fc.string({ maxLength: 10 }).map((tag) => `base:${tag}x`),
      fc.constantFrom("system/nothing", "other/base", "base:", ":default", "/", "base:default:x"),
    );
    for (const op of creates) {
      await fc.assert(
        fc.asyncProperty(ref.filter(harmless), async (templateID) => {
          const res = await send(op, {
            path: op.path,
            query: "",
            body: JSON.stringify({ templateID }),
            auth: "valid",
          });
          if (res.status !== 400 && res.status !== 404)
            throw new Error(`template '${templateID}': ${res.status} ${JSON.stringify(res.body)}`);
          expect(res.body.code).toBe(res.status);
        }),
        { numRuns: 40, endOnFailure: true },
      );
    }
    expect(await snapshotStore(api.t.platform.store)).toEqual(before);
  });

  it("survives raw request targets that are not URLs", async () => {
    const chars = fc.constantFrom(..."/%?#[]@:!$&'()*+,;=.~-_abcAZ09\\^`{|}".split(""));
    const target = fc.oneof(
      fc.constantFrom(
        "//",
        "//x",
        "//[",
        "http://[::1",
        "/%",
        "/%zz",
        "/sandboxes/%E0%A4%A",
        "/sandboxes/%ff/pause",
        "*",
        "/..%2f..%2f",
      ),
      fc.array(chars, { minLength: 1, maxLength: 30 }).map((c) => c.join("")),
    );
    await fc.assert(
      fc.asyncProperty(target, async (t) => {
        requests++;
        const status = await rawRequest(
          api.t.platform.apiPort,
          `GET ${t} HTTP/1.1\r\nHost: x\r\nX-API-Key: ${api.t.apiKey}\r\nConnection: close\r\n\r\n`,
        );
        if (status === undefined || status >= 500) throw new Error(`target '${t}': status ${status}`);
      }),
      { numRuns: 80, endOnFailure: true },
    );
    expect((await api.request("GET", "/health", { key: null })).status).toBe(200);
  });
});
