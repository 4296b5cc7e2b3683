import { X509Certificate } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { proxyCertificate } from "./certificates.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), "x-tls-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

it("makes a local CA once and a wildcard certificate for the domain signed by it", async () => {
  const first = await proxyCertificate({ dir, domain: "sb.test" });
  const ca = new X509Certificate(readFileSync(first.caFile!));
  const cert = new X509Certificate(first.cert);
  expect(cert.verify(ca.publicKey)).toBe(true);
  expect(cert.checkHost("8080-abc.sb.test")).toBe("*.sb.test");
  expect(cert.checkHost("sb.test")).toBe("sb.test");
  expect(cert.checkHost("8080-abc.other.test")).toBeUndefined();
  // kept: the same certificate on the next start
  expect((await proxyCertificate({ dir, domain: "sb.test" })).cert).toBe(first.cert);
  // another domain: a new certificate from the same CA
  const other = await proxyCertificate({ dir, domain: "other.test" });
  expect(readFileSync(other.caFile!, "utf8")).toBe(readFileSync(first.caFile!, "utf8"));
  expect(new X509Certificate(other.cert).checkHost("1-a.other.test")).toBe("*.other.test");
});

it("refuses an operator's certificate that does not fit its key or the domain", async () => {
  const a = await proxyCertificate({ dir: path.join(dir, "a"), domain: "a.test" });
  const b = await proxyCertificate({ dir: path.join(dir, "b"), domain: "b.test" });
  const certFile = path.join(dir, "a.pem");
  const keyFile = path.join(dir, "a.key");
  const otherKey = path.join(dir, "b.key");
  writeFileSync(certFile, a.cert);
  writeFileSync(keyFile, a.key);
  writeFileSync(otherKey, b.key);
  const own = await proxyCertificate({ dir, domain: "a.test", certFile, keyFile });
  expect(own).toEqual({ cert: a.cert, key: a.key });
  await expect(proxyCertificate({ dir, domain: "a.test", certFile, keyFile: otherKey })).rejects.toThrow(
    /do not go together/,
  );
  await expect(proxyCertificate({ dir, domain: "b.test", certFile, keyFile })).rejects.toThrow(
    /does not name \*\.b\.test/,
  );
  await expect(proxyCertificate({ dir, domain: "a.test", certFile })).rejects.toThrow(/both/);
});
