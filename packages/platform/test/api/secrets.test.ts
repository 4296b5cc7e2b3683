/**
 * Secrets over HTTP on SQLite and on PostgreSQL, as E2B's wire has them: create, update (a new
 * version; metadata kept or replaced), get by id or name, paged lists, delete, every refusal
 * with E2B's content-free messages, `Cache-Control: no-store` on every answer, another team's
 * secret unseen. The value never comes back and is not in the database file; a restart with
 * the same key reads it, another key fails closed and says why in the log. The public client's
 * `Secret` works unchanged.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import { Secret, SecretNotFoundError } from "e2b";
import { createLogger } from "../../src/index.js";
import { pointE2bClient, startTestPlatform } from "../helpers/platform.js";
import { DIALECTS } from "../helpers/stores.js";
import { type ApiPlatform, startApiPlatform } from "./support.js";

const VALUE = `s3cr3t-${randomBytes(8).toString("hex")}`;
const SEC_ID = /^sec_[0-7][0-9abcdefghjkmnpqrstvwxyz]{25}$/;
const INVALID = { code: 400, message: "Invalid secrets request" };
const NOT_FOUND = { code: 404, message: "Secret not found" };
const CONFLICT = { code: 409, message: "Secret cannot be modified in its current state" };

describe.each(DIALECTS)("secrets API on %s", (dialect) => {
  let api: ApiPlatform;
  let teamId: string;

  beforeAll(async () => {
    api = await startApiPlatform(dialect);
    teamId = (await api.t.platform.defaultTeam()).id;
  });
  afterAll(async () => {
    await api?.stop();
  });

  it("creates, reads, updates and deletes a secret, by id and by name, never showing its value", async () => {
    const created = await api.request("POST", "/secrets", {
      body: { name: "  GH-Token ", value: VALUE, metadata: { owner: "ci" } },
    });
    expect(created.status).toBe(201);
    expect(created.headers.get("cache-control")).toBe("no-store");
    expect(created.body).toEqual({
      secretID: expect.stringMatching(SEC_ID),
      name: "gh-token",
      currentVersion: 1,
      metadata: { owner: "ci" },
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const id: string = created.body.secretID;
    for (const selector of [id, id.toUpperCase(), "gh-token", "GH-TOKEN", " gh-token "]) {
      const got = await api.request("GET", `/secrets/${encodeURIComponent(selector)}`);
      expect(got.status).toBe(200);
      expect(got.body).toEqual(created.body);
      expect(got.headers.get("cache-control")).toBe("no-store");
    }
    expect(await api.t.platform.placeholders.secret(teamId, "gh-token")).toBe(VALUE);

    // metadata left out is kept; given, it replaces (even {})
    const v2 = await api.request("POST", `/secrets/${id}`, { body: { value: `${VALUE}-2` } });
    expect(v2.status).toBe(200);
    expect(v2.body).toMatchObject({ secretID: id, currentVersion: 2, metadata: { owner: "ci" } });
    expect(await api.t.platform.placeholders.secret(teamId, "gh-token")).toBe(`${VALUE}-2`);
    const v3 = await api.request("POST", "/secrets/gh-token", {
      body: { value: `${VALUE}-3`, metadata: {} },
    });
    expect(v3.body).toMatchObject({ currentVersion: 3, metadata: {} });
    const v4 = await api.request("POST", "/secrets/gh-token", {
      body: { value: `${VALUE}-4`, metadata: { a: "b" } },
    });
    expect(v4.body).toMatchObject({ currentVersion: 4, metadata: { a: "b" } });
    expect(Date.parse(v4.body.updatedAt)).toBeGreaterThanOrEqual(Date.parse(created.body.updatedAt));
    expect(await api.t.platform.placeholders.secret(teamId, "gh-token")).toBe(`${VALUE}-4`);

    // no answer carries the value
    const listed = await api.request("GET", "/secrets");
    for (const res of [created, v2, v3, v4, listed]) expect(JSON.stringify(res.body)).not.toContain(VALUE);

    const deleted = await api.request("DELETE", `/secrets/${id}`);
    expect(deleted.status).toBe(204);
    expect(deleted.headers.get("cache-control")).toBe("no-store");
    expect(await api.t.platform.placeholders.secret(teamId, "gh-token")).toBeUndefined();
    // its sealed versions went with it
    const versionsLeft = await api.t.platform.store.db.kysely
      .selectFrom("secret_versions")
      .select("secret_id")
      .where("secret_id", "=", id)
      .execute();
    expect(versionsLeft).toEqual([]);
    for (const [method, body] of [
      ["GET", undefined],
      ["DELETE", undefined],
      ["POST", { value: "x" }],
    ] as const) {
      const res = await api.request(method, `/secrets/${id}`, { body });
      expect({ status: res.status, body: res.body }).toEqual({ status: 404, body: NOT_FOUND });
      expect(res.headers.get("cache-control")).toBe("no-store");
    }
    // its name is free again
    const again = await api.request("POST", "/secrets", { body: { name: "gh-token", value: VALUE } });
    expect(again.body).toMatchObject({ currentVersion: 1, metadata: {} });
    expect(again.body.secretID).not.toBe(id);
    expect((await api.request("DELETE", "/secrets/gh-token")).status).toBe(204);
  });

  it("refuses what E2B refuses, with its messages", async () => {
    const ok = await api.request("POST", "/secrets", { body: { name: "taken", value: "v" } });
    expect(ok.status).toBe(201);
    const dup = await api.request("POST", "/secrets", { body: { name: " TAKEN", value: "v" } });
    expect({ status: dup.status, body: dup.body }).toEqual({ status: 409, body: CONFLICT });
    expect(dup.headers.get("cache-control")).toBe("no-store");

    const badBodies: unknown[] = [
      { name: "", value: "v" },
      { name: "a b", value: "v" },
      { name: "a.b", value: "v" },
      { name: "sec_abc", value: "v" },
      { name: "x".repeat(129), value: "v" },
      { name: "ok-name", value: "" },
      { name: "ok-name", value: "x".repeat(64 * 1024 + 1) },
      {
        name: "ok-name",
        value: "v",
        metadata: Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`k${i}`, "v"])),
      },
      { name: "ok-name", value: "v", metadata: { ["k".repeat(129)]: "v" } },
      { name: "ok-name", value: "v", metadata: { "": "v" } },
      { name: "ok-name", value: "v", metadata: { k: "v".repeat(1025) } },
      {
        name: "ok-name",
        value: "v",
        metadata: Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`k${i}`, "v".repeat(1000)])),
      },
    ];
    for (const body of badBodies) {
      const res = await api.request("POST", "/secrets", { body });
      expect({ status: res.status, body: res.body }).toEqual({ status: 400, body: INVALID });
      expect(res.headers.get("cache-control")).toBe("no-store");
    }
    // a NUL is refused by the API's front door, which never echoes what it refused
    const nul = await api.request("POST", "/secrets", { body: { name: "ok-name", value: `${VALUE}\u0000` } });
    expect(nul.status).toBe(400);
    expect(JSON.stringify(nul.body)).not.toContain(VALUE);
    // the limits themselves are accepted
    const full = await api.request("POST", "/secrets", {
      body: {
        name: "x".repeat(128),
        value: "v".repeat(64 * 1024),
        metadata: Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`k${i}`, "v".repeat(1020)])),
      },
    });
    expect(full.status).toBe(201);
    // an id is parsed strictly: never taken for a name
    for (const selector of [
      "sec_",
      "sec_abc",
      `sec_8${"0".repeat(25)}`,
      `sec_${"0".repeat(25)}u`,
      "not a name",
    ]) {
      const res = await api.request("GET", `/secrets/${encodeURIComponent(selector)}`);
      expect({ status: res.status, body: res.body }).toEqual({ status: 400, body: INVALID });
    }
    const unknownId = `sec_${"0".repeat(26)}`;
    expect((await api.request("GET", `/secrets/${unknownId}`)).body).toEqual(NOT_FOUND);
    expect((await api.request("POST", "/secrets/taken", { body: { value: "" } })).body).toEqual(INVALID);
    expect(
      (await api.request("POST", "/secrets/taken", { body: { value: "v", metadata: { "": "x" } } })).body,
    ).toEqual(INVALID);
    const unauthenticated = await api.request("GET", "/secrets", { key: null });
    expect(unauthenticated.status).toBe(401);
    expect(unauthenticated.headers.get("cache-control")).toBe("no-store");
    expect((await api.request("GET", "/secrets?limit=0")).status).toBe(400);
    expect((await api.request("GET", "/secrets?limit=101")).status).toBe(400);
    for (const name of ["taken", full.body.name])
      expect((await api.request("DELETE", `/secrets/${name}`)).status).toBe(204);
  });

  it("pages the team's secrets newest first and hides them from another team", async () => {
    const names = Array.from({ length: 5 }, (_, i) => `page-${i}`);
    for (const name of names) {
      expect((await api.request("POST", "/secrets", { body: { name, value: VALUE } })).status).toBe(201);
    }
    const seen: string[] = [];
    let nextToken: string | undefined;
    let pages = 0;
    do {
      const res = await api.request("GET", `/secrets?limit=2${nextToken ? `&nextToken=${nextToken}` : ""}`);
      expect(res.status).toBe(200);
      expect(res.headers.get("cache-control")).toBe("no-store");
      seen.push(...res.body.map((s: { name: string }) => s.name));
      nextToken = res.headers.get("x-next-token") ?? undefined;
      pages++;
    } while (nextToken);
    expect(pages).toBe(3);
    expect(seen).toEqual([...names].reverse());
    expect((await api.request("GET", "/secrets")).body).toHaveLength(5);

    const other = { key: api.other.key };
    const id = (await api.request("GET", "/secrets/page-0")).body.secretID;
    expect((await api.request("GET", "/secrets", other)).body).toEqual([]);
    for (const selector of [id, "page-0"]) {
      expect((await api.request("GET", `/secrets/${selector}`, other)).body).toEqual(NOT_FOUND);
      expect(
        (await api.request("POST", `/secrets/${selector}`, { ...other, body: { value: "x" } })).status,
      ).toBe(404);
      expect((await api.request("DELETE", `/secrets/${selector}`, other)).status).toBe(404);
    }
    expect(await api.t.platform.placeholders.secret(api.other.team.id, "page-0")).toBeUndefined();
    // the other team may have a secret of the same name: its own
    expect(
      (await api.request("POST", "/secrets", { ...other, body: { name: "page-0", value: "theirs" } })).status,
    ).toBe(201);
    expect(await api.t.platform.placeholders.secret(api.other.team.id, "page-0")).toBe("theirs");
    expect(await api.t.platform.placeholders.secret(teamId, "page-0")).toBe(VALUE);
    for (const name of names) expect((await api.request("DELETE", `/secrets/${name}`)).status).toBe(204);
    expect((await api.request("DELETE", "/secrets/page-0", other)).status).toBe(204);
  });
});

/** Log lines a platform writes, as JSON objects. */
function capturedLog() {
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split("\n")) if (line) lines.push(JSON.parse(line));
      done();
    },
  });
  return { lines, log: createLogger({ level: "warn", format: "json", destination }) };
}

