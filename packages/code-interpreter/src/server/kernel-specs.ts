import path from "node:path";
import type { KernelSpec } from "./kernel-process.js";
import type { Language } from "./languages.js";

/** Where the interpreter's files are inside the sandbox (the bundle's own directory). */
export interface Layout {
  /** Directory of server.cjs, kernel bundles and python/. */
  home: string;
  node: string;
  python: string;
  java: string;
}

/**
 * The command that runs a context's kernel. Python and R are Jupyter kernels from Debian
 * (ipykernel, IRkernel) behind the bridge; JavaScript, TypeScript and bash are this package's
 * own kernels; Java is a JShell of this package's own.
 */
export function kernelSpec(
  language: Language,
  cwd: string,
  env: NodeJS.ProcessEnv,
  layout: Layout,
): KernelSpec {
  const bridge = (kernel: string, ...args: string[]): KernelSpec => ({
    argv: [layout.python, path.join(layout.home, "python", "jupyter_bridge.py"), kernel, ...args],
    cwd,
    env: { ...env, PYTHONPATH: joinPath(path.join(layout.home, "python"), env.PYTHONPATH) },
    startTimeoutMs: 120_000,
  });
  switch (language) {
    case "python":
      return bridge(
        "python3",
        "--InteractiveShell.colors=NoColor",
        "--InteractiveShellApp.exec_lines=__import__('x_display').install()",
      );
    case "r":
      return bridge("ir");
    case "javascript":
    case "typescript":
      return {
        argv: [
          layout.node,
          path.join(layout.home, "javascript-kernel.cjs"),
          ...(language === "typescript" ? ["--typescript"] : []),
        ],
        cwd,
        env,
        interruptBySignal: true,
      };
    case "bash":
      return { argv: [layout.node, path.join(layout.home, "bash-kernel.cjs")], cwd, env };
    case "java":
      return {
        argv: [
          layout.java,
          "-Xshare:auto",
          "-XX:TieredStopAtLevel=1",
          "-cp",
          path.join(layout.home, "java"),
          "JShellKernel",
        ],
        cwd,
        env,
        startTimeoutMs: 120_000,
        events: "stdout",
      };
  }
}

function joinPath(first: string, rest: string | undefined): string {
  return rest ? `${first}:${rest}` : first;
}
