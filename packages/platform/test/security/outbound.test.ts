/**
 * Probes of the security review (2026-12-07) for the connections the platform makes from the
 * host for tenants: M4 (registry pulls: an internal registry, a token realm that points inside,
 * a registry's answer echoed into the build log), M5 (webhooks to internal addresses, at create)
 * and L6 (another team's images in the import directory). Each goes through the public e2b
 * client or the raw API against a real platform, with listeners on loopback that record what
 * reaches them; each failed on 90dd82b. Webhooks refused at send time (a name that resolves
 * to loopback then) are probed in test/webhooks/dispatcher.test.ts; credentials sent to
 * mirrors in test/e2e/registry-templates.test.ts.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, rmSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { Template } from "e2b";
import { TEST_DATA_DIR } from "../helpers/platform.js";
import { startTemplatePlatform, type TemplatePlatform } from "../templates/support.js";
import { makeRootfs } from "../templates/tiny-rootfs.js";

/** An HTTP listener on 127.0.0.1 that records every request line and answers with `handle` (200 by default). */
interface Listener {
  port: number;
  requests: string[];
  close(): Promise<void>;
}

async function listen(
  handle?: (req: http.IncomingMessage, res: http.ServerResponse) => void,
): Promise<Listener> {
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    if (handle) handle(req, res);
    else res.end("ok");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as AddressInfo).port,
    requests,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Names the platform resolves in this test (nothing else resolves). */
const NAMES: Record<string, string[]> = {
  "registry.internal.test": ["127.0.0.1"],
  "hooks.internal.test": ["10.0.0.5"],
  "hooks.mixed.test": ["198.51.100.20", "169.254.169.254"],
  "hooks.public.test": ["198.51.100.20"],
};

