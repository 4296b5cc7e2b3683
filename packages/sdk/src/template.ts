import type { PlatformClient, Schemas } from "@x/platform-client";
import { type CopyFiles, readCopyFiles } from "./build-context.js";
import {
  allPages,
  type ConnectionOptions,
  platformClient,
  type ResolvedConnection,
  resolveConnection,
  unwrap,
} from "./config.js";
import { parseDockerfile } from "./dockerfile.js";
import {
  BuildError,
  found,
  fromHttpError,
  fromUnknown,
  InvalidArgumentError,
  NotFoundError,
  TimeoutError,
} from "./errors.js";

/** One build step as the platform takes it: `RUN`, `COPY`, `ENV`, `WORKDIR` or `USER`. */
export type TemplateStep = Schemas["TemplateStep"];
/** What `Template.build` sends to start a build: the base, the steps and the start command. */
export type TemplateBuildRequest = Schemas["TemplateBuildStartV2"];
/** One line of a build's log. */
export type BuildLogEntry = Schemas["BuildLogEntry"];
/** A template with its builds, newest first. */
export type TemplateInfo = Schemas["TemplateWithBuilds"];
/** A template as listed, with its latest successful build. */
export type ListedTemplate = Schemas["Template"];
/** A tag of a template and the build it points at. */
export type TemplateTag = Schemas["TemplateTag"];
/** Tags now pointing at a build, from `Template.assignTags`. */
export type AssignedTags = Schemas["AssignedTemplateTags"];

/** The image `Template` starts from unless told otherwise; the platform maps it to `base`. */
const DEFAULT_BASE_IMAGE = "e2bdev/base";

export interface TemplateOptions {
  /** Directory that `copy` sources are relative to; the working directory by default. */
  fileContextPath?: string;
}

export interface TemplateCopyOptions {
  /** Owner of the copied files (`user` or `user:group`); the step's user by default. */
  user?: string;
  /** Permission bits of copied files (for example `0o644`); their own by default. */
  mode?: number;
  /** Upload the files even when the platform already has them. */
  forceUpload?: boolean;
  /** Compress the upload (default true). */
  gzip?: boolean;
}

export interface TemplateBuildOptions extends ConnectionOptions {
  /** Template name, optionally `name:tag`; an existing template of that name gets a new build. */
  name: string;
  /** More tags to point at the new build (the build is tagged `default` when none is given). */
  tags?: string[];
  cpuCount?: number;
  memoryMB?: number;
  /**
   * Free disk space (MiB) every sandbox of the template must have at least, whatever its steps
   * wrote; a build asking for more than a sandbox's disk leaves free fails with
   * `InvalidArgumentError` naming the most.
   */
  minFreeDiskMb?: number;
  /** Rebuild every step, ignoring cached layers. */
  skipCache?: boolean;
  /** Called with each build log line as the build runs. */
  onBuildLogs?: (entry: BuildLogEntry) => void;
  /** How often to poll the build's status, in ms (default 200). */
  pollIntervalMs?: number;
  /** Give up waiting after this many ms with a `TimeoutError`; 0 (the default) waits for as long as it takes. */
  timeoutMs?: number;
}

/** The build `Template.build` made. */
export interface BuildInfo {
  templateId: string;
  buildId: string;
  /** The name the template was built under. */
  name: string;
  /** Tags pointing at the build. */
  tags: string[];
}

interface CopySource {
  src: string;
  dest: string;
  forceUpload: boolean;
  gzip: boolean;
}

interface Instruction {
  step: TemplateStep;
  copy?: CopySource;
}

/**
 * A template's build steps, in the spirit of the public e2b client's builder:
 *
 * ```ts
 * const template = new Template().fromTemplate("base").runCmd("pip install requests").copy("app", "/app");
 * await Template.build(template, { name: "my-app" });
 * ```
 */
/** A Dockerfile's FROM that is an image rather than a template of the platform. */
const DOCKERFILE_IMAGE = /^((docker\.io\/)?e2bdev\/base(:[\w.-]+)?|(oci|oci-archive|docker-archive):\/.*)$/;

export class Template {
  private baseImage: string | undefined = DEFAULT_BASE_IMAGE;
  private baseTemplate: string | undefined;
  private startCmd: string | undefined;
  private readyCmd: string | undefined;
  private force = false;
  private forceNextLayer = false;
  private readonly instructions: Instruction[] = [];
  private readonly fileContextPath: string;

  constructor(opts: TemplateOptions = {}) {
    this.fileContextPath = opts.fileContextPath ?? process.cwd();
  }

