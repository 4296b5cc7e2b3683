import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { freePort } from "./free-port.js";

export interface LocalRegistry {
  /** `127.0.0.1:PORT` */
  host: string;
  /** Pushes an OCI image (`layout:tag`) as `repository:tag`; returns the manifest digest the registry holds. */
  push(image: string, target: string): string;
  /** Request lines of its access log so far (`GET /v2/…`). */
  requests(): string[];
  stop(): Promise<void>;
}

/**
 * Debian's `docker-registry` (distribution 2.8) on a free loopback port, with its storage and
 * config in a temp dir; with `auth`, an htpasswd (bcrypt) login is required, over plain HTTP.
 */
export async function startLocalRegistry(auth?: {
  username: string;
  password: string;
}): Promise<LocalRegistry> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "x-registry-"));
  const port = await freePort();
  const host = `127.0.0.1:${port}`;
  const logFile = path.join(dir, "registry.log");
  if (auth) {
    const entry = execFileSync("htpasswd", ["-nbB", auth.username, auth.password], { encoding: "utf8" });
    writeFileSync(path.join(dir, "htpasswd"), entry);
  }
  writeFileSync(
    path.join(dir, "config.yml"),
    [
      "version: 0.1",
      "log: { level: info }",
      `storage: { filesystem: { rootdirectory: ${dir}/storage } }`,
      `http: { addr: "${host}", secret: test }`,
      ...(auth ? [`auth: { htpasswd: { realm: test, path: ${dir}/htpasswd } }`] : []),
      "",
    ].join("\n"),
  );
  let child: ChildProcess | undefined;
  const stop = async () => {
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child!.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const out = openSync(logFile, "a");
    child = spawn("docker-registry", ["serve", path.join(dir, "config.yml")], {
      stdio: ["ignore", out, out],
    });
    closeSync(out);
    const deadline = Date.now() + 15_000;
    for (;;) {
      const up = await fetch(`http://${host}/v2/`).then(
        (r) => r.status === 200 || r.status === 401,
        () => false,
      );
      if (up) break;
      if (child.exitCode !== null || Date.now() > deadline)
        throw new Error(`docker-registry did not start: ${readFileSync(logFile, "utf8").slice(-2000)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    host,
    push: (image, target) => {
      const digestFile = path.join(dir, "digest");
      execFileSync("skopeo", [
        "copy",
        "--quiet",
        "--dest-tls-verify=false",
        ...(auth ? ["--dest-creds", `${auth.username}:${auth.password}`] : []),
        "--digestfile",
        digestFile,
        `oci:${image}`,
        `docker://${host}/${target}`,
      ]);
      return readFileSync(digestFile, "utf8").trim();
    },
    requests: () =>
      [
        ...readFileSync(logFile, "latin1").matchAll(/"((?:GET|HEAD|PUT|POST|PATCH|DELETE) \/v2\/[^ "]*)/g),
      ].map((m) => m[1]!),
    stop,
  };
}
