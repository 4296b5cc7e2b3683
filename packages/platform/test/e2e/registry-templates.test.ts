/**
 * Templates from container registries through the public e2b client: Debian's docker-registry
 * on loopback ports (one open, one behind an htpasswd login) holds an image this test makes
 * itself with umoci (no network beyond loopback), and `fromImage` / `fromDockerfile` pull it
 * with skopeo. The platform builds under gVisor; sandboxes run under gVisor and runc. Two
 * mirrors of the login registry record what they are sent: a team's credentials go only to the
 * one the operator trusts with them (review L6).
 */
import { execFileSync } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { Sandbox, Template } from "e2b";
import { freePort } from "../helpers/free-port.js";
import { type LocalRegistry, startLocalRegistry } from "../helpers/local-registry.js";
import { TEST_DATA_DIR } from "../helpers/platform.js";
import { startTemplatePlatform, type TemplatePlatform } from "../templates/support.js";
import { makeRootfs } from "../templates/tiny-rootfs.js";

/** The platform's shared layout of pulled images (templates/registry/pull.ts). */
const PULLED = path.join(TEST_DATA_DIR, "images", "registry");
const LOGIN = { username: "tester", password: "right-password" };

/** An OCI image (`layout:t`) with an account `app`, ENV, WORKDIR and USER set in its config. */
function makeImage(dir: string, hello = "hello from oci\n"): { image: string; layerDigests: string[] } {
  const layout = path.join(dir, "layout");
  const bundle = path.join(dir, "bundle");
  const image = `${layout}:t`;
  execFileSync("umoci", ["init", "--layout", layout]);
  execFileSync("umoci", ["new", "--image", image]);
  execFileSync("umoci", ["unpack", "--image", image, bundle]);
  const root = path.join(bundle, "rootfs");
  makeRootfs(root);
  writeFileSync(
    path.join(root, "etc/passwd"),
    "root:x:0:0:root:/root:/bin/bash\napp:x:1000:1000::/home/app:/bin/bash\n",
  );
  writeFileSync(path.join(root, "etc/group"), "root:x:0:\napp:x:1000:\n");
  mkdirSync(path.join(root, "home/app"), { recursive: true });
  chownSync(path.join(root, "home/app"), 1000, 1000);
  chmodSync(path.join(root, "tmp"), 0o1777);
  writeFileSync(path.join(root, "hello.txt"), hello);
  execFileSync("umoci", ["repack", "--image", image, bundle]);
  execFileSync("umoci", [
    "config",
    "--image",
    image,
    "--config.env",
    "FOO=from-registry",
    "--config.workingdir",
    "/srv",
    "--config.user",
    "app",
    // ignored: E2B's start command is the template's own
    "--config.entrypoint",
    "/bin/false",
  ]);
  const index = JSON.parse(readFileSync(path.join(layout, "index.json"), "utf8"));
  const blob = (digest: string) => readFileSync(path.join(layout, "blobs", ...digest.split(":")), "utf8");
  const manifest = JSON.parse(blob(index.manifests[0].digest));
  return { image, layerDigests: manifest.layers.map((l: { digest: string }) => l.digest) };
}

/** Template.build with its log lines collected. */
async function build(template: Parameters<typeof Template.build>[0], name: string): Promise<string[]> {
  const logs: string[] = [];
  try {
    await Template.build(template, name, { onBuildLogs: (e) => logs.push(e.message) });
  } catch (err) {
    // the client's error may say nothing: the build's own log says why
    throw new Error(`build ${name} failed: ${(err as Error).message}\n${logs.slice(-20).join("\n")}`);
  }
  return logs;
}

/**
 * A mirror that has nothing: it asks for a login (Basic) and, given one, knows no image. It
 * records the Authorization header of every request.
 */