describe("secrets at rest", () => {
  const scratch = mkdtempSync(path.join(os.tmpdir(), "x-secrets-"));
  const databaseFile = path.join(scratch, "platform.db");
  const keyFile = path.join(scratch, "secrets.key");
  const otherKeyFile = path.join(scratch, "other.key");
  writeFileSync(keyFile, randomBytes(32), { mode: 0o600 });
  writeFileSync(otherKeyFile, randomBytes(32), { mode: 0o600 });
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  const start = (secretsKeyFile: string, log?: ReturnType<typeof capturedLog>["log"]) =>
    startTestPlatform({
      runtime: "runc",
      databaseUrl: `sqlite:${databaseFile}`,
      config: { secretsKeyFile },
      log,
    });

  it("keeps values sealed in the database, opens them after a restart with the key, and fails closed with another", async () => {
    let t = await start(keyFile);
    let teamId: string;
    try {
      teamId = (await t.platform.defaultTeam()).id;
      const res = await fetch(`${t.apiUrl}/secrets`, {
        method: "POST",
        headers: { "X-API-Key": t.apiKey, "Content-Type": "application/json" },
        body: JSON.stringify({ name: "db-password", value: VALUE }),
      });
      expect(res.status).toBe(201);
      await fetch(`${t.apiUrl}/secrets/db-password`, {
        method: "POST",
        headers: { "X-API-Key": t.apiKey, "Content-Type": "application/json" },
        body: JSON.stringify({ value: `${VALUE}-v2` }),
      });
    } finally {
      await t.stop();
    }
    // every file of the database (its WAL too) is searched for the value's bytes
    const files = readdirSync(scratch).filter((f) => f.startsWith("platform.db"));
    expect(files).toContain("platform.db");
    for (const f of files) {
      const bytes = readFileSync(path.join(scratch, f));
      expect(bytes.includes(Buffer.from(VALUE))).toBe(false);
      expect(bytes.includes(readFileSync(keyFile))).toBe(false);
    }

    t = await start(keyFile);
    try {
      expect(await t.platform.placeholders.secret(teamId, "db-password")).toBe(`${VALUE}-v2`);
    } finally {
      await t.stop();
    }

    const { lines, log } = capturedLog();
    t = await start(otherKeyFile, log);
    try {
      expect(await t.platform.placeholders.secret(teamId, "db-password")).toBeUndefined();
      const messages = lines.map((l) => String(l.msg));
      expect(messages).toContainEqual(
        expect.stringMatching(
          /^2 secret version\(s\) were sealed with the secrets key [0-9a-f]{16}, not this platform's/,
        ),
      );
      expect(messages).toContainEqual(
        expect.stringMatching(
          /^cannot decrypt secret sec_\w+ version 2: it was sealed with the secrets key [0-9a-f]{16}, and this platform's is [0-9a-f]{16}: every node must use the same --secrets-key-file$/,
        ),
      );
      expect(JSON.stringify(lines)).not.toContain(VALUE);
    } finally {
      await t.stop();
    }
  });

  it("makes its own key under the data directory, 0600 in a 0700 directory, and keeps it", async () => {
    const dataDir = path.join(scratch, "data");
    const { SecretBox } = await import("../../src/secrets/secret-box.js");
    const first = await SecretBox.open({ dataDir });
    expect(first.created).toBe(true);
    expect(first.file).toBe(path.join(dataDir, "keys", "secrets.key"));
    expect(statSync(first.file).mode & 0o777).toBe(0o600);
    expect(statSync(path.dirname(first.file)).mode & 0o777).toBe(0o700);
    expect(statSync(first.file).size).toBe(32);
    const second = await SecretBox.open({ dataDir });
    expect(second.created).toBe(false);
    expect(second.box.keyId).toBe(first.box.keyId);
    const sealed = first.box.seal(VALUE, "sec_x", 1);
    expect(second.box.open(sealed, "sec_x", 1)).toBe(VALUE);
    // the associated data binds a sealed value to its secret and version
    expect(() => second.box.open(sealed, "sec_x", 2)).toThrow();
    expect(() => second.box.open(sealed, "sec_y", 1)).toThrow();
    writeFileSync(path.join(scratch, "short.key"), randomBytes(16));
    await expect(SecretBox.open({ dataDir, file: path.join(scratch, "short.key") })).rejects.toThrow(
      /holds 16 bytes, not 32/,
    );
  });
});

