import { createRequire } from "node:module";
import path from "node:path";
import { inspect } from "node:util";
import vm from "node:vm";
import * as acorn from "acorn";
import { transform } from "sucrase";
import { emit, onRequests, serially } from "./channel.js";

/**
 * The JavaScript and TypeScript kernel: cells run in this process's own realm, so what one cell
 * declares the next one sees, as in a REPL. ES `import`s become `require`s and TypeScript's types
 * are stripped (sucrase); a cell with a top-level `await` runs in an async function whose
 * declarations are hoisted to the realm. The last expression's value is the cell's result.
 */

const typescript = process.argv.includes("--typescript");
let count = 0;
/** The cell running asynchronously, for an interrupt to end. */
let abortRunning: ((err: Error) => void) | undefined;

class Interrupted extends Error {
  constructor() {
    super("Script execution was interrupted");
    this.name = "KeyboardInterrupt";
  }
}

// a SIGINT outside a synchronous cell ends an asynchronous one instead of the kernel
process.on("SIGINT", () => abortRunning?.(new Interrupted()));

const cellModule = { exports: {} };
Object.assign(globalThis, {
  require: createRequire(path.join(process.cwd(), "__cell__.js")),
  module: cellModule,
  exports: cellModule.exports,
  __filename: path.join(process.cwd(), "__cell__.js"),
  __dirname: process.cwd(),
});

/** Names a declaration binds, destructuring included. */
function boundNames(node: acorn.Pattern | null, out: string[]): void {
  if (!node) return;
  switch (node.type) {
    case "Identifier":
      out.push(node.name);
      break;
    case "ObjectPattern":
      for (const p of node.properties) boundNames(p.type === "RestElement" ? p.argument : p.value, out);
      break;
    case "ArrayPattern":
      for (const e of node.elements) boundNames(e, out);
      break;
    case "RestElement":
      boundNames(node.argument, out);
      break;
    case "AssignmentPattern":
      boundNames(node.left, out);
      break;
  }
}

/** A cell as something to run: plain script text, or an async body with its hoisted names. */
function compile(source: string): { script: string } | { prelude: string; body: string } {
  let code = source;
  if (typescript || /\bimport\b|\bexport\b/.test(code)) {
    code = transform(code, {
      transforms: typescript ? ["typescript", "imports"] : ["imports"],
      disableESTransforms: true,
      production: true,
    }).code;
  }
  let ast: acorn.Program;
  try {
    ast = acorn.parse(code, {
      ecmaVersion: "latest",
      sourceType: "script",
    });
    return { script: code };
  } catch {
    // only a top-level await makes a cell a script cannot be; anything else fails as the script
    try {
      ast = acorn.parse(code, {
        ecmaVersion: "latest",
        sourceType: "script",
        allowAwaitOutsideFunction: true,
      });
    } catch {
      return { script: code };
    }
  }
  const hoisted: string[] = [];
  const edits: { start: number; end: number; text: string }[] = [];
  ast.body.forEach((node, i) => {
    const last = i === ast.body.length - 1;
    if (node.type === "VariableDeclaration") {
      const names: string[] = [];
      for (const d of node.declarations) boundNames(d.id, names);
      hoisted.push(...names);
      const parts = node.declarations
        .filter((d) => d.init)
        .map((d) => `(${code.slice(d.id.start, d.id.end)} = ${code.slice(d.init!.start, d.init!.end)})`);
      edits.push({
        start: node.start,
        end: node.end,
        text: parts.length ? `void (${parts.join(", ")});` : ";",
      });
    } else if ((node.type === "FunctionDeclaration" || node.type === "ClassDeclaration") && node.id) {
      hoisted.push(node.id.name);
      edits.push({
        start: node.start,
        end: node.end,
        text: `${node.id.name} = ${code.slice(node.start, node.end)};`,
      });
    } else if (last && node.type === "ExpressionStatement") {
      edits.push({
        start: node.start,
        end: node.end,
        text: `return (${code.slice(node.expression.start, node.expression.end)});`,
      });
    }
  });
  let body = code;
  for (const e of edits.sort((a, b) => b.start - a.start))
    body = body.slice(0, e.start) + e.text + body.slice(e.end);
  return { prelude: hoisted.length ? `var ${[...new Set(hoisted)].join(", ")};` : "", body };
}

function display(value: unknown): void {
  if (value === undefined) return;
  emit({
    ev: "result",
    id: current,
    main: true,
    data: { "text/plain": inspect(value, { colors: false, depth: 4 }) },
  });
}

let current = "";

function report(err: unknown): void {
  const e = err instanceof Error ? err : new Error(String(err));
  emit({
    ev: "error",
    id: current,
    name: e.name,
    value: e.message,
    traceback: (e.stack ?? `${e.name}: ${e.message}`).split("\n"),
  });
}

async function run(code: string, silent: boolean): Promise<void> {
  if (!silent) emit({ ev: "count", id: current, n: ++count });
  let value: unknown;
  try {
    const cell = compile(code);
    if ("script" in cell) {
      value = new vm.Script(cell.script, { filename: `cell${count}.js` }).runInThisContext({
        breakOnSigint: true,
        displayErrors: false,
      });
    } else {
      if (cell.prelude) vm.runInThisContext(cell.prelude);
      const body = new vm.Script(`(async () => {\n${cell.body}\n})()`, { filename: `cell${count}.js` });
      const promise = body.runInThisContext({
        breakOnSigint: true,
        displayErrors: false,
      }) as Promise<unknown>;
      value = await new Promise((resolve, reject) => {
        abortRunning = reject;
        promise.then(resolve, reject);
      });
    }
  } catch (err) {
    if (err instanceof Error && /Script execution was interrupted/.test(err.message))
      report(new Interrupted());
    else report(err);
    return;
  } finally {
    abortRunning = undefined;
  }
  if (!silent) display(value);
}

const execute = serially(async (req) => {
  current = req.id;
  await run(req.code, !!req.silent);
  // what the cell printed through the streams' buffers goes before the end markers
  await new Promise<void>((resolve) =>
    process.stdout.write("", () => process.stderr.write("", () => resolve())),
  );
});

onRequests((req) => {
  if (req.op === "execute") execute(req);
  else if (req.op === "interrupt") abortRunning?.(new Interrupted());
  else if (req.op === "shutdown") process.exit(0);
});
emit({ ev: "ready" });