  /** Builds on another template: a name, `name:tag` or an ID. */
  fromTemplate(template: string): this {
    this.baseTemplate = template;
    this.baseImage = undefined;
    if (this.forceNextLayer) this.force = true;
    return this;
  }

  /**
   * Builds on an OCI image. The platform pulls from no registry: `e2bdev/base` is its `base`
   * template, other images come from its import directory (`oci:<dir>:<tag>`, ...).
   */
  fromImage(image: string): this {
    this.baseImage = image;
    this.baseTemplate = undefined;
    if (this.forceNextLayer) this.force = true;
    return this;
  }

  /** Builds on the platform's base image (the default). */
  fromBase(): this {
    return this.fromImage(DEFAULT_BASE_IMAGE);
  }

  /**
   * Takes the base and steps from a Dockerfile's text: FROM, RUN, COPY/ADD (with `--chown`), ENV,
   * ARG, WORKDIR, USER, and CMD/ENTRYPOINT as the start command. Like the e2b client, steps run as
   * root in `/` until the Dockerfile says otherwise, and the sandbox then runs as `user` in
   * `/home/user` unless it set its own USER and WORKDIR.
   */
  fromDockerfile(text: string, opts: { readyCmd?: string } = {}): this {
    const parsed = parseDockerfile(text);
    // images the platform builds from are e2b's base image and OCI layouts/archives; any other
    // FROM names a template of the platform (`base`, `my-team/tool:v2`)
    if (DOCKERFILE_IMAGE.test(parsed.from)) this.fromImage(parsed.from);
    else this.fromTemplate(parsed.from);
    this.setUser("root").setWorkdir("/");
    let userSet = false;
    let workdirSet = false;
    for (const step of parsed.steps) {
      if (step.kind === "RUN") this.runCmd(step.cmd);
      else if (step.kind === "COPY")
        for (const src of step.srcs) this.copy(src, step.dest, { user: step.user });
      else if (step.kind === "ENV") this.setEnvs(step.envs);
      else if (step.kind === "WORKDIR") {
        this.setWorkdir(step.dir);
        workdirSet = true;
      } else if (step.kind === "USER") {
        this.setUser(step.user);
        userSet = true;
      } else this.setStartCmd(step.cmd, opts.readyCmd);
    }
    if (!userSet) this.setUser("user");
    if (!workdirSet) this.setWorkdir("/home/user");
    return this;
  }

  private push(step: TemplateStep, copy?: CopySource): this {
    this.instructions.push({ step: { ...step, force: this.forceNextLayer }, copy });
    return this;
  }

  /** Runs a shell command (several are joined with `&&`), as `user` when given. */
  runCmd(cmd: string | string[], opts: { user?: string } = {}): this {
    const joined = Array.isArray(cmd) ? cmd.join(" && ") : cmd;
    if (!joined.trim()) throw new InvalidArgumentError("runCmd needs a command");
    return this.push({ type: "RUN", args: opts.user ? [joined, opts.user] : [joined] });
  }

  /** Copies files or directories from the context directory (relative paths, `*` and `?` allowed) to `dest`. */
  copy(src: string | string[], dest: string, opts: TemplateCopyOptions = {}): this {
    for (const one of Array.isArray(src) ? src : [src]) {
      const mode = opts.mode === undefined ? "" : opts.mode.toString(8).padStart(4, "0");
      this.push(
        { type: "COPY", args: [one, dest, opts.user ?? "", mode] },
        { src: one, dest, forceUpload: opts.forceUpload ?? false, gzip: opts.gzip ?? true },
      );
      if (opts.forceUpload) this.instructions.at(-1)!.step.force = true;
    }
    return this;
  }

  /** Sets environment variables for later steps and for the template's sandboxes. */
  setEnvs(envs: Record<string, string>): this {
    const args = Object.entries(envs).flat();
    return args.length === 0 ? this : this.push({ type: "ENV", args });
  }

  /** Working directory of later steps and of the template's sandboxes. */
  setWorkdir(dir: string): this {
    return this.push({ type: "WORKDIR", args: [dir] });
  }

  /** User of later steps and of the template's sandboxes (created when missing). */
  setUser(user: string): this {
    return this.push({ type: "USER", args: [user] });
  }

  /**
   * A command every sandbox of the template starts with (it is running in the snapshot), and
   * optionally one that exits 0 once it is ready.
   */
  setStartCmd(startCmd: string, readyCmd?: string): this {
    this.startCmd = startCmd;
    if (readyCmd !== undefined) this.readyCmd = readyCmd;
    return this;
  }