describe("the public client's Secret", () => {
  let api: ApiPlatform;
  let restore: () => void;
  beforeAll(async () => {
    api = await startApiPlatform("sqlite");
    restore = pointE2bClient(api.t);
  });
  afterAll(async () => {
    restore?.();
    await api?.stop();
  });

  it("creates, updates, reads, lists and destroys secrets unchanged", async () => {
    const info = await Secret.create("OpenAI-Key", VALUE, { metadata: { team: "ml" } });
    expect(info).toEqual({
      secretId: expect.stringMatching(SEC_ID),
      name: "openai-key",
      version: 1,
      metadata: { team: "ml" },
      createdAt: expect.any(Date),
      updatedAt: expect.any(Date),
    });
    const updated = await Secret.update("openai-key", `${VALUE}-2`);
    expect(updated).toMatchObject({ secretId: info.secretId, version: 2, metadata: { team: "ml" } });
    expect(await Secret.getInfo(info.secretId)).toMatchObject({ name: "openai-key", version: 2 });
    expect(await Secret.exists("openai-key")).toBe(true);
    expect(await Secret.exists("nope")).toBe(false);
    await expect(Secret.getInfo("nope")).rejects.toBeInstanceOf(SecretNotFoundError);
    await expect(Secret.update("nope", "x")).rejects.toBeInstanceOf(SecretNotFoundError);
    await expect(Secret.create("openai-key", "x")).rejects.toThrow(
      "409: Secret cannot be modified in its current state",
    );
    await expect(Secret.create("bad name", "x")).rejects.toThrow("400: Invalid secrets request");

    for (let i = 0; i < 3; i++) await Secret.create(`more-${i}`, VALUE);
    const paginator = Secret.list({ limit: 2 });
    const names: string[] = [];
    while (paginator.hasNext) names.push(...(await paginator.nextItems()).map((s) => s.name));
    expect(names).toEqual(["more-2", "more-1", "more-0", "openai-key"]);

    expect(Secret.fill("openai-key")).toBe("${e2b.secrets.openai-key}");
    expect(await Secret.destroy(info.secretId)).toBe(true);
    expect(await Secret.destroy(info.secretId)).toBe(false);
    for (let i = 0; i < 3; i++) expect(await Secret.destroy(`more-${i}`)).toBe(true);
  });
});
