import { randomBytes } from "node:crypto";
import { chmod, mkdtemp, rm, stat } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { keyBesideDatabase, SecretBox } from "./secret-box.js";

describe("the secrets key", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "x-secret-box-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("is made 0600 in a 0700 directory, and put back so when it was left readable", async () => {
    const dataDir = path.join(dir, "data");
    const made = await SecretBox.open({ dataDir });
    expect(made.created).toBe(true);
    expect((await stat(made.file)).mode & 0o777).toBe(0o600);
    expect((await stat(path.dirname(made.file))).mode & 0o777).toBe(0o700);
    await chmod(made.file, 0o644);
    await chmod(path.dirname(made.file), 0o755);
    const again = await SecretBox.open({ dataDir });
    expect(again.box.keyId).toBe(made.box.keyId);
    expect((await stat(made.file)).mode & 0o777).toBe(0o600);
    expect((await stat(path.dirname(made.file))).mode & 0o777).toBe(0o700);
  });

  it("is said to sit beside the database when both are in the data directory", () => {
    const dataDir = "/var/lib/x";
    expect(keyBesideDatabase("/var/lib/x/keys/secrets.key", { dataDir })).toBe(true);
    expect(
      keyBesideDatabase("/var/lib/x/keys/secrets.key", { dataDir, databaseUrl: "sqlite:/var/lib/x/p.db" }),
    ).toBe(true);
    expect(keyBesideDatabase("/etc/x/secrets.key", { dataDir })).toBe(false);
    expect(keyBesideDatabase("/var/lib/x-keys/secrets.key", { dataDir })).toBe(false);
    // the database elsewhere: a copy of the data directory holds the key, not what it seals
    expect(
      keyBesideDatabase("/var/lib/x/keys/secrets.key", { dataDir, databaseUrl: "sqlite:/srv/db/p.db" }),
    ).toBe(false);
    expect(
      keyBesideDatabase("/var/lib/x/keys/secrets.key", { dataDir, databaseUrl: "postgres://db.internal/x" }),
    ).toBe(false);
  });
});

describe("bound sealing", () => {
  const box = SecretBox.of(randomBytes(32));

  it("opens a value only for what it was bound to, and only with its key", () => {
    const sealed = box.sealBound("tok-123", "sandbox:a:envd-access-token");
    expect(sealed).toMatch(/^\$x1\$[0-9a-f]{16}\$/);
    expect(sealed).not.toContain("tok-123");
    expect(box.openBound(sealed, "sandbox:a:envd-access-token")).toBe("tok-123");
    expect(() => box.openBound(sealed, "sandbox:b:envd-access-token")).toThrow();
    expect(() => box.openBound(sealed, "sandbox:a:traffic-access-token")).toThrow();
    expect(() => SecretBox.of(randomBytes(32)).openBound(sealed, "sandbox:a:envd-access-token")).toThrow(
      /sealed by another secrets key/,
    );
    // two seals of one value differ (a nonce each)
    expect(box.sealBound("tok-123", "x")).not.toBe(box.sealBound("tok-123", "x"));
  });
});