  setReadyCmd(readyCmd: string): this {
    this.readyCmd = readyCmd;
    return this;
  }

  /** Runs every step from here on (and the base, when set after this) without the layer cache. */
  skipCache(): this {
    this.forceNextLayer = true;
    return this;
  }

  /** The request that starts the build, with the content hash of each COPY step's files. */
  async toBuildRequest(): Promise<TemplateBuildRequest> {
    return (await this.prepare()).request;
  }

  /** Reads each COPY step's files once: the request carries their hashes, the build uploads them. */
  private async prepare(): Promise<{ request: TemplateBuildRequest; uploads: (CopySource & CopyFiles)[] }> {
    const uploads: (CopySource & CopyFiles)[] = [];
    const steps: TemplateStep[] = [];
    for (const { step, copy } of this.instructions) {
      if (!copy) {
        steps.push(step);
        continue;
      }
      const files = await readCopyFiles(this.fileContextPath, copy.src, copy.dest);
      uploads.push({ ...copy, ...files });
      steps.push({ ...step, filesHash: files.hash });
    }
    const request: TemplateBuildRequest = {
      ...(this.baseTemplate !== undefined ? { fromTemplate: this.baseTemplate } : {}),
      ...(this.baseImage !== undefined ? { fromImage: this.baseImage } : {}),
      steps,
      ...(this.startCmd !== undefined ? { startCmd: this.startCmd } : {}),
      ...(this.readyCmd !== undefined ? { readyCmd: this.readyCmd } : {}),
      force: this.force,
    };
    return { request, uploads };
  }

  /**
   * Builds the template and waits until it is ready: registers the build, uploads each COPY
   * step's files the platform does not have yet, starts it and follows its logs. Throws
   * `BuildError` with the platform's reason when the build fails.
   */
  static async build(template: Template, opts: TemplateBuildOptions): Promise<BuildInfo> {
    const conn = resolveConnection(opts);
    const api = platformClient(conn);
    const deadline = opts.timeoutMs ? Date.now() + opts.timeoutMs : undefined;
    const { request, uploads } = await template.prepare();
    if (opts.skipCache) request.force = true;
    const created = await unwrap(
      `Requesting a build of template '${opts.name}'`,
      api.POST("/v3/templates", {
        body: {
          name: opts.name,
          tags: opts.tags,
          cpuCount: opts.cpuCount,
          memoryMB: opts.memoryMB,
          minFreeDiskMb: opts.minFreeDiskMb,
        },
      }),
    );
    const { templateID, buildID } = created;

    const uploaded = new Set<string>();
    for (const files of uploads) {
      if (uploaded.has(files.hash)) continue;
      uploaded.add(files.hash);
      const link = await unwrap(
        `Getting an upload link for COPY ${files.src}`,
        api.GET("/templates/{templateID}/files/{hash}", {
          params: { path: { templateID, hash: files.hash } },
        }),
      );
      if (link.present && !files.forceUpload) continue;
      if (!link.url) throw new NotFoundError(`The platform gave no upload link for COPY ${files.src}`);
      await upload(
        conn,
        link.url,
        link.headers,
        await files.archive(files.gzip),
        `Uploading COPY ${files.src}`,
      );
    }

    await unwrap(
      `Starting build ${buildID} of template '${opts.name}'`,
      api.POST("/v2/templates/{templateID}/builds/{buildID}", {
        params: { path: { templateID, buildID } },
        body: request,
      }),
    );
    await followBuild(api, templateID, buildID, opts, deadline);
    return { templateId: templateID, buildId: buildID, name: opts.name, tags: created.tags };
  }

  /** A template (by ID or name) with all its builds, newest first. */
  static async get(templateId: string, opts: ConnectionOptions = {}): Promise<TemplateInfo> {
    const api = platformClient(resolveConnection(opts));
    let first: TemplateInfo | undefined;
    let nextToken: string | undefined;
    do {
      const page: TemplateInfo = await unwrap(
        `Getting template ${templateId}`,
        api.GET("/templates/{templateID}", {
          params: { path: { templateID: templateId }, query: { nextToken } },
        }),
      );
      if (first) first.builds.push(...page.builds);
      else first = page;
      nextToken = page.nextToken ?? undefined;
    } while (nextToken);
    first.nextToken = null;
    return first;
  }

  /** The team's templates (every page). */
  static list(opts: ConnectionOptions = {}): Promise<ListedTemplate[]> {
    const api = platformClient(resolveConnection(opts));
    return allPages("Listing templates", (nextToken) =>
      api.GET("/v2/templates", { params: { query: { nextToken } } }),
    );
  }