describe("the platform connects for tenants to public addresses only, unless its operator allows more", () => {
  let p: TemplatePlatform;
  /** Stands for an internal service on the host's loopback: nothing may ever reach it. */
  let internal: Listener;
  /** A registry on loopback the operator allowed; what it answers is set per test. */
  let registry: Listener;
  let answer: (req: http.IncomingMessage, res: http.ServerResponse) => void = (_req, res) => res.end();
  const importDirs: string[] = [];

  beforeAll(async () => {
    internal = await listen();
    registry = await listen((req, res) => answer(req, res));
    p = await startTemplatePlatform(
      "runc",
      "sqlite",
      { allowPrivateRegistries: [`127.0.0.1:${registry.port}`] },
      async (name) => {
        const found = NAMES[name];
        if (!found) throw Object.assign(new Error(`${name}: not found`), { code: "ENOTFOUND" });
        return found;
      },
    );
    p.useClient();
  });

  afterAll(async () => {
    await p?.stop();
    await internal?.close();
    await registry?.close();
    for (const dir of importDirs) rmSync(dir, { recursive: true, force: true });
  });

  /** Template.build's failure message, with the build's log lines. */
  async function failedBuild(template: Parameters<typeof Template.build>[0], name: string) {
    const logs: string[] = [];
    const error = await Template.build(template, name, { onBuildLogs: (e) => logs.push(e.message) }).then(
      () => undefined,
      (err: Error) => err.message,
    );
    if (error === undefined) throw new Error(`the build of ${name} succeeded`);
    return { error, logs };
  }

  describe("M4: registry pulls", () => {
    it("refuses a registry on an internal address before any request, whatever form names it", async () => {
      const cases: Array<[string, string, string]> = [
        [
          `127.0.0.1:${internal.port}/probe:1`,
          `127.0.0.1:${internal.port}`,
          "127.0.0.1 is a loopback address",
        ],
        // what WHATWG URLs and inet_aton read as 127.0.0.1
        [
          `2130706433:${internal.port}/probe:1`,
          `2130706433:${internal.port}`,
          "127.0.0.1 is a loopback address",
        ],
        [`0x7f.1:${internal.port}/probe:1`, `0x7f.1:${internal.port}`, "127.0.0.1 is a loopback address"],
        [
          `localhost:${internal.port}/probe:1`,
          `localhost:${internal.port}`,
          "'localhost' resolves to a loopback address",
        ],
        [
          `registry.internal.test:${internal.port}/probe:1`,
          `registry.internal.test:${internal.port}`,
          "'registry.internal.test' resolves to a loopback address",
        ],
        ["169.254.169.254/latest/probe:1", "169.254.169.254", "169.254.169.254 is a link-local address"],
        ["10.1.2.3:5000/probe:1", "10.1.2.3:5000", "10.1.2.3 is a private address"],
      ];
      for (const [i, [image, registryName, why]] of cases.entries()) {
        const { error } = await failedBuild(Template().fromImage(image), `m4-internal-${i}`);
        expect(error).toContain(
          `registry ${registryName} is not allowed: ${why}; the platform's operator can allow it with 'x serve --allow-private-registry ${registryName}'`,
        );
      }
      expect(internal.requests).toEqual([]);
    });

    it("follows no token realm from an allowed registry to an internal address", async () => {
      const realms = [
        // Go connects to loopback without its proxy: the pull's own namespace has nothing there
        `http://127.0.0.1:${internal.port}/token`,
        `http://2130706433:${internal.port}/token`,
        "http://169.254.169.254/latest/meta-data/token",
      ];
      for (const [i, realm] of realms.entries()) {
        answer = (_req, res) =>
          res
            .writeHead(401, { "WWW-Authenticate": `Bearer realm="${realm}",service="probe"` })
            .end('{"errors":[{"code":"UNAUTHORIZED","message":"token needed"}]}');
        const { error } = await failedBuild(
          Template().fromImage(`127.0.0.1:${registry.port}/probe:1`),
          `m4-realm-${i}`,
        );
        if (realm.includes("169.254"))
          expect(error).toContain(
            `registry 127.0.0.1:${registry.port} sent the pull of '127.0.0.1:${registry.port}/probe:1' elsewhere (a token service or a redirect), and 169.254.169.254 is a link-local address`,
          );
      }
      // the allowed registry was asked; the internal service never was
      expect(registry.requests.length).toBeGreaterThan(0);
      expect(internal.requests).toEqual([]);
    });

    it("does not repeat in the build's log what a registry answered", async () => {
      const secret = "SECRET-INTERNAL-ANSWER-7f3a";
      answer = (req, res) => {
        if (req.url === "/v2/") res.writeHead(200, { "Content-Type": "application/json" }).end("{}");
        else
          res
            .writeHead(400, { "Content-Type": "application/json" })
            .end(JSON.stringify({ errors: [{ code: "UNKNOWN", message: secret }] }));
      };
      const { error, logs } = await failedBuild(
        Template().fromImage(`127.0.0.1:${registry.port}/probe:1`),
        "m4-answer",
      );
      expect(error).toMatch(new RegExp(`registry 127\\.0\\.0\\.1:${registry.port}`));
      expect(error).not.toContain(secret);
      expect(logs.join("\n")).not.toContain(secret);
    });
  });

  describe("L6: the import directory", () => {
    /** An OCI layout (`<dir>/layout:t`) with a tiny root filesystem. */
    function makeImage(dir: string): string {
      importDirs.push(dir);
      mkdirSync(dir, { recursive: true });
      const layout = path.join(dir, "layout");
      const bundle = path.join(dir, "bundle");
      execFileSync("umoci", ["init", "--layout", layout]);
      execFileSync("umoci", ["new", "--image", `${layout}:t`]);
      execFileSync("umoci", ["unpack", "--image", `${layout}:t`, bundle]);
      makeRootfs(path.join(bundle, "rootfs"));
      execFileSync("umoci", ["repack", "--image", `${layout}:t`, bundle]);
      return `${layout}:t`;
    }

    it("gives a team the images under teams/<its id>/ and none under another team's", async () => {
      const team = (await p.t.platform.defaultTeam()).id;
      const other = (await p.t.platform.store.teams.createTeam("L6 other", "l6-other")).id;
      const theirs = makeImage(path.join(TEST_DATA_DIR, "import", "teams", other));
      const { error } = await failedBuild(Template().fromImage(`oci:${theirs}`), "l6-theirs");
      expect(error).toContain(`image path ${theirs.replace(/:t$/, "")} does not exist under`);

      const mine = makeImage(path.join(TEST_DATA_DIR, "import", "teams", team));
      await Template.build(Template().fromImage(`oci:${mine}`), "l6-mine");
    });
  });

  describe("M5: webhooks", () => {
    const create = (url: string) =>
      p.api("POST", "/events/webhooks", {
        name: "probe",
        url,
        events: ["sandbox.lifecycle.created"],
        signatureSecret: "s3cret-probe",
      });

    it("refuses (400) a URL whose host is, or resolves to, an internal address", async () => {
      const port = internal.port;
      const cases: Array<[string, string]> = [
        [`http://127.0.0.1:${port}/x`, "127.0.0.1 is a loopback address"],
        [`http://2130706433:${port}/x`, "127.0.0.1 is a loopback address"],
        [`http://0x7f.1:${port}/x`, "127.0.0.1 is a loopback address"],
        [`http://[::1]:${port}/x`, "::1 is a loopback address"],
        [`http://[::ffff:127.0.0.1]:${port}/x`, "::ffff:7f00:1 is a loopback address"],
        [`http://localhost:${port}/x`, "'localhost' resolves to a loopback address"],
        ["http://169.254.169.254/latest/meta-data/", "169.254.169.254 is a link-local address"],
        ["http://10.0.0.1/hook", "10.0.0.1 is a private address"],
        ["http://[fd00:ec2::254]/hook", "fd00:ec2::254 is a private address"],
        ["https://hooks.internal.test/hook", "'hooks.internal.test' resolves to a private address"],
        ["https://hooks.mixed.test/hook", "'hooks.mixed.test' resolves to a link-local address"],
      ];
      for (const [url, why] of cases) {
        const res = await create(url);
        expect({ url, status: res.status, body: res.body }).toEqual({
          url,
          status: 400,
          body: {
            code: 400,
            message: `url: ${why}: webhooks are sent to public addresses only, unless the platform's operator allows internal ones (x serve --allow-private-webhooks)`,
          },
        });
      }
      expect((await p.api("GET", "/events/webhooks")).body).toEqual([]);
      expect(internal.requests).toEqual([]);
    });

    it("takes public hosts (and names that do not resolve yet), and refuses an update to an internal one", async () => {
      const made: string[] = [];
      try {
        for (const url of [
          "https://hooks.public.test/e2b",
          "https://not-yet.test/e2b",
          "http://198.51.100.7/e2b",
        ]) {
          const res = await create(url);
          expect({ url, status: res.status }).toEqual({ url, status: 201 });
          made.push(res.body.id);
        }
        const updated = await p.api("PATCH", `/events/webhooks/${made[0]}`, {
          url: `http://127.0.0.1:${internal.port}/x`,
        });
        expect(updated.status).toBe(400);
        expect((await p.api("GET", `/events/webhooks/${made[0]}`)).body.url).toBe(
          "https://hooks.public.test/e2b",
        );
      } finally {
        for (const id of made) await p.api("DELETE", `/events/webhooks/${id}`);
      }
    });
  });
});