async function startEmptyMirror(): Promise<{
  host: string;
  authorizations: string[];
  close(): Promise<void>;
}> {
  const authorizations: string[] = [];
  const server = http.createServer((req, res) => {
    const auth = req.headers.authorization;
    authorizations.push(auth ?? "");
    if (!auth) {
      res.writeHead(401, { "WWW-Authenticate": 'Basic realm="mirror"', "Content-Type": "application/json" });
      res.end('{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}');
      return;
    }
    res.writeHead(404, { "Content-Type": "application/json" });
    res.end('{"errors":[{"code":"MANIFEST_UNKNOWN","message":"manifest unknown"}]}');
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    host: `127.0.0.1:${(server.address() as AddressInfo).port}`,
    authorizations,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Entries of the shared layout a registry of this test left, and the blobs only they held. */
function forgetPulled(hosts: string[]): void {
  const indexFile = path.join(PULLED, "index.json");
  if (!existsSync(indexFile)) return;
  const index = JSON.parse(readFileSync(indexFile, "utf8"));
  for (const m of index.manifests ?? []) {
    const name: string | undefined = m.annotations?.["org.opencontainers.image.ref.name"];
    if (name && hosts.some((h) => name.startsWith(`${h}/`)))
      execFileSync("umoci", ["rm", "--image", `${PULLED}:${name}`]);
  }
  execFileSync("umoci", ["gc", "--layout", PULLED]);
}

describe("templates from container registries", () => {
  let p: TemplatePlatform | undefined;
  let open: LocalRegistry | undefined;
  let locked: LocalRegistry | undefined;
  /** A loopback port nothing listens on, mirrored by the open registry. */
  let mirrored: string;
  /** Mirrors of the login registry: one the operator trusts with credentials, one it does not. */
  let untrusted: Awaited<ReturnType<typeof startEmptyMirror>> | undefined;
  let trusted: Awaited<ReturnType<typeof startEmptyMirror>> | undefined;
  let image: { image: string; layerDigests: string[] };
  let digest: string;
  const made: Sandbox[] = [];

  const platform = () => {
    if (!p) throw new Error("the platform is not up");
    return p;
  };

  beforeAll(async () => {
    open = await startLocalRegistry();
    locked = await startLocalRegistry(LOGIN);
    mirrored = `127.0.0.1:${await freePort()}`;
    untrusted = await startEmptyMirror();
    trusted = await startEmptyMirror();
    p = await startTemplatePlatform("runsc", "sqlite", {
      registryMirrors: [
        `${mirrored}=${open.host}`,
        `${locked.host}=${untrusted.host}`,
        `${locked.host}=${trusted.host}`,
      ],
      credentialMirrors: [trusted.host],
      // the registries are on loopback, which pulls reach only where the operator allows
      allowPrivateRegistries: ["127.0.0.1"],
    });
    p.useClient();
    image = makeImage(p.scratch());
    digest = open.push(image.image, "test/img:1");
    locked.push(image.image, "private/img:1");
  });

  afterAll(async () => {
    for (const sb of made) await sb.kill().catch(() => undefined);
    await p?.stop();
    await open?.stop();
    await locked?.stop();
    await untrusted?.close();
    await trusted?.close();
    forgetPulled([open?.host, locked?.host, mirrored].filter((h): h is string => h !== undefined));
  });

  /** GETs of the test image's layer blobs the open registry has answered. */
  const layerPulls = () =>
    open!.requests().filter((r) => image.layerDigests.some((d) => r === `GET /v2/test/img/blobs/${d}`))
      .length;

  it("builds fromImage from a loopback registry; sandboxes get its ENV, WORKDIR and USER under runsc and runc", async () => {
    const ref = `${open!.host}/test/img:1`;
    const logs = await build(
      Template().fromImage(ref).runCmd("echo built > /tmp/built.txt"),
      "from-registry",
    );
    expect(logs).toContain(`FROM ${ref}`);
    // skopeo's per-blob progress, and what came from the registry
    expect(logs.some((l) => l.startsWith("Copying blob sha256:"))).toBe(true);
    expect(logs).toContainEqual(expect.stringMatching(/: 1 layers, 0 already cached, 1 pulled/));
    expect(layerPulls()).toBe(1);

    const sandbox = await Sandbox.create("from-registry");
    made.push(sandbox);
    const run = await sandbox.commands.run("cat /hello.txt /tmp/built.txt; echo $FOO; pwd; whoami");
    expect(run.stdout).toBe("hello from oci\nbuilt\nfrom-registry\n/srv\napp\n");

    // the same template under runc (the API's runtime extension), reached through the client
    const created = await platform().api("POST", "/sandboxes", {
      templateID: "from-registry",
      runtime: "runc",
    });
    expect(created.status).toBe(201);
    const runc = await Sandbox.connect(created.body.sandboxID);
    made.push(runc);
    expect((await runc.commands.run("echo $FOO; pwd; whoami")).stdout).toBe("from-registry\n/srv\napp\n");
  });

  it("a second template on the same image pulls none of its layers again", async () => {
    const before = layerPulls();
    const logs = await build(
      Template().fromImage(`${open!.host}/test/img:1`).runCmd("true"),
      "from-registry-again",
    );
    expect(logs).toContainEqual(expect.stringMatching(/: 1 layers, 1 already cached, 0 pulled/));
    expect(logs).toContainEqual(expect.stringMatching(/^root filesystem of sha256:\w+ is cached$/));
    expect(layerPulls()).toBe(before);
  });

  it("builds fromDockerfile whose FROM names the registry, and an image pinned by digest", async () => {
    // the client makes a Dockerfile without USER and WORKDIR end as `user` in /home/user (E2B's
    // images have that account; this one does not)
    const dockerfile = [
      `FROM ${open!.host}/test/img:1`,
      "ENV BAR=from-dockerfile",
      'RUN echo "$BAR" > /tmp/bar.txt',
      "USER app",
      "WORKDIR /srv",
    ].join("\n");
    await build(Template().fromDockerfile(dockerfile), "from-dockerfile");
    const sandbox = await Sandbox.create("from-dockerfile");
    made.push(sandbox);
    expect((await sandbox.commands.run("cat /tmp/bar.txt; echo $FOO; whoami")).stdout).toBe(
      "from-dockerfile\nfrom-registry\napp\n",
    );

    const pinned = `${open!.host}/test/img@${digest}`;
    const logs = await build(Template().fromImage(pinned).runCmd("true"), "from-digest");
    expect(logs).toContain(`FROM ${pinned}`);
  });

  it("pulls a tag that moved afresh", async () => {
    const moved = makeImage(platform().scratch(), "hello from the moved tag\n");
    open!.push(moved.image, "test/moved:1");
    const ref = `${open!.host}/test/moved:1`;
    await build(Template().fromImage(ref).runCmd("true"), "from-moved");
    open!.push(makeImage(platform().scratch(), "hello again\n").image, "test/moved:1");
    const logs = await build(Template().fromImage(ref).runCmd("cat /hello.txt"), "from-moved");
    expect(logs).toContainEqual(expect.stringMatching(/: 1 layers, 0 already cached, 1 pulled/));
    expect(logs).toContain("hello again");
    // what only the tag's old image held is collected
    expect(existsSync(path.join(PULLED, "blobs", ...moved.layerDigests[0]!.split(":")))).toBe(false);
  });

  it("pulls through a configured mirror", async () => {
    const logs = await build(Template().fromImage(`${mirrored}/test/img:1`).runCmd("true"), "from-mirror");
    expect(logs).toContain(`pulling ${open!.host}/test/img:1 (mirror of ${mirrored})`);
  });

  it("pulls from a registry behind a login with the right credentials, and says why otherwise", async () => {
    const ref = `${locked!.host}/private/img:1`;
    await build(Template().fromImage(ref, LOGIN).runCmd("true"), "from-private");
    // the password served the pull and is kept nowhere
    const detail = await platform().api("GET", "/templates/from-private");
    const kept = await platform().t.platform.store.templates.getBuild(detail.body.builds[0].buildID);
    expect(kept?.status).toBe("ready");
    expect(JSON.stringify(kept)).not.toContain(LOGIN.password);
    // the mirrors were tried first; only the one trusted with credentials was sent them
    const login = `Basic ${Buffer.from(`${LOGIN.username}:${LOGIN.password}`).toString("base64")}`;
    // (skopeo answers a Basic challenge it has no login for with an empty one, `Basic Og==`)
    expect(untrusted!.authorizations.length).toBeGreaterThan(0);
    expect(untrusted!.authorizations).not.toContain(login);
    expect(trusted!.authorizations).toContain(login);
    await expect(
      build(
        Template()
          .fromImage(ref, { ...LOGIN, password: "wrong" })
          .runCmd("true"),
        "from-private-wrong",
      ),
    ).rejects.toThrow(`registry ${locked!.host} refused the credentials for '${ref}' (unauthorized)`);
    await expect(build(Template().fromImage(ref).runCmd("true"), "from-private-anonymous")).rejects.toThrow(
      `registry ${locked!.host} requires credentials for '${ref}' (unauthorized)`,
    );
  });

  it("fails the build clearly for an unknown tag or an unreachable registry", async () => {
    const unknown = `${open!.host}/test/img:no-such-tag`;
    await expect(build(Template().fromImage(unknown), "from-unknown")).rejects.toThrow(
      `image '${unknown}' not found in registry ${open!.host}: no such repository or tag`,
    );
    const nobody = `127.0.0.1:${await freePort()}`;
    await expect(build(Template().fromImage(`${nobody}/test/img:1`), "from-nowhere")).rejects.toThrow(
      `cannot reach registry ${nobody} to pull '${nobody}/test/img:1': connection refused`,
    );
    // the build itself ended in status error, with the message as its reason
    const detail = await platform().api("GET", "/templates/from-nowhere");
    expect(detail.body.builds.map((b: { status: string }) => b.status)).toEqual(["error"]);
  });
});
