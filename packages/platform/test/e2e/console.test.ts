/**
 * The web console in a real browser: Chromium from Debian driven by playwright-core against a
 * platform that serves the built console (`pnpm build`), as a person uses it: sign in, find the
 * templates shipped with the platform, watch a sandbox appear, open its terminal and run a
 * command, upload and edit a file, pause, resume, snapshot and kill, follow a build's log, make a key and a token, a volume, a webhook, and
 * `e2b auth login` through the console's page. Every result is checked through the API too;
 * a screenshot of each page is written (paths in the output). One runtime is enough here.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { launchChromium, screenshot } from "../helpers/browser.js";
import { CONSOLE_DIST_DIR, startTestPlatform, type TestPlatform } from "../helpers/platform.js";

const E2B_CLI = path.join(path.dirname(require.resolve("@e2b/cli/package.json")), "dist/index.js");

async function eventually(what: string, check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      if (await check()) return;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ""}`);
}

const describeWithConsole = existsSync(path.join(CONSOLE_DIST_DIR, "index.html")) ? describe : describe.skip;

describeWithConsole("the web console in Chromium", () => {
  let t: TestPlatform;
  let browser: Browser;
  let page: Page;
  let consoleUrl: string;
  const pageErrors: string[] = [];
  const made = {
    sandboxes: [] as string[],
    keys: [] as string[],
    tokens: [] as string[],
    templates: [] as string[],
    volumes: [] as string[],
    webhooks: [] as string[],
  };
  const children = new Set<ChildProcess>();

  /** The platform API with the first team's key: status and parsed body. */
  // biome-ignore lint/suspicious/noExplicitAny: tests read response bodies loosely
  async function api(route: string, init: RequestInit = {}): Promise<{ status: number; body: any }> {
    const res = await fetch(`${t.apiUrl}${route}`, {
      ...init,
      headers: { "X-API-Key": t.apiKey, "Content-Type": "application/json", ...init.headers },
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  }

  const at = (route: string) => `${consoleUrl}${route.replace(/^\//, "")}`;

  /** Signs in; the console lands on its list of sandboxes, or on the page the sign-in interrupted. */
  async function signIn(secret: string, landing = /\/console\/sandboxes$/): Promise<void> {
    await page.getByTestId("signin-key").fill(secret);
    await page.getByTestId("signin-submit").click();
    await page.waitForURL(landing);
  }

  beforeAll(async () => {
    // the webhook it registers points at 127.0.0.1, which an operator must allow
    t = await startTestPlatform({
      runtime: "runc",
      config: { consoleDir: CONSOLE_DIST_DIR, allowPrivateWebhooks: ["127.0.0.1"] },
    });
    consoleUrl = `${t.apiUrl}/console/`;
    browser = await launchChromium();
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    page = await context.newPage();
    page.setDefaultTimeout(20_000);
    page.on("pageerror", (err) => pageErrors.push(err.message));
    // the console is served under a Content-Security-Policy: nothing may break it
    page.on("console", (m) => {
      if (/Content.Security.Policy/i.test(m.text())) pageErrors.push(m.text());
    });
  });

  afterAll(async () => {
    for (const child of children) child.kill("SIGKILL");
    await browser?.close();
    if (t) {
      for (const id of made.sandboxes) await api(`/sandboxes/${id}`, { method: "DELETE" });
      for (const id of made.templates)
        await api(`/templates/${encodeURIComponent(id)}`, { method: "DELETE" });
      for (const id of made.keys) await api(`/api-keys/${id}`, { method: "DELETE" });
      for (const id of made.tokens) await api(`/access-tokens/${id}`, { method: "DELETE" });
      for (const id of made.volumes) await api(`/volumes/${id}`, { method: "DELETE" });
      for (const id of made.webhooks) await api(`/events/webhooks/${id}`, { method: "DELETE" });
      await t.stop();
    }
  });

  it("refuses a wrong key and signs in with a good one", async () => {
    await page.goto(at("sandboxes"));
    await page.waitForURL(/\/console\/signin/);
    await page.getByTestId("signin-key").fill(`e2b_${"0".repeat(40)}`);
    await page.getByTestId("signin-submit").click();
    await page.getByRole("alert").filter({ hasText: "Could not sign in" }).waitFor();
    expect(await page.getByRole("alert").textContent()).toMatch(/401/);
    await screenshot(page, "01-sign-in-refused");
    await signIn(t.apiKey);
    await page.getByRole("heading", { name: "Sandboxes" }).waitFor();
  });

  it("lists the platform's templates to a team with none of its own, marked as shipped, with their builds", async () => {
    // the team owns no template yet, and its sandboxes start from base
    expect((await api("/templates")).body).toEqual([]);
    const baseID = (await api("/templates/aliases/base")).body.templateID as string;
    const { builds } = (await api(`/templates/${baseID}`)).body as { builds: Array<{ buildID: string }> };
    await page.getByTestId("nav-templates").click();
    const row = page.getByTestId("template-row-base");
    await row.waitFor();
    expect(await row.textContent()).toContain("shipped");
    expect(await page.getByText("No templates yet").count()).toBe(0);
    // it may be used, not changed, from here
    expect(await row.getByRole("button", { name: /Delete/ }).count()).toBe(0);
    await row.getByRole("link", { name: "base", exact: true }).click();
    await page.waitForURL(new RegExp(`/console/templates/${baseID}$`));
    await page.getByTestId(`build-row-${builds[0]!.buildID}`).waitFor();
    expect(await page.getByTestId("template-not-owned").textContent()).toMatch(/^Shipped with the platform/);
    expect(await page.getByTestId("template-delete").count()).toBe(0);
    expect(await page.getByTestId("template-visibility").count()).toBe(0);
    await screenshot(page, "01b-templates-shipped");
    await page.getByTestId("nav-sandboxes").click();
    await page.getByRole("heading", { name: "Sandboxes" }).waitFor();
  });

  let sandboxID: string;

  it("shows a sandbox made elsewhere appear in the live list, with its runtime", async () => {
    const { body } = await api("/v2/sandboxes", {
      method: "POST",
      body: JSON.stringify({ templateID: "base", timeout: 600, metadata: { made: "api" } }),
    });
    sandboxID = body.sandboxID;
    made.sandboxes.push(sandboxID);
    const row = page.getByTestId(`sandbox-row-${sandboxID}`);
    await row.waitFor();
    expect(await row.textContent()).toContain("runc");
    // `/` focuses the filter; a filter that matches nothing empties the list
    await page.keyboard.press("/");
    await page.keyboard.type("no-such-template");
    await page.getByText("No sandbox matches these filters").waitFor();
    await page.getByTestId("filter-template").fill("");
    await row.waitFor();
    await screenshot(page, "02-sandboxes");
  });

  it("creates a sandbox from the list", async () => {
    await page.getByTestId("create-sandbox").click();
    await page.getByTestId("create-sandbox-template").fill("base");
    await page.getByTestId("create-sandbox-timeout").fill("600");
    await page.getByTestId("create-sandbox-submit").click();
    await page.waitForURL(/\/console\/sandboxes\/[^/]+$/, { timeout: 60_000 });
    const created = decodeURIComponent(new URL(page.url()).pathname.split("/").pop() as string);
    made.sandboxes.push(created);
    expect((await api(`/sandboxes/${created}`)).body.state).toBe("running");
    await screenshot(page, "03-sandbox-overview");
  });

  it("runs a command in the terminal", async () => {
    await page.goto(at(`sandboxes/${sandboxID}/terminal`));
    await page.getByTestId("terminal-status").filter({ hasText: "pid" }).waitFor();
    await page.getByTestId("terminal").click();
    await page.keyboard.type("echo console-$((40+2))\n");
    await eventually("the command's output", async () => {
      const text = (await page.getByTestId("terminal").textContent()) ?? "";
      if (text.includes("console-42")) return true;
      throw new Error(`the terminal shows ${JSON.stringify(text.trim())}`);
    });
    await screenshot(page, "04-terminal");
  });

  it("uploads, edits and watches files", async () => {
    const { body: detail } = await api(`/sandboxes/${sandboxID}`);
    // Node does not resolve *.localhost as browsers do: it names the sandbox in the proxy's headers
    const envdHeaders = { "X-Access-Token": detail.envdAccessToken, "E2b-Sandbox-Id": sandboxID };
    const readFile = async (file: string) => {
      const res = await fetch(`${t.proxyUrl}/files?path=${encodeURIComponent(file)}`, {
        headers: envdHeaders,
      });
      return res.ok ? res.text() : `(${res.status})`;
    };

    await page.getByTestId("tab-files").click();
    await page.getByTestId("watch-status").filter({ hasText: "live" }).waitFor();
    await page.getByTestId("file-upload").setInputFiles({
      name: "notes.txt",
      mimeType: "text/plain",
      buffer: Buffer.from("first line\n"),
    });
    await page.getByTestId("file-row-notes.txt").waitFor();
    expect(await readFile("/home/user/notes.txt")).toBe("first line\n");

    await page
      .getByTestId("file-row-notes.txt")
      .getByRole("button", { name: "notes.txt", exact: true })
      .click();
    const editor = page.getByTestId("file-editor");
    await editor.waitFor();
    expect(await editor.inputValue()).toBe("first line\n");
    await editor.fill("edited in the console\n");
    await page.keyboard.press("Control+s");
    await page.getByText("saved", { exact: true }).waitFor();
    expect(await readFile("/home/user/notes.txt")).toBe("edited in the console\n");
    await screenshot(page, "05-file-editor");
    await page.getByTestId("editor-close").click();

    // a file made behind the console's back appears through the watch, without a refresh
    const form = new FormData();
    form.append("file", new Blob(["from outside"]), "outside.txt");
    const res = await fetch(`${t.proxyUrl}/files?path=${encodeURIComponent("/home/user/outside.txt")}`, {
      method: "POST",
      headers: envdHeaders,
      body: form,
    });
    expect(res.status).toBe(200);
    await page.getByTestId("file-row-outside.txt").waitFor({ timeout: 5_000 });
    await screenshot(page, "06-files");
  });

  it("shows the sandbox's logs, lifecycle events and egress decisions", async () => {
    for (const tab of ["logs", "events", "network"]) {
      await page.goto(at(`sandboxes/${sandboxID}/${tab}`));
      await page.getByTestId(`tab-${tab}`).waitFor();
      await page.waitForLoadState("networkidle");
      await screenshot(page, `07-sandbox-${tab}`);
    }
    await page.goto(at(`sandboxes/${sandboxID}/events`));
    await page.getByText("created").first().waitFor();
  });

  it("sets the timeout, pauses, resumes and snapshots", async () => {
    await page.goto(at(`sandboxes/${sandboxID}`));
    await page.getByTestId("action-timeout").click();
    await page.getByTestId("timeout-seconds").fill("1200");
    await page.keyboard.press("Enter");
    await eventually("the new deadline", async () => {
      const { body } = await api(`/sandboxes/${sandboxID}`);
      return Date.parse(body.endAt) - Date.now() > 1000 * 1000;
    });

    await page.getByTestId("action-pause").click();
    await page.getByTestId("pause-confirm").click();
    await eventually(
      "the pause",
      async () => (await api(`/sandboxes/${sandboxID}`)).body.state === "paused",
      60_000,
    );
    await page.locator(".badge", { hasText: "paused" }).first().waitFor();
    await screenshot(page, "08-paused");

    await page.getByTestId("action-resume").click();
    await page.getByTestId("resume-confirm").click();
    await eventually(
      "the resume",
      async () => (await api(`/sandboxes/${sandboxID}`)).body.state === "running",
      60_000,
    );

    await page.getByTestId("action-snapshot").click();
    await page.getByTestId("snapshot-name").fill("console-snapshot");
    await page.getByTestId("snapshot-confirm").click();
    const result = page.getByTestId("snapshot-result");
    await result.waitFor({ timeout: 120_000 });
    const snapshotID = await result.getByRole("textbox", { name: "Snapshot ID" }).inputValue();
    made.templates.push(snapshotID);
    const { body: snapshots } = await api(`/snapshots?sandboxID=${sandboxID}`);
    expect(snapshots.map((s: { snapshotID: string }) => s.snapshotID)).toContain(snapshotID);
    await page.keyboard.press("Escape");
    await result.waitFor({ state: "hidden" });
    await page.goto(at("snapshots"));
    await page.getByText("console-snapshot").first().waitFor();
    await screenshot(page, "09-snapshots");
  });

  it("kills the sandbox after confirmation", async () => {
    await page.goto(at(`sandboxes/${sandboxID}`));
    await page.getByTestId("action-kill").click();
    // Escape cancels: the sandbox lives on
    await page.keyboard.press("Escape");
    expect((await api(`/sandboxes/${sandboxID}`)).status).toBe(200);
    await page.getByTestId("action-kill").click();
    await page.getByTestId("kill-dialog-confirm").click();
    await page.waitForURL(/\/console\/sandboxes$/);
    expect((await api(`/sandboxes/${sandboxID}`)).status).toBe(404);
  });

  it("follows a template build's log as it runs", async () => {
    const created = await api("/v3/templates", {
      method: "POST",
      body: JSON.stringify({ name: "console-build" }),
    });
    expect(created.status).toBe(202);
    const { templateID, buildID } = created.body;
    made.templates.push(templateID);
    const started = await api(`/v2/templates/${templateID}/builds/${buildID}`, {
      method: "POST",
      body: JSON.stringify({
        fromTemplate: "base",
        steps: [{ type: "RUN", args: ["echo first-step-output && sleep 3 && echo last-step-output"] }],
      }),
    });
    expect(started.status).toBe(202);
    await page.goto(at(`templates/${templateID}/builds/${buildID}`));
    const log = page.getByTestId("build-log");
    await log.getByText("first-step-output", { exact: true }).waitFor({ timeout: 60_000 });
    await screenshot(page, "10-build-running");
    await page
      .getByTestId("build-progress-label")
      .filter({ hasText: "Finished" })
      .waitFor({ timeout: 120_000 });
    await log.getByText("last-step-output", { exact: true }).waitFor();
    expect((await api(`/templates/${templateID}/builds/${buildID}/status`)).body.status).toBe("ready");
    await screenshot(page, "11-build-finished");
    await page.goto(at("templates"));
    await page.getByText("console-build").first().waitFor();
    await screenshot(page, "12-templates");
  });

  it("creates an API key shown once, and revokes it", async () => {
    await page.getByTestId("nav-team").click();
    await page.waitForLoadState("networkidle");
    await screenshot(page, "13-team");
    await page.getByTestId("tab-api-keys").click();
    await page.getByTestId("api-key-create").click();
    await page.getByTestId("api-key-name").fill("console e2e");
    await page.keyboard.press("Enter");
    const secret = await page.getByTestId("created-secret").inputValue();
    expect(secret).toMatch(/^e2b_[0-9a-f]{40}$/);
    await screenshot(page, "14-key-created");
    expect((await fetch(`${t.apiUrl}/teams`, { headers: { "X-API-Key": secret } })).status).toBe(200);
    const { body: keys } = await api("/api-keys");
    const created = keys.find(
      (k: { name: string; mask: { maskedValueSuffix: string } }) =>
        k.name === "console e2e" && secret.endsWith(k.mask.maskedValueSuffix),
    );
    expect(created).toBeDefined();
    made.keys.push(created.id);
    await page.getByRole("button", { name: "Done" }).click();

    await page.getByTestId(`api-key-revoke-${created.id}`).click();
    await page.getByTestId("api-key-revoke-dialog-confirm").click();
    await page.getByTestId(`api-key-row-${created.id}`).waitFor({ state: "detached" });
    expect((await fetch(`${t.apiUrl}/teams`, { headers: { "X-API-Key": secret } })).status).toBe(401);
  });

  it("signs in with an access token made in the console", async () => {
    await page.getByTestId("tab-access-tokens").click();
    await page.getByTestId("access-token-create").click();
    await page.getByTestId("access-token-name").fill("console e2e token");
    await page.getByTestId("access-token-create-submit").click();
    const token = await page.getByTestId("created-secret").inputValue();
    expect(token).toMatch(/^sk_e2b_[0-9a-f]{40}$/);
    const { body: tokens } = await api("/access-tokens");
    const created = tokens.find((tk: { name: string }) => tk.name === "console e2e token");
    expect(created).toBeDefined();
    made.tokens.push(created.id);
    await page.keyboard.press("Escape");

    await page.getByTestId("signout").click();
    await signIn(token);
    await page.getByTestId("nav-team").click();
    await page.getByTestId("tab-access-tokens").click();
    await page.getByTestId(`access-token-row-${created.id}`).getByText("this console").waitFor();
    await screenshot(page, "15-access-tokens");
    await page.getByTestId("signout").click();
    await signIn(t.apiKey);
  });

  it("creates a volume, uploads to it and deletes it", async () => {
    await page.getByTestId("nav-volumes").click();
    await page.getByTestId("create-volume").click();
    await page.getByTestId("volume-name").fill("console-data");
    await page.keyboard.press("Enter");
    await page.waitForURL(/\/console\/volumes\/[^/]+/, { timeout: 60_000 });
    const volumeID = decodeURIComponent(new URL(page.url()).pathname.split("/").pop() as string);
    made.volumes.push(volumeID);
    await page.getByTestId("file-upload").setInputFiles({
      name: "data.csv",
      mimeType: "text/csv",
      buffer: Buffer.from("a,b\n1,2\n"),
    });
    await page.getByTestId("file-row-data.csv").waitFor();
    await screenshot(page, "16-volume");
    const { body: volume } = await api(`/volumes/${volumeID}`);
    const res = await fetch(
      `${t.apiUrl}/volumecontent/${volumeID}/file?path=${encodeURIComponent("/data.csv")}`,
      {
        headers: { Authorization: `Bearer ${volume.token}` },
      },
    );
    expect(await res.text()).toBe("a,b\n1,2\n");

    await page.getByRole("button", { name: "Delete data.csv" }).click();
    await page.getByTestId("file-delete-dialog-confirm").click();
    await page.getByTestId("file-row-data.csv").waitFor({ state: "detached" });
    await page.getByTestId("volume-delete").click();
    await page.getByRole("button", { name: "Delete volume" }).click();
    await page.waitForURL(/\/console\/volumes$/);
    expect((await api(`/volumes/${volumeID}`)).status).toBe(404);
  });

  it("registers a webhook, shows its deliveries, and deletes it", async () => {
    await page.getByTestId("nav-team").click();
    await page.getByTestId("tab-webhooks").click();
    await page.getByTestId("webhook-create").click();
    const dialog = page.getByTestId("webhook-dialog");
    await dialog.getByLabel("Name").fill("console e2e");
    // nothing listens there: the deliveries fail, and the log says so
    await dialog.getByLabel("URL").fill("http://127.0.0.1:9/hook");
    await dialog.getByLabel("Signature secret").fill("s3cret");
    await page.getByTestId("webhook-submit").click();
    await dialog.waitFor({ state: "hidden" });
    const { body: hooks } = await api("/events/webhooks");
    const hook = hooks.find((h: { name: string }) => h.name === "console e2e");
    expect(hook).toBeDefined();
    made.webhooks.push(hook.id);

    const { body: sandbox } = await api("/v2/sandboxes", {
      method: "POST",
      body: JSON.stringify({ templateID: "base", timeout: 60 }),
    });
    made.sandboxes.push(sandbox.sandboxID);
    await page.getByTestId(`webhook-row-${hook.id}`).getByRole("link", { name: "Deliveries" }).click();
    await page.getByTestId("webhook-deliveries").getByText("created").first().waitFor({ timeout: 30_000 });
    await screenshot(page, "17-webhook-deliveries");

    await page.getByTestId("tab-webhooks").click();
    await page.getByRole("button", { name: "Edit console e2e" }).click();
    await dialog.getByLabel("Name").fill("console e2e renamed");
    await page.getByTestId("webhook-submit").click();
    await dialog.waitFor({ state: "hidden" });
    expect((await api(`/events/webhooks/${hook.id}`)).body.name).toBe("console e2e renamed");
    await page.getByRole("button", { name: "Delete console e2e renamed" }).click();
    await page.getByRole("button", { name: "Delete webhook" }).click();
    await page.getByTestId(`webhook-row-${hook.id}`).waitFor({ state: "detached" });
    expect((await api(`/events/webhooks/${hook.id}`)).status).toBe(404);
  });

  it("signs the unchanged e2b CLI in through its auth login page", async () => {
    const home = mkdtempSync(path.join(os.tmpdir(), "x-console-cli-"));
    try {
      const env = {
        // no xdg-open on an empty PATH: the CLI prints the page to open, which this test's browser does
        PATH: home,
        HOME: home,
        NO_UPDATE_NOTIFIER: "1",
        E2B_API_URL: t.apiUrl,
        E2B_SANDBOX_URL: t.proxyUrl,
        E2B_DOCS_BASE: `${t.apiUrl}/console`,
      };
      const login = spawn(process.execPath, [E2B_CLI, "auth", "login"], {
        env,
        stdio: ["ignore", "pipe", "pipe"],
      });
      children.add(login);
      let output = "";
      login.stdout?.setEncoding("utf8").on("data", (d: string) => {
        output += d;
      });
      login.stderr?.setEncoding("utf8").on("data", (d: string) => {
        output += d;
      });
      const ended = new Promise<number | null>((resolve) => login.on("close", resolve));
      let loginUrl = "";
      await eventually("the login page's address", async () => {
        loginUrl = /(http:\/\/\S+\/console\/api\/cli\?\S+)/.exec(output)?.[1] ?? "";
        return loginUrl !== "";
      });
      await page.goto(loginUrl);
      await page.getByTestId("cli-authorize").waitFor();
      await screenshot(page, "18-cli-login");
      await page.getByTestId("cli-authorize").click();
      await page.getByTestId("cli-login-done").waitFor();
      await screenshot(page, "19-cli-login-done");
      expect(await ended).toBe(0);
      expect(output).toMatch(/Logged in as .* with selected project Default team/);
      const config = JSON.parse(readFileSync(path.join(home, ".e2b", "config.json"), "utf8"));
      expect(config).toMatchObject({
        projectId: (await api("/teams")).body[0].teamID,
        projectApiKey: expect.stringMatching(/^e2b_/),
        oauth: { token_endpoint: `${t.apiUrl}/oauth/token`, client_id: "e2b-cli" },
      });
      // the key it was given works
      const listed = await fetch(`${t.apiUrl}/v2/sandboxes`, {
        headers: { "X-API-Key": config.projectApiKey },
      });
      expect(listed.status).toBe(200);

      // logout revokes the token and what was made for it
      const logout = spawn(process.execPath, [E2B_CLI, "auth", "logout"], { env, stdio: "ignore" });
      children.add(logout);
      expect(await new Promise((resolve) => logout.on("close", resolve))).toBe(0);
      const after = await fetch(`${t.apiUrl}/v2/sandboxes`, {
        headers: { "X-API-Key": config.projectApiKey },
      });
      expect(after.status).toBe(401);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  it("goes back to sign-in on a 401, and on sign-out, with no page or CSP errors", async () => {
    await page.goto(at("sandboxes"));
    await page.evaluate(() => {
      const session = JSON.parse(localStorage.getItem("x-console.session") as string);
      localStorage.setItem(
        "x-console.session",
        JSON.stringify({ ...session, secret: `e2b_${"f".repeat(40)}` }),
      );
    });
    await page.goto(at("templates"));
    await page.waitForURL(/\/console\/signin/);
    await page.getByText("refused the credential").waitFor();
    await signIn(t.apiKey, /\/console\/templates$/);
    await page.getByTestId("signout").click();
    await page.waitForURL(/\/console\/signin/);
    expect(await page.evaluate(() => localStorage.getItem("x-console.session"))).toBeNull();
    expect(pageErrors).toEqual([]);
  });
});
