import { mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { DomainError } from "../model/errors.js";
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

  describe("within a team's budget", () => {
    const hashOf = (c: string) => c.repeat(64);
    const stored = (team: string) => readdirSync(path.dirname(uploads.path(team, HASH))).sort();
    const put = (team: string, hash: string, bytes: number, budget: { count: number; bytes: number }) =>
      uploads.receive(team, hash, Readable.from([Buffer.alloc(bytes, 1)]), 1024, budget);
    /** Marks an archive as last used `hours` ago. */
    const age = (team: string, hash: string, hours: number) => {
      const then = new Date(Date.now() - hours * 3600_000);
      utimesSync(uploads.path(team, hash), then, then);
    };

    it("makes room by removing the least recently used archives, not those used within the hour", async () => {
      const budget = { count: 3, bytes: 100 };
      for (const [i, c] of [..."abc"].entries()) {
        await put("budget", hashOf(c), 30, budget);
        age("budget", hashOf(c), 4 - i);
      }
      // 'a' is asked for again (a link found it present): it is the most recently used now
      expect(await uploads.has("budget", hashOf("a"))).toBe(true);
      await put("budget", hashOf("d"), 30, budget);
      expect(stored("budget")).toEqual([hashOf("a"), hashOf("c"), hashOf("d")]);
      // by size: 40 more bytes need the oldest gone ('c'; 'd' is younger)
      age("budget", hashOf("d"), 1.5);
      await put("budget", hashOf("e"), 40, { count: 10, bytes: 100 });
      expect(stored("budget")).toEqual([hashOf("a"), hashOf("d"), hashOf("e")]);
    });

    it("refuses (403) one more when what the team keeps was used within the hour, and keeps it all", async () => {
      const budget = { count: 2, bytes: 1000 };
      await put("recent", hashOf("a"), 10, budget);
      await put("recent", hashOf("b"), 10, budget);
      const refused = await put("recent", hashOf("c"), 10, budget).catch((err: unknown) => err);
      expect(refused).toBeInstanceOf(DomainError);
      expect((refused as DomainError).code).toBe("forbidden");
      expect((refused as Error).message).toMatch(
        /keeps 2 build archives \(1 MiB\) used within the last hour; one more of 1 MiB would pass its limit of 2 archives and 1 MiB/,
      );
      expect(stored("recent")).toEqual([hashOf("a"), hashOf("b")]);
      // the same archive again replaces itself: no room needed
      await put("recent", hashOf("a"), 10, budget);
      // an archive larger than the budget is too large, whatever the limit of one archive
      await expect(put("recent", hashOf("d"), 2000, { count: 10, bytes: 1000 })).rejects.toBeInstanceOf(
        UploadTooLarge,
      );
      expect(stored("recent")).toEqual([hashOf("a"), hashOf("b")]);
    });
  });
});
