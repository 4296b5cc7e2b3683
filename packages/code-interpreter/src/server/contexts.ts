import { randomUUID } from "node:crypto";
import { sandboxEnvs } from "./envs.js";
import { type ExecutionEvent, KernelProcess } from "./kernel-process.js";
import { kernelSpec, type Layout } from "./kernel-specs.js";
import { envCode, type Language, NOTHING } from "./languages.js";

export interface ContextInfo {
  id: string;
  language: Language;
  cwd: string;
}

export class ContextNotFound extends Error {
  constructor(readonly id: string) {
    super(`Context ${id} not found`);
  }
}

export interface ExecuteOptions {
  envVars?: Record<string, string>;
  /** envd's access token, for the sandbox's environment variables. */
  accessToken?: string;
  signal: AbortSignal;
  onEvent: (e: ExecutionEvent) => void;
}

/** One kernel with its language and working directory; runs one execution at a time. */
export class Context {
  readonly id = randomUUID();
  private kernel: KernelProcess | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  /** The sandbox's variables as last given to this kernel; undefined until its first execution. */
  private sandboxVars: Record<string, string> | undefined;

  constructor(
    readonly language: Language,
    readonly cwd: string,
    private readonly o: { layout: Layout; env: NodeJS.ProcessEnv; envdUrl: string },
  ) {}

  get info(): ContextInfo {
    return { id: this.id, language: this.language, cwd: this.cwd };
  }

  async start(): Promise<void> {
    const kernel = new KernelProcess(kernelSpec(this.language, this.cwd, this.o.env, this.o.layout));
    await kernel.start();
    this.kernel = kernel;
    this.sandboxVars = undefined;
  }

  /**
   * Runs nothing, silently: a kernel's first execution pays for what it loads on first use
   * (IPython's compiler and history, V8's first compile), which a user's first run then does not.
   */
  warmUp(): Promise<void> {
    return this.exclusive(async () => {
      const kernel = await this.liveKernel();
      await kernel.execute(NOTHING[this.language], { silent: true }, () => undefined);
    });
  }

  /** A fresh kernel under the same id: state gone, variables given again on the next execution. */
  restart(): Promise<void> {
    return this.exclusive(async () => {
      await this.kernel?.close();
      await this.start();
    });
  }

  close(): Promise<void> {
    return this.kernel?.close() ?? Promise.resolve();
  }

  /**
   * Runs `code` after any earlier execution of this context. Environment variables of the call
   * are set for it alone, and put back (to the sandbox's value or unset) afterwards, each by a
   * silent execution that neither counts nor shows. A client that goes away interrupts the cell.
   */
  execute(code: string, o: ExecuteOptions): Promise<void> {
    return this.exclusive(async () => {
      if (o.signal.aborted) return;
      const kernel = await this.liveKernel();
      const quiet = (text: string) =>
        text ? kernel.execute(text, { silent: true }, () => undefined) : Promise.resolve();
      if (!this.sandboxVars) {
        this.sandboxVars = await sandboxEnvs(this.o.envdUrl, o.accessToken).catch(() => ({}));
        await quiet(envCode(this.language, this.sandboxVars));
      }
      const callVars = o.envVars ?? {};
      await quiet(envCode(this.language, callVars));
      const interrupt = () => kernel.interrupt();
      o.signal.addEventListener("abort", interrupt, { once: true });
      try {
        await kernel.execute(code, {}, o.onEvent);
      } finally {
        o.signal.removeEventListener("abort", interrupt);
        const restore = Object.fromEntries(Object.keys(callVars).map((k) => [k, this.sandboxVars?.[k]]));
        if (kernel.alive) await quiet(envCode(this.language, restore)).catch(() => undefined);
      }
    });
  }

  /** The kernel, started again when it died (its state is gone either way). */
  private async liveKernel(): Promise<KernelProcess> {
    if (!this.kernel?.alive) await this.start();
    return this.kernel!;
  }

  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn, fn);
    this.queue = run.catch(() => undefined);
    return run;
  }
}

/** Every context of the sandbox, with the default one per language. */
export class Contexts {
  private readonly byId = new Map<string, Context>();
  private readonly defaults = new Map<Language, Promise<Context>>();

  constructor(private readonly o: { layout: Layout; env: NodeJS.ProcessEnv; envdUrl: string; cwd: string }) {}

  async create(language: Language, cwd?: string): Promise<Context> {
    const ctx = new Context(language, cwd || this.o.cwd, this.o);
    await ctx.start();
    this.byId.set(ctx.id, ctx);
    return ctx;
  }

  /** The language's default context, made on first use. */
  default(language: Language): Promise<Context> {
    let ctx = this.defaults.get(language);
    if (!ctx) {
      ctx = this.create(language);
      this.defaults.set(language, ctx);
      ctx.catch(() => this.defaults.delete(language));
    }
    return ctx;
  }

  get(id: string): Context {
    const ctx = this.byId.get(id);
    if (!ctx) throw new ContextNotFound(id);
    return ctx;
  }

  list(): ContextInfo[] {
    return [...this.byId.values()].map((c) => c.info);
  }

  async remove(id: string): Promise<void> {
    const ctx = this.get(id);
    this.byId.delete(id);
    for (const [language, p] of this.defaults) {
      if ((await p.catch(() => undefined)) === ctx) this.defaults.delete(language);
    }
    await ctx.close();
  }

  async closeAll(): Promise<void> {
    await Promise.all([...this.byId.values()].map((c) => c.close()));
  }
}
