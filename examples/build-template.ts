/** Builds a template with a COPY, a RUN and an ENV step, starts a sandbox from it, then deletes it. */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Sandbox, Template } from "@x/sdk";
import type { ExampleOptions } from "./shared.js";

export async function main(options: ExampleOptions & { name?: string } = {}): Promise<string> {
  const log = options.log ?? console.log;
  const name = options.name ?? "example-greeter";
  // The files COPY steps take come from a context directory (here a fresh one).
  const context = await mkdtemp(path.join(os.tmpdir(), "example-template-"));
  try {
    await writeFile(
      path.join(context, "greet.py"),
      "import os\nprint(f\"{os.environ['GREETING']}, world\")\n",
    );
    const template = new Template({ fileContextPath: context })
      .fromTemplate("base")
      .copy("greet.py", "/opt/greeter/greet.py")
      .setEnvs({ GREETING: "Hello" })
      .runCmd("python3 /opt/greeter/greet.py > /opt/greeter/built.txt", { user: "root" });
    const built = await Template.build(template, {
      ...options,
      name,
      onBuildLogs: (entry) => log(`build: ${entry.message}`),
    });
    log(`built template ${built.templateId} (build ${built.buildId})`);

    const sandbox = await Sandbox.create({ ...options, template: name, timeoutMs: 60_000 });
    try {
      const result = await sandbox.commands.run(
        "cat /opt/greeter/built.txt && python3 /opt/greeter/greet.py",
      );
      log(result.stdout.trim());
      return result.stdout;
    } finally {
      await sandbox.kill();
      await Template.delete(built.templateId, options);
    }
  } finally {
    await rm(context, { recursive: true, force: true });
  }
}
