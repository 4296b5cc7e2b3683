import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { BuildUploads, LINK_TTL_SECONDS, UploadTooLarge } from "./uploads.js";

const HASH = "a".repeat(64);

describe("BuildUploads", () => {
  let dir: string;
  let uploads: BuildUploads;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), "x-uploads-"));
    uploads = await BuildUploads.open(dir);
  });

  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it("accepts a link until its expiry and refuses it after, and for another template", () => {
    const issued = Date.parse("2030-01-01T00:00:00Z");
    const token = uploads.token("tpl", HASH, issued);
    expect(uploads.verify("tpl", HASH, token, issued + LINK_TTL_SECONDS * 1000)).toBe(true);
    expect(uploads.verify("tpl", HASH, token, issued + (LINK_TTL_SECONDS + 1) * 1000)).toBe(false);
    expect(uploads.verify("other", HASH, token, issued)).toBe(false);
  });

  it("stores an upload within the limit whole", async () => {
    await uploads.receive("team", HASH, Readable.from([Buffer.from("one "), Buffer.from("two")]), 7);
    expect(readFileSync(uploads.path("team", HASH), "utf8")).toBe("one two");
    rmSync(uploads.path("team", HASH));
  });

  it("answers an upload past the limit over its own connection and keeps nothing of it", async () => {
    const errors: unknown[] = [];
    const server = http.createServer((req, res) => {
      uploads.receive("team", HASH, req, 64 * 1024).then(
        () => res.writeHead(204).end(),
        (err: unknown) => {
          errors.push(err);
          res.writeHead(err instanceof UploadTooLarge ? 413 : 500).end(String(err));
        },
      );
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const answer = await new Promise<{ status?: number; body: string }>((resolve, reject) => {
        const req = http.request({ host: "127.0.0.1", port, method: "PUT", path: "/" }, (res) => {
          let body = "";
          res.setEncoding("utf8");
          res.on("data", (d: string) => {
            body += d;
          });
          res.on("end", () => resolve({ status: res.statusCode, body }));
        });
        req.on("error", reject);
        // chunked, no declared length: only counting the bytes finds the upload too large
        for (let i = 0; i < 64; i++) req.write(Buffer.alloc(16 * 1024, i));
        req.end();
      });
      expect(answer).toEqual({ status: 413, body: expect.stringMatching(/upload larger than 65536 bytes/) });
      expect(errors).toEqual([expect.any(UploadTooLarge)]);
      expect(readdirSync(path.dirname(uploads.path("team", HASH)))).toEqual([]);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
