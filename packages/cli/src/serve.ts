import { existsSync } from "node:fs";
import path from "node:path";
import { Writable } from "node:stream";
import {
  createLogger,
  DEFAULTS,
  FORK_COUNT_CEILING,
  type ImageBuildProgress,
  LIMIT_DEFAULTS,
  type LogFormat,
  SHIPPED_TEMPLATES,
  startPlatform,
} from "@x/platform";
import { cleanupCommandFor } from "./cleanup.js";
import { CODE_INTERPRETER, codeInterpreterDemo, demo } from "./demo.js";
import { processIo } from "./output/io.js";
import { createProgress, type Progress } from "./output/progress.js";
import { DEFAULT_TLS_PORT, serveConfig } from "./serve-options.js";
import { keepShippedTemplates } from "./serve-templates.js";
import { stopSignal } from "./stop-signal.js";
import { STORE_HELP } from "./store-location.js";

export { type ServeOptions, serveConfig } from "./serve-options.js";

const HELP = `x serve: run the platform (API, proxy, orchestrator) in this process

  --port N            API port (X_PORT, default ${DEFAULTS.apiPort}; 0 picks a free one, shown when ready)
  --proxy-port N      sandbox proxy port (X_PROXY_PORT, default ${DEFAULTS.proxyPort}; 0 likewise)
${STORE_HELP}  --runtime NAME      default sandbox runtime: runsc or runc (X_RUNTIME)
  --tenant-runtimes NAME,...
                      runtimes a create may ask for ("runtime" in its body): runsc,runc by default;
                      runsc alone keeps every tenant's code behind gVisor, and a create asking for
                      runc gets 403 (X_TENANT_RUNTIMES; the default runtime must be one of them)
  --domain NAME       sandboxes are {port}-{id}.NAME (X_DOMAIN, default ${DEFAULTS.domain})
  --host ADDR         address the API and proxy listen on (X_HOST, default ${DEFAULTS.host})
  --network-prefix P  prefix of the netns, veth and nftables names this platform owns, at most
                      6 lowercase letters or digits (X_NETWORK_PREFIX, default ${DEFAULTS.networkPrefix})
  --network-cidr CIDR pool of /30 sandbox networks (X_NETWORK_CIDR, default ${DEFAULTS.networkCidr})
  --pool-size N       ready sandboxes kept at least per template build, so creates need not boot;
                      0 keeps none (X_POOL_SIZE, default ${DEFAULTS.warmPoolSize})
  --pool-max N        ready sandboxes kept at most per template build when demand grows; pools
                      size themselves between the two (X_POOL_MAX, default 16)
  --memory-reserve MB host memory kept free: no sandbox boots below it and creates answer 503
                      (X_MEMORY_RESERVE, default 10% of the host's)
  --boot-concurrency N
                      sandboxes booting at once; creates beyond it wait their turn (X_BOOT_CONCURRENCY,
                      default cores + 1)
  --process-limit N   tasks (processes and threads) a sandbox's commands may run; past it the
                      session with the most is ended (X_PROCESS_LIMIT, default one per MiB of
                      the sandbox's memory under runc, 128 to 4096; 128 per account under
                      gVisor, whose every task costs host tasks)
  --max-sandboxes N   sandboxes one team may have starting or running at once (X_MAX_SANDBOXES,
                      default ${DEFAULTS.maxSandboxesPerTeam}); 'x team limits' lowers it per team
  --max-timeout S     the longest timeout a sandbox may be given (X_MAX_TIMEOUT, default
                      ${DEFAULTS.maxTimeoutSeconds}); 'x team limits' lowers it per team
  --volume-size MB    capacity of a volume whose create gives none (X_VOLUME_SIZE, default
                      ${DEFAULTS.volumeSizeMB}); a full volume is its writers' ENOSPC
  Limits of every team, which 'x team limits' lowers per team (past them: 400 for one request
  asking too much, 403 for what a team holds, 429 for sandboxes at once):
  --max-cpu N         vCPUs of one sandbox (X_MAX_CPU, default the host's cores, at least 2)
  --max-memory MB     memory of one sandbox (X_MAX_MEMORY, default half the host's, at least 1024)
  --disk-size MB      disk of one sandbox's writable layer, and the most one may have
                      (X_DISK_SIZE, default ${DEFAULTS.diskSizeMB})
  --max-volume-size MB
                      capacity of one volume (X_MAX_VOLUME_SIZE, default 64 GiB, or the data
                      directory's disk when smaller: volumes are sparse and overcommit it)
  --max-volumes N     volumes one team holds (X_MAX_VOLUMES, default ${LIMIT_DEFAULTS.maxVolumesPerTeam})
  --max-templates N   templates one team holds, snapshots' own included (X_MAX_TEMPLATES,
                      default ${LIMIT_DEFAULTS.maxTemplatesPerTeam})
  --max-snapshots N   snapshots one team holds; each fork takes one (X_MAX_SNAPSHOTS, default
                      ${LIMIT_DEFAULTS.maxSnapshotsPerTeam})
  --max-fork-count N  sandboxes one fork request may start, at most ${FORK_COUNT_CEILING} (X_MAX_FORK_COUNT,
                      default ${LIMIT_DEFAULTS.maxForkCount})
  --max-uploads N, --max-uploads-mb MB
                      template build archives (COPY steps) kept per team, by count and size; past
                      either the team's least recently used go (X_MAX_UPLOADS, X_MAX_UPLOADS_MB,
                      default ${LIMIT_DEFAULTS.maxUploadsPerTeam} and ${LIMIT_DEFAULTS.maxUploadsMBPerTeam})
  --deep-pause-after S
                      a sandbox frozen this many seconds is checkpointed (gVisor) or stopped
                      to free its memory (X_DEEP_PAUSE_AFTER, default ${DEFAULTS.deepPauseAfterMs / 1000})
  --console-log-max MB
                      newest part of each sandbox's console log kept (envd's lines and whatever
                      its root writes to /proc/1/fd/1); trimmed at twice that (X_CONSOLE_LOG_MAX,
                      default 4)
  --build-log-max-lines N, --build-log-max MB
                      output of its commands one template build's log keeps; past either one
                      line says it was truncated (X_BUILD_LOG_MAX_LINES, X_BUILD_LOG_MAX,
                      default 50000 lines and 16 MiB)
  --allow-internal CIDR[,CIDR…]
                      private IPv4 ranges sandboxes with internet may reach (a package mirror,
                      say); all other private, loopback, link-local and CGNAT addresses are
                      refused (X_ALLOW_INTERNAL, default none)
  --dns-upstream IP[:PORT][,…]
                      resolvers the sandboxes' DNS service forwards to; "none" refuses every
                      query (X_DNS_UPSTREAM, default this host's resolv.conf)
  --egress-ca FILE[,FILE…]
                      CA certificates (PEM) trusted, besides the system's, for the origins of
                      requests the egress proxy rewrites for network.rules (X_EGRESS_CA)
  --tls-port N|off    the proxy's HTTPS port, for https://{port}-{id}.DOMAIN (HTTP/1.1 and h2)
                      (X_TLS_PORT, default ${DEFAULT_TLS_PORT}; 0 picks a free one)
  --tls-cert FILE, --tls-key FILE
                      your certificate for *.DOMAIN and its key, PEM (X_TLS_CERT, X_TLS_KEY);
                      by default a local CA made on first start (DATA_DIR/tls) signs one
  --secrets-key-file FILE
                      the 32-byte key that encrypts teams' secrets and sandbox and volume tokens
                      at rest, kept apart from the database: best outside DATA_DIR
                      (X_SECRETS_KEY_FILE; by default DATA_DIR/keys/secrets.key, made on first
                      start); every node of a cluster, and x proxy, must be given the same file
  --identity-key-file FILE
                      the ES256 key (a private JWK) that signs sandboxes' identity tokens
                      (X_IDENTITY_KEY_FILE; by default DATA_DIR/keys/identity.jwk, made on first
                      start); every node of a cluster must be given the same file
  --metrics-token-file FILE
                      a file holding the bearer token GET /metrics then needs (401 without
                      it); scrapes with it see per-template labels. Without one /metrics is
                      anonymous and shows no template, team or sandbox ids (X_METRICS_TOKEN_FILE)
  --identity-issuer URL
                      the tokens' iss: the API's URL as relying parties reach it, which serves
                      /.well-known/jwks.json and /.well-known/openid-configuration
                      (X_IDENTITY_ISSUER, default http://HOST:PORT of the API)
  --identity-trust-domain NAME
                      the SPIFFE trust domain of the tokens' sub (X_IDENTITY_TRUST_DOMAIN,
                      default DOMAIN)
  --dns-listen IP:PORT
                      answer DNS for DOMAIN and *.DOMAIN there with the proxy's address, for
                      machines that use it as resolver (X_DNS_LISTEN, default off)
  --registry-mirror REGISTRY=MIRROR
                      pull images of REGISTRY from MIRROR first (host[:port][/path]; http://
                      for plain HTTP), e.g. docker.io=127.0.0.1:5000; repeat for more, tried in
                      order (X_REGISTRY_MIRRORS, comma-separated)
  --insecure-registry HOST[:PORT]
                      pull from this registry over plain HTTP or unverified TLS (allowed
                      loopback registries need no flag); repeatable (X_INSECURE_REGISTRIES)
  --allow-private-registry HOST[:PORT]|CIDR
                      let templates pull from this internal registry (loopback, private,
                      link-local, CGNAT or this host's own addresses are refused otherwise;
                      registries of --registry-mirror and --insecure-registry are allowed);
                      repeatable (X_ALLOW_PRIVATE_REGISTRIES, comma-separated)
  --send-credentials-to-mirror HOST[:PORT]
                      send teams' registry credentials to this mirror as well (a pull-through
                      cache that needs them); by default they go only to the registry they
                      were given for; repeatable (X_SEND_CREDENTIALS_TO_MIRRORS)
  --allow-private-webhooks HOST[:PORT]|CIDR
                      let webhooks be sent to this internal host or range (loopback, private,
                      link-local, CGNAT or this host's own addresses are refused otherwise, at
                      create and at each delivery); repeatable (X_ALLOW_PRIVATE_WEBHOOKS)
  --log-level L       debug, info, warn, error or silent (X_LOG_LEVEL, default info)
  --log-format F      pretty (readable lines, the default when stdout and stderr are both
                      terminals) or json (the default otherwise, e.g. piped) (X_LOG_FORMAT)
  --templates NAME,...
                      keep these templates that ship with the platform built (${SHIPPED_TEMPLATES.join(", ")}):
                      installed at start as 'x template install' does, rebuilt only where changed,
                      with warm pools like base's (X_TEMPLATES)
  --demo              once ready, create a sandbox, run a command in it and show the output; then
                      run E2B's code-interpreter quickstart (installing code-interpreter-v1 first)
`;

