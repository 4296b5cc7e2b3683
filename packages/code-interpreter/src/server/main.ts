import path from "node:path";
import { Contexts } from "./contexts.js";
import { createInterpreterServer } from "./http.js";

/**
 * The code interpreter of `code-interpreter-v1` sandboxes: @e2b/code-interpreter's wire on port
 * 49999. Started by the template's start command; the default python and javascript contexts
 * start with it, and /health answers once they are up (the template's ready command).
 */
const port = Number(process.env.X_CODE_INTERPRETER_PORT ?? 49999);
const home = __dirname;
const contexts = new Contexts({
  layout: {
    home,
    node: process.execPath,
    python: process.env.X_CODE_INTERPRETER_PYTHON ?? "python3",
    java: process.env.X_CODE_INTERPRETER_JAVA ?? "java",
  },
  env: { ...process.env, PYTHONUNBUFFERED: "1" },
  envdUrl: process.env.X_ENVD_URL ?? "http://localhost:49983",
  cwd: process.env.X_CODE_INTERPRETER_CWD ?? "/home/user",
});
let ready = false;
const server = createInterpreterServer({ contexts, ready: () => ready });
server.keepAliveTimeout = 640_000;
server.listen(port, "0.0.0.0", () => {
  process.stderr.write(`code interpreter listening on :${port} (${path.basename(home)})\n`);
});
Promise.all(
  (["python", "javascript"] as const).map(async (language) => (await contexts.default(language)).warmUp()),
).then(
  () => {
    ready = true;
    process.stderr.write("code interpreter: default contexts ready\n");
  },
  (err: unknown) => {
    process.stderr.write(`code interpreter: a default context failed to start: ${String(err)}\n`);
    process.exit(1);
  },
);
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.on(signal, () => {
    server.close();
    contexts.closeAll().finally(() => process.exit(0));
  });
}
