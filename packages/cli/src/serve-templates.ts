import type { Platform } from "@x/platform";
import { asSystemTeam } from "./commands/template-install.js";
import type { Io } from "./output/io.js";
import { createProgress } from "./output/progress.js";
import { installShippedTemplate, loadShippedTemplate } from "./template/install.js";

/**
 * `x serve --templates`: each shipped template is built (again) at start through the platform's
 * own API, which costs seconds when its steps are cached and only rebuilds what changed, then
 * its warm pool is kept like base's. Progress goes to stderr; a failure is logged, and the
 * platform keeps serving (creates of that template say it is not installed).
 */
export async function keepShippedTemplates(
  platform: Platform,
  at: { apiUrl: string; proxyUrl: string },
  names: string[],
  io: Io,
): Promise<void> {
  for (const name of names) {
    const progress = createProgress(io);
    try {
      const t = await loadShippedTemplate(name);
      progress.status(`installing ${name}`);
      const result = await asSystemTeam(platform.store, at, (conn) =>
        installShippedTemplate(conn, t, progress),
      );
      progress.stop();
      io.err(`x: template ${name} is installed (build ${result.buildID})\n`);
      const template = await platform.store.templates.getTemplate(result.templateID);
      const build = await platform.store.templates.getBuild(result.buildID);
      if (template && build && platform.warmPool.enabled) platform.orchestrator.keepWarm(template, build);
    } catch (err) {
      progress.stop();
      io.err(`x: template ${name} could not be installed: ${(err as Error).message}\n`);
    }
  }
}
