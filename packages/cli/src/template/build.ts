import { Template } from "@x/sdk";
import { type Connection, sdkOptions } from "../connection.js";
import type { Progress } from "../output/progress.js";

export interface BuildOptions {
  name: string;
  /** The Dockerfile-like build file's text. */
  dockerfile: string;
  /** Directory COPY sources are relative to. */
  context: string;
  cpuCount?: number;
  memoryMB?: number;
  readyCmd?: string;
  /** Ignore the layer cache. */
  skipCache?: boolean;
}

export interface BuildResult {
  templateID: string;
  buildID: string;
  name: string;
  tags: string[];
  status: "ready";
}

/**
 * Builds with the SDK's `Template`: the files of COPY steps are uploaded when the platform lacks
 * them, and the build's log lines are shown as they come.
 */
export async function buildTemplate(
  conn: Connection,
  o: BuildOptions,
  progress: Progress,
): Promise<BuildResult> {
  const template = new Template({ fileContextPath: o.context }).fromDockerfile(
    o.dockerfile,
    o.readyCmd ? { readyCmd: o.readyCmd } : {},
  );
  progress.status(`uploading files and requesting a build of ${o.name}`);
  const info = await Template.build(template, {
    ...sdkOptions(conn),
    name: o.name,
    ...(o.cpuCount ? { cpuCount: o.cpuCount } : {}),
    ...(o.memoryMB ? { memoryMB: o.memoryMB } : {}),
    ...(o.skipCache ? { skipCache: true } : {}),
    onBuildLogs: (entry) => {
      progress.log(entry.message);
      // steps announce themselves as "[3/11] RUN …": a bar of steps where the count is known
      const step = /^\[(\d+)\/(\d+)\]/.exec(entry.message);
      if (step) progress.advance(`building ${o.name}`, Number(step[1]) - 1, Number(step[2]), entry.message);
      else progress.status(`building ${o.name}`, entry.step ? `step ${entry.step}` : undefined);
    },
  });
  return {
    templateID: info.templateId,
    buildID: info.buildId,
    name: info.name,
    tags: info.tags,
    status: "ready",
  };
}
