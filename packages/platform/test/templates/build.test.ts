/**
 * Template builds through the public e2b client's `Template` builder, unchanged: every step
 * kind, the start command, layer reuse on an unchanged rebuild, skipCache.
 */
import { randomBytes } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { Sandbox, Template, waitForURL } from "e2b";
import { startTemplatePlatform, type TemplatePlatform } from "./support.js";

describe.each(["runc", "runsc"] as const)("template builds on %s", (runtime) => {
  let p: TemplatePlatform;
  const sandboxes: Sandbox[] = [];

  beforeAll(async () => {
    p = await startTemplatePlatform(runtime);
    p.useClient();
  });

  afterEach(async () => {
    await Promise.all(sandboxes.splice(0).map((s) => s.kill().catch(() => undefined)));
  });

  afterAll(async () => {
    await p.stop();
  });

  it("builds every step kind and reuses every layer on an unchanged rebuild", async () => {
    const context = p.scratch();
    writeFileSync(path.join(context, "hello.txt"), "hello from copy\n");
    mkdirSync(path.join(context, "app", "sub"), { recursive: true });
    writeFileSync(path.join(context, "app", "a.txt"), "a\n");
    writeFileSync(path.join(context, "app", "sub", "b.txt"), "b\n");
    // a fresh marker per run: the first build can never find its layers cached
    const nonce = randomBytes(6).toString("hex");
    const template = Template({ fileContextPath: context })
      .fromTemplate("base")
      .runCmd(`echo ${nonce} >> /home/user/runs.log`)
      .runCmd("mkdir -p /opt/app && chown user:user /opt/app && echo root-made > /etc/root-made", {
        user: "root",
      })
      .copy("hello.txt", "/opt/app/hello.txt", { mode: 0o600 })
      .copy("app", "/opt/app/tree", { user: "root" })
      .setEnvs({ GREETING: "hi there", STAGE: "test" })
      .setWorkdir("/opt/app/work")
      .runCmd("echo $GREETING > greeting.txt && pwd > pwd.txt")
      .setUser("builder")
      .runCmd("whoami > ~/whoami.txt")
      .setUser("user")
      .setStartCmd(
        "python3 -m http.server 8080 --directory /opt/app",
        waitForURL("http://localhost:8080/hello.txt"),
      );
    const alias = `all-steps-${runtime}`;
    const logs: string[] = [];

    let started = Date.now();
    const first = await Template.build(template, alias, { onBuildLogs: (e) => logs.push(e.message) });
    const firstMs = Date.now() - started;
    expect(first.templateId).toBeTruthy();
    expect(logs.join("\n")).toContain(`RUN echo ${nonce}`);

    const sandbox = await Sandbox.create(alias);
    sandboxes.push(sandbox);
    const run = async (cmd: string, user?: "root" | "user") =>
      (await sandbox.commands.run(cmd, { user })).stdout.trim();
    expect(await run("cat /home/user/runs.log")).toBe(nonce);
    expect(await run("cat /etc/root-made")).toBe("root-made");
    expect(await run("stat -c '%U %a' /opt/app/hello.txt && cat /opt/app/hello.txt")).toBe(
      "user 600\nhello from copy",
    );
    expect(
      await run("stat -c '%U' /opt/app/tree/a.txt /opt/app/tree/sub/b.txt && cat /opt/app/tree/sub/b.txt"),
    ).toBe("root\nroot\nb");
    expect(await run("echo $GREETING/$STAGE")).toBe("hi there/test");
    expect(await run("pwd")).toBe("/opt/app/work");
    expect(await run("cat greeting.txt pwd.txt")).toBe("hi there\n/opt/app/work");
    expect(await run("cat /home/builder/whoami.txt && stat -c %U /home/builder")).toBe("builder\nbuilder");
    expect(await run("whoami")).toBe("user");
    // the start command runs in every sandbox of the template, and was ready before create returned
    expect(await run("curl -s http://localhost:8080/hello.txt")).toBe("hello from copy");

    logs.length = 0;
    started = Date.now();
    const second = await Template.build(template, alias, { onBuildLogs: (e) => logs.push(e.message) });
    const rebuildMs = Date.now() - started;
    expect(second.templateId).toBe(first.templateId);
    const stepLines = logs.filter((l) => /^\[\d+\/\d+\] /.test(l));
    expect(stepLines.length).toBe(10);
    const layerSteps = stepLines.filter((l) => !/\] ENV /.test(l));
    expect(layerSteps.every((l) => l.endsWith("(cached)"))).toBe(true);
    process.stderr.write(`${runtime}: first build ${firstMs} ms, unchanged rebuild ${rebuildMs} ms\n`);
    expect(rebuildMs).toBeLessThan(firstMs);

    const again = await Sandbox.create(alias);
    sandboxes.push(again);
    // the RUN step that appends did not run a second time
    expect((await again.commands.run("cat /home/user/runs.log")).stdout.trim()).toBe(nonce);
  });

  it("reruns cached steps with skipCache", async () => {
    const template = Template().fromTemplate("base").runCmd("date +%s%N >> /home/user/stamp");
    const alias = `skip-cache-${runtime}`;
    await Template.build(template, alias);
    const logs: string[] = [];
    await Template.build(template, alias, { onBuildLogs: (e) => logs.push(e.message) });
    expect(logs.filter((l) => l.startsWith("[1/1] RUN"))).toEqual([
      "[1/1] RUN date +%s%N >> /home/user/stamp (cached)",
    ]);
    logs.length = 0;
    await Template.build(template, alias, { skipCache: true, onBuildLogs: (e) => logs.push(e.message) });
    expect(logs.filter((l) => l.startsWith("[1/1] RUN"))).toEqual([
      "[1/1] RUN date +%s%N >> /home/user/stamp",
    ]);
  });
});
