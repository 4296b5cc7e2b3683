import { createEnvdClient } from "@x/envd-client";
import { createPlatformClient } from "@x/platform-client";

export const CODE_INTERPRETER = "code-interpreter-v1";

/** Creates a sandbox through the API, runs a command in it through the proxy, kills it. */
export async function demo(apiUrl: string, proxyUrl: string, apiKey: string): Promise<void> {
  const api = createPlatformClient({ baseUrl: apiUrl, apiKey });
  const started = performance.now();
  const { data: sandbox, error } = await api.POST("/v2/sandboxes", {
    body: { templateID: "base", timeout: 120 },
  });
  if (!sandbox) throw new Error(`demo: could not create a sandbox: ${error?.message}`);
  const created = performance.now();
  const envd = createEnvdClient({
    baseUrl: proxyUrl,
    sandboxId: sandbox.sandboxID,
    accessToken: sandbox.envdAccessToken,
  });
  let output = "";
  for await (const res of envd.process.start({
    process: {
      cmd: "/bin/bash",
      args: ["-l", "-c", 'echo "hello from $(hostname) as $(whoami), $(uname -sr)"'],
      envs: {},
    },
    stdin: false,
  })) {
    const event = res.event?.event;
    if (event?.case === "data" && event.value.output.case === "stdout")
      output += Buffer.from(event.value.output.value).toString();
  }
  const ran = performance.now();
  process.stdout.write(
    `demo: sandbox ${sandbox.sandboxID} created in ${Math.round(created - started)} ms; ` +
      `command ran in ${Math.round(ran - created)} ms:\n  ${output.trim()}\n`,
  );
  await api.DELETE("/sandboxes/{sandboxID}", { params: { path: { sandboxID: sandbox.sandboxID } } });
  process.stdout.write("demo: sandbox killed\n");
}

const QUICKSTART = `import { Sandbox } from '@e2b/code-interpreter'
const sbx = await Sandbox.create()
const execution = await sbx.runCode('print("hello world")')`;

/**
 * E2B's quickstart as @e2b/code-interpreter runs it: a code-interpreter-v1 sandbox, then its
 * code run through the proxy on port 49999, exactly the requests that package makes.
 */
export async function codeInterpreterDemo(apiUrl: string, proxyUrl: string, apiKey: string): Promise<void> {
  const api = createPlatformClient({ baseUrl: apiUrl, apiKey });
  const started = performance.now();
  const { data: sandbox, error } = await api.POST("/v2/sandboxes", {
    body: { templateID: CODE_INTERPRETER, timeout: 120 },
  });
  if (!sandbox) throw new Error(`demo: could not create a ${CODE_INTERPRETER} sandbox: ${error?.message}`);
  const created = performance.now();
  try {
    const res = await fetch(`${proxyUrl}/execute`, {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        "E2b-Sandbox-Id": sandbox.sandboxID,
        "E2b-Sandbox-Port": "49999",
        "X-Access-Token": sandbox.envdAccessToken ?? "",
      },
      body: JSON.stringify({ code: 'print("hello world")' }),
    });
    if (!res.ok) throw new Error(`demo: runCode answered ${res.status}: ${await res.text()}`);
    const stdout = (await res.text())
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { type: string; text?: string })
      .filter((m) => m.type === "stdout")
      .map((m) => m.text)
      .join("");
    process.stdout.write(
      `demo: E2B's quickstart, unchanged, against this platform:\n\n${QUICKSTART.replace(/^/gm, "  ")}\n\n` +
        `demo: ${CODE_INTERPRETER} sandbox ${sandbox.sandboxID} created in ${Math.round(created - started)} ms; ` +
        `runCode answered in ${Math.round(performance.now() - created)} ms: ${stdout.trim()}\n`,
    );
  } finally {
    await api.DELETE("/sandboxes/{sandboxID}", { params: { path: { sandboxID: sandbox.sandboxID } } });
  }
}