/** Readable lines only when a person watches both streams: `x serve | cat` gives JSON too. */
function logFormatOf(chosen: LogFormat | undefined): LogFormat {
  return chosen ?? (process.stdout.isTTY && process.stderr.isTTY ? "pretty" : "json");
}

interface ServeConsole {
  /** Where log lines go. */
  logs: NodeJS.WritableStream;
  /** Draws the base image build; unset when the platform is to log it by phase. */
  onBaseImageProgress?: (p: ImageBuildProgress) => void;
  /** Takes the bar down (the build is done, or failed). */
  stopBar(): void;
}

/**
 * With readable logs on a terminal, the base image build (minutes, on the first start) is a
 * progress bar on stderr, and log lines are printed above it while it is drawn rather than
 * through it; otherwise the platform logs the build by phase and lines go straight to stderr.
 */
function serveConsole(format: LogFormat): ServeConsole {
  if (format !== "pretty" || !process.stderr.isTTY) return { logs: process.stderr, stopBar: () => {} };
  let bar: Progress | undefined;
  const stopBar = (): void => {
    bar?.stop();
    bar = undefined;
  };
  const logs = Object.assign(
    new Writable({
      write(chunk: Buffer | string, _encoding, done) {
        const text = chunk.toString();
        if (bar) bar.log(text.replace(/\n$/, ""));
        else process.stderr.write(text);
        done();
      },
    }),
    { isTTY: true }, // colours, as on the terminal itself
  );
  return {
    logs,
    stopBar,
    onBaseImageProgress: (p) => {
      bar ??= createProgress({ out: () => undefined, err: (t) => process.stderr.write(t), tty: true });
      bar.advance(`building the base image (${p.phase})`, p.done, p.total, p.line);
      if (p.phase === "finalize" && p.line.startsWith("image ready")) stopBar();
    },
  };
}

