/**
 * The volume API over HTTP on SQLite and on PostgreSQL: the control plane with its statuses
 * and bodies, a second team that must not see the first team's volumes or open them with its
 * own token, mounts recorded on sandboxes, and delete refused while a sandbox mounts one.
 */
import { DIALECTS } from "../helpers/stores.js";
import { type ApiPlatform, startApiPlatform } from "./support.js";

describe.each(DIALECTS)("volume API on %s", (dialect) => {
  let api: ApiPlatform;
  const volumes: Array<{ id: string; key?: string }> = [];

  async function createVolume(name: string, key?: string): Promise<{ volumeID: string; token: string }> {
    const res = await api.request("POST", "/volumes", { body: { name, sizeMB: 32 }, key });
    expect(res.status).toBe(201);
    volumes.push({ id: res.body.volumeID, key });
    return res.body;
  }

  beforeAll(async () => {
    api = await startApiPlatform(dialect);
  });

  afterAll(async () => {
    for (const { id, key } of volumes) await api?.request("DELETE", `/volumes/${id}`, { key });
    await api?.stop();
  });

  it("creates, lists, gets and deletes volumes", async () => {
    const created = await createVolume("data");
    expect(created).toEqual({
      volumeID: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: "data",
      token: expect.stringMatching(/^vol_/),
      sizeMB: 32,
      createdAt: expect.any(String),
    });
    const listed = await api.request("GET", "/volumes");
    expect(listed.body).toEqual([
      { volumeID: created.volumeID, name: "data", sizeMB: 32, createdAt: expect.any(String) },
    ]);
    const got = await api.request("GET", `/volumes/${created.volumeID}`);
    expect(got.body).toMatchObject({
      volumeID: created.volumeID,
      token: created.token,
      usedMB: expect.any(Number),
      mountedBy: [],
    });
    expect(got.body.domain).toBeUndefined();

    expect((await api.request("POST", "/volumes", { body: { name: "data" } })).body).toEqual({
      code: 400,
      message: "Volume with name 'data' already exists",
    });
    for (const name of ["", "a b", "../x", "ü"]) {
      expect((await api.request("POST", "/volumes", { body: { name } })).status).toBe(400);
    }
    expect((await api.request("POST", "/volumes", { body: { name: "tiny", sizeMB: 1 } })).status).toBe(400);
    // review M6: a volume larger than any the platform allows (64 GiB, or its disk) is refused
    const big = await api.request("POST", "/volumes", { body: { name: "big", sizeMB: 8_000_000 } });
    expect(big.status).toBe(400);
    expect(big.body.message).toMatch(
      /^sizeMB must be at most \d+ \(the team's limit of one volume's size\), got 8000000$/,
    );
    expect((await api.request("GET", "/volumes/nope")).status).toBe(404);
    expect((await api.request("DELETE", "/volumes/nope")).status).toBe(404);

    expect((await api.request("DELETE", `/volumes/${created.volumeID}`)).status).toBe(204);
    expect((await api.request("GET", `/volumes/${created.volumeID}`)).status).toBe(404);
    const content = await api.request("GET", `/volumecontent/${created.volumeID}/dir?path=/`, {
      key: null,
      headers: { Authorization: `Bearer ${created.token}` },
    });
    expect(content.status).toBe(401);
  });

  it("keeps teams apart: another team neither sees a volume nor opens it with its own token", async () => {
    const mine = await createVolume("mine");
    const theirs = await createVolume("mine", api.other.key);
    expect((await api.request("GET", `/volumes/${mine.volumeID}`, { key: api.other.key })).status).toBe(404);
    expect((await api.request("DELETE", `/volumes/${mine.volumeID}`, { key: api.other.key })).status).toBe(
      404,
    );
    expect(
      (await api.request("GET", "/volumes", { key: api.other.key })).body.map(
        (v: { name: string }) => v.name,
      ),
    ).toEqual(["mine"]);
    const crossed = await api.request("GET", `/volumecontent/${mine.volumeID}/dir?path=/`, {
      key: null,
      headers: { Authorization: `Bearer ${theirs.token}` },
    });
    expect(crossed.status).toBe(401);
    const own = await api.request("GET", `/volumecontent/${mine.volumeID}/dir?path=/`, {
      key: null,
      headers: { Authorization: `Bearer ${mine.token}` },
    });
    expect(own).toMatchObject({ status: 200, body: [] });
  });

  it("records a sandbox's mounts and refuses to delete a volume it mounts", async () => {
    const vol = await createVolume("mounted");
    const created = await api.request("POST", "/v2/sandboxes", {
      body: { templateID: "base", volumeMounts: [{ name: "mounted", path: "/mnt/m" }] },
    });
    expect(created.status).toBe(201);
    const id = created.body.sandboxID as string;
    try {
      const detail = await api.request("GET", `/sandboxes/${id}`);
      expect(detail.body.volumeMounts).toEqual([{ name: "mounted", path: "/mnt/m" }]);
      expect((await api.request("GET", "/v2/sandboxes")).body[0].volumeMounts).toEqual([
        { name: "mounted", path: "/mnt/m" },
      ]);
      expect((await api.request("GET", `/volumes/${vol.volumeID}`)).body.mountedBy).toEqual([id]);
      const refused = await api.request("DELETE", `/volumes/${vol.volumeID}`);
      expect(refused.status).toBe(409);
      expect(refused.body.message).toContain(id);
      // the other team's volume of the same name is not this team's to mount
      const other = await api.request("POST", "/v2/sandboxes", {
        key: api.other.key,
        body: { templateID: "base", volumeMounts: [{ name: "mounted", path: "/mnt/m" }] },
      });
      expect(other.body).toEqual({
        code: 400,
        message: "invalid mounts:\n\t- volume mount #0: volume 'mounted' not found",
      });
    } finally {
      await api.request("DELETE", `/sandboxes/${id}`);
    }
    expect((await api.request("DELETE", `/volumes/${vol.volumeID}`)).status).toBe(204);
  });
});
