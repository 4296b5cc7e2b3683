/**
 * Tokens at rest (review M8): a sandbox's envd and traffic access tokens, its SOCKS5 proxy's
 * password and a volume's token are sealed with the secrets key in the rows, each bound to its
 * row and field; rows from before are sealed when the store is opened with the key; a process
 * without it reads where things are, never the tokens. On SQLite and PostgreSQL.
 */
import { randomUUID } from "node:crypto";
import { newSandboxId, newSecret, nowIso } from "../../src/lib/ids.js";
import { OPEN_EGRESS } from "../../src/model/network.js";
import { SecretBox } from "../../src/secrets/secret-box.js";
import { openStore } from "../../src/store/index.js";
import { sandboxRecord } from "../../src/store/testing/sandbox-record.js";
import { DIALECTS, freshStore, type TestStore } from "../helpers/stores.js";

describe.each(DIALECTS)("tokens at rest on %s", (dialect) => {
  let t: TestStore;
  let teamId: string;
  let templateId: string;
  beforeAll(async () => {
    t = await freshStore(dialect);
    teamId = (await t.store.teams.createTeam("Sealed", "sealed")).id;
    templateId = (await t.store.templates.createTemplate(teamId)).id;
  });
  afterAll(async () => {
    await t.cleanup();
  });

  const rawSandbox = (id: string) =>
    t.store.db.kysely
      .selectFrom("sandboxes")
      .select(["envd_access_token", "traffic_access_token", "egress"])
      .where("id", "=", id)
      .executeTakeFirstOrThrow();

  it("seals a sandbox's tokens and proxy password and a volume's token, and reads them back", async () => {
    const envd = newSecret();
    const traffic = newSecret();
    const id = newSandboxId();
    const egress = {
      ...OPEN_EGRESS,
      egressProxy: { address: "proxy.example:1080", username: "u", password: "proxy-pw-0d1e" },
    };
    await t.store.sandboxes.insert(
      sandboxRecord({ id, teamId, templateId, envdAccessToken: envd, trafficAccessToken: traffic, egress }),
    );
    const raw = await rawSandbox(id);
    const all = JSON.stringify(raw);
    for (const secret of [envd, traffic, "proxy-pw-0d1e"]) expect(all).not.toContain(secret);
    expect(raw.envd_access_token).toMatch(/^\$x1\$/);
    expect(raw.traffic_access_token).toMatch(/^\$x1\$/);
    expect(JSON.parse(raw.egress!).egressProxy).toEqual({
      address: "proxy.example:1080",
      username: "u",
      password: expect.stringMatching(/^\$x1\$/),
    });
    expect(await t.store.sandboxes.get(id)).toMatchObject({
      envdAccessToken: envd,
      trafficAccessToken: traffic,
      egress,
    });
    expect(await t.store.sandboxes.runningTokens([id])).toEqual([{ id, envdAccessToken: envd }]);
    // a network update seals the new password too
    const updated = { ...egress, egressProxy: { ...egress.egressProxy, password: "proxy-pw-2" } };
    await t.store.sandboxes.update(id, { egress: updated });
    expect((await rawSandbox(id)).egress).not.toContain("proxy-pw-2");
    expect((await t.store.sandboxes.get(id))?.egress).toEqual(updated);

    const volume = {
      id: randomUUID(),
      teamId,
      name: "data",
      sizeMB: 16,
      token: `vol_${newSecret()}`,
      createdAt: nowIso(),
    };
    expect(await t.store.volumes.insert(volume)).toBe(true);
    const rawVolume = await t.store.db.kysely
      .selectFrom("volumes")
      .select("token")
      .where("id", "=", volume.id)
      .executeTakeFirstOrThrow();
    expect(rawVolume.token).toMatch(/^\$x1\$/);
    expect(rawVolume.token).not.toContain(volume.token.slice(4));
    expect((await t.store.volumes.get(volume.id))?.token).toBe(volume.token);
  });

  it("binds each sealed value to its row: moved to another sandbox, it does not open", async () => {
    const a = newSandboxId();
    const b = newSandboxId();
    await t.store.sandboxes.insert(sandboxRecord({ id: a, teamId, templateId }));
    await t.store.sandboxes.insert(sandboxRecord({ id: b, teamId, templateId }));
    const { envd_access_token } = await rawSandbox(a);
    await t.store.db.kysely.updateTable("sandboxes").set({ envd_access_token }).where("id", "=", b).execute();
    await expect(t.store.sandboxes.get(b)).rejects.toThrow();
    await t.store.sandboxes.update(b, { state: "killed" });
    await t.store.db.kysely.deleteFrom("sandboxes").where("id", "=", b).execute();
  });

  it("seals the rows written before sealing when opened with the key, and only then", async () => {
    const id = newSandboxId();
    const envd = newSecret();
    const traffic = newSecret();
    const box = t.options.sealer as SecretBox;
    // as the platform of before stored them: tokens in clear, the password sealed for "egress-proxy"
    const legacyPassword = box.seal("old-pw-77", "egress-proxy", 0);
    await t.store.sandboxes.insert(sandboxRecord({ id, teamId, templateId }));
    await t.store.db.kysely
      .updateTable("sandboxes")
      .set({
        envd_access_token: envd,
        traffic_access_token: traffic,
        egress: JSON.stringify({
          ...OPEN_EGRESS,
          egressProxy: { address: "p.example:1080", username: "u", password: legacyPassword },
        }),
      })
      .where("id", "=", id)
      .execute();
    const volumeId = randomUUID();
    await t.store.db.kysely
      .insertInto("volumes")
      .values({
        id: volumeId,
        team_id: teamId,
        name: "old",
        size_mb: 16,
        token: "vol_clear-77",
        created_at: nowIso(),
        node_id: "local",
      })
      .execute();
    // read as they are meanwhile
    expect((await t.store.sandboxes.get(id))?.envdAccessToken).toBe(envd);

    // a process without the key seals nothing, reads where things are, and no token
    const keyless = await openStore({ ...t.options, sealer: undefined });
    try {
      expect((await rawSandbox(id)).envd_access_token).toBe(envd);
      expect(await keyless.sandboxes.where(id)).toEqual({ id, teamId, state: "running", nodeId: "local" });
      expect(await keyless.volumes.nodeOf(volumeId)).toBe("local");
      await keyless.sandboxes.insert(sandboxRecord({ id: newSandboxId(), teamId, templateId })).then(
        () => {
          throw new Error("a keyless store wrote a token");
        },
        (err: Error) => expect(err.message).toMatch(/not given it \(--secrets-key-file\)/),
      );
    } finally {
      await keyless.close();
    }

    const reopened = await openStore(t.options);
    try {
      const raw = await rawSandbox(id);
      expect(JSON.stringify(raw)).not.toMatch(new RegExp(`${envd}|${traffic}|old-pw-77|"nonce"`));
      expect(raw.envd_access_token).toMatch(/^\$x1\$/);
      expect(await reopened.sandboxes.get(id)).toMatchObject({
        envdAccessToken: envd,
        trafficAccessToken: traffic,
        egress: { egressProxy: { address: "p.example:1080", username: "u", password: "old-pw-77" } },
      });
      const rawVolume = await reopened.db.kysely
        .selectFrom("volumes")
        .select("token")
        .where("id", "=", volumeId)
        .executeTakeFirstOrThrow();
      expect(rawVolume.token).toMatch(/^\$x1\$/);
      expect((await reopened.volumes.get(volumeId))?.token).toBe("vol_clear-77");
      // a keyless store now reads where things are, and refuses the tokens with a reason
      const keyless = await openStore({ ...t.options, sealer: undefined });
      try {
        await expect(keyless.sandboxes.get(id)).rejects.toThrow(/sealed with the secrets key/);
      } finally {
        await keyless.close();
      }
    } finally {
      await reopened.close();
    }
    // the second key opens nothing of the first's
    const other = await openStore({ ...t.options, sealer: SecretBox.of(Buffer.alloc(32, 7)) });
    try {
      await expect(other.sandboxes.get(id)).rejects.toThrow(/sealed by another secrets key/);
    } finally {
      await other.close();
    }
  });
});