export async function serve(argv: string[]): Promise<number> {
  const { config, demo: runDemo, templates, help, logLevel, logFormat } = serveConfig(argv);
  if (help) {
    process.stdout.write(HELP);
    return 0;
  }
  const format = logFormatOf(logFormat);
  const { logs, onBaseImageProgress, stopBar } = serveConsole(format);
  const log = createLogger({ level: logLevel, format, destination: logs });
  const stop = stopSignal();
  // a base image build that failed takes its bar down too
  const platform = await startPlatform(config, {
    log,
    onBaseImageProgress,
    signal: stop.signal,
    cleanupCommand: cleanupCommandFor(config),
  })
    .catch(stop.explain)
    .finally(stopBar);
  // the bound ports (--port 0 picks free ones), at the address listened on when it is a single one
  const { host } = config;
  const shown = host === "0.0.0.0" || host === "::" ? "localhost" : host.includes(":") ? `[${host}]` : host;
  const apiUrl = `http://${shown}:${platform.apiPort}`;
  const proxyUrl = `http://${shown}:${platform.proxyPort}`;
  const key = platform.firstApiKey;
  process.stdout.write(
    [
      `x: platform ready — API ${apiUrl}, sandbox proxy ${proxyUrl}, data in ${config.dataDir}`,
      ...(config.consoleDir && existsSync(path.join(config.consoleDir, "index.html"))
        ? [`x: web console ${apiUrl}/console/ (sign in with an API key)`]
        : []),
      key
        ? `x: first team API key (shown once, keep it): ${key}`
        : "x: API keys: 'x keys create NAME' makes a new one",
      "x: point the e2b client or @x/sdk here with:",
      `   export E2B_API_URL=${apiUrl} E2B_SANDBOX_URL=${proxyUrl} E2B_API_KEY=${key ?? "<your key>"}`,
      // the client's Volume sends content calls to its own URL, which the API serves too
      `   export E2B_VOLUME_API_URL=${apiUrl}`,
      ...(platform.tlsPort !== undefined
        ? [
            `x: sandbox URLs over HTTPS (HTTP/1.1 and h2): https://{port}-{sandboxID}.${platform.sandboxDomain}, as sandbox.getHost(port) gives them`,
          ]
        : []),
      ...(platform.caFile
        ? [
            `x: its certificate is signed by a local CA, ${platform.caFile}; trust it with`,
            `   export NODE_EXTRA_CA_CERTS=${platform.caFile}   # Node`,
            `   cp ${platform.caFile} /usr/local/share/ca-certificates/x-local-ca.crt && update-ca-certificates   # the system`,
          ]
        : []),
      ...(platform.dnsListenPort !== undefined
        ? [
            `x: DNS for ${config.domain} and *.${config.domain} at ${config.dnsListen}: use it as a resolver to open sandbox URLs by name`,
          ]
        : config.domain.endsWith("localhost")
          ? [
              `x: curl and browsers reach *.${config.domain} on this host by themselves; other clients need --dns-listen`,
            ]
          : []),
      "",
    ].join("\n"),
  );
  const kept =
    runDemo && !templates.includes(CODE_INTERPRETER) ? [...templates, CODE_INTERPRETER] : templates;
  const installing = keepShippedTemplates(platform, { apiUrl, proxyUrl }, kept, processIo);
  if (runDemo) {
    // A key of its own, revoked afterwards, so the demo works on every start.
    const team = await platform.defaultTeam();
    const { key: demoKey, apiKey } = await platform.store.teams.createKey(team.id, "demo");
    const demos = (async () => {
      // the demo shows a create as users get it once the platform has warmed up
      await platform.warmPool.whenFull().catch(() => undefined);
      await demo(apiUrl, proxyUrl, demoKey);
      await installing;
      await platform.warmPool.whenFull().catch(() => undefined);
      await codeInterpreterDemo(apiUrl, proxyUrl, demoKey);
    })();
    // a stop does not wait for the demo (minutes while code-interpreter-v1 is built): what it
    // was doing fails as the platform closes, and is not reported
    const stopped = await Promise.race([demos.then(() => false), stop.requested.then(() => true)]).finally(
      () => platform.store.teams.revokeKey(team.id, apiKey.id),
    );
    if (stopped) demos.catch(() => undefined);
  }
  await stop.requested;
  process.stdout.write("x: shutting down (sandboxes keep running and are adopted on the next start)\n");
  await platform.close();
  return 0;
}