  /** Whether a template of this name exists (another team's private one counts). */
  static async exists(name: string, opts: ConnectionOptions = {}): Promise<boolean> {
    const api = platformClient(resolveConnection(opts));
    const result = await api
      .GET("/templates/aliases/{alias}", { params: { path: { alias: name } } })
      .catch((err: unknown) => {
        throw fromUnknown(err, `Looking up template '${name}'`);
      });
    if (result.response.status === 404) return false;
    if (result.response.status === 403) return true;
    if (!result.response.ok)
      throw fromHttpError(result.response.status, result.error, `Looking up template '${name}'`);
    return true;
  }

  /** Deletes a template (or snapshot) with its builds and tags; `false` when there was none. */
  static async delete(templateId: string, opts: ConnectionOptions = {}): Promise<boolean> {
    const api = platformClient(resolveConnection(opts));
    return found(
      unwrap(
        `Deleting template ${templateId}`,
        api.DELETE("/templates/{templateID}", { params: { path: { templateID: templateId } } }),
      ),
    );
  }

  /** Points `tags` at the build `target` (`name:tag`, or `name` for its `default` tag) points at. */
  static assignTags(
    target: string,
    tags: string | string[],
    opts: ConnectionOptions = {},
  ): Promise<AssignedTags> {
    const api = platformClient(resolveConnection(opts));
    return unwrap(
      `Assigning tags to ${target}`,
      api.POST("/templates/tags", { body: { target, tags: Array.isArray(tags) ? tags : [tags] } }),
    );
  }

  /** Removes tags from template `name`; its builds stay. */
  static async removeTags(
    name: string,
    tags: string | string[],
    opts: ConnectionOptions = {},
  ): Promise<void> {
    const api = platformClient(resolveConnection(opts));
    await unwrap(
      `Removing tags from ${name}`,
      api.DELETE("/templates/tags", { body: { name, tags: Array.isArray(tags) ? tags : [tags] } }),
    );
  }

  /** The tags of a template and the builds they point at. */
  static getTags(templateId: string, opts: ConnectionOptions = {}): Promise<TemplateTag[]> {
    const api = platformClient(resolveConnection(opts));
    return unwrap(
      `Listing tags of ${templateId}`,
      api.GET("/templates/{templateID}/tags", { params: { path: { templateID: templateId } } }),
    );
  }
}

/** PUTs an archive to the platform's self-authorising upload link (no API key goes with it). */
async function upload(
  conn: ResolvedConnection,
  url: string,
  headers: Record<string, string> | undefined,
  body: Uint8Array,
  context: string,
): Promise<void> {
  let res: Response;
  try {
    res = await (conn.fetch ?? globalThis.fetch)(url, { method: "PUT", body: body as BodyInit, headers });
  } catch (err) {
    throw fromUnknown(err, context);
  }
  if (res.ok) return;
  const text = await res.text().catch(() => "");
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {}
  throw fromHttpError(res.status, parsed, context);
}

/** Polls the build's status, passing on its logs, until it is ready (or throws on error). */
async function followBuild(
  api: PlatformClient,
  templateID: string,
  buildID: string,
  opts: TemplateBuildOptions,
  deadline: number | undefined,
): Promise<void> {
  let logsOffset = 0;
  const poll = async () => {
    const info = await unwrap(
      `Getting the status of build ${buildID}`,
      api.GET("/templates/{templateID}/builds/{buildID}/status", {
        params: { path: { templateID, buildID }, query: { logsOffset } },
      }),
    );
    logsOffset += info.logEntries.length;
    for (const entry of info.logEntries) opts.onBuildLogs?.(entry);
    return info;
  };
  for (;;) {
    const info = await poll();
    if (info.status !== "waiting" && info.status !== "building") {
      // The logs written before the end may not all have come yet: read on to an empty page.
      for (let tail = info; tail.logEntries.length > 0; ) tail = await poll();
      if (info.status === "ready") return;
      throw new BuildError(templateID, buildID, {
        message: info.reason?.message ?? `the build ended in status '${info.status}'`,
        ...(info.reason?.step ? { step: info.reason.step } : {}),
      });
    }
    if (deadline && Date.now() > deadline)
      throw new TimeoutError(
        `Build ${buildID} of template ${templateID} is still ${info.status} after ${opts.timeoutMs} ms. ` +
          "Raise timeoutMs; the build goes on and Template.get shows its status.",
      );
    await new Promise((resolve) => setTimeout(resolve, opts.pollIntervalMs ?? 200));
  }
}
