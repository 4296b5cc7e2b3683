// Emits an OpenAPI document as a TypeScript module, so servers validate against the very
// spec the clients are generated from. Usage: node spec-to-ts.mjs IN.yaml OUT.ts
import { readFileSync, writeFileSync } from "node:fs";
import { parse } from "yaml";

const [input, output] = process.argv.slice(2);
const doc = parse(readFileSync(input, "utf8"));
writeFileSync(
  output,
  `// @generated from ${input.replace(/^(\.\.\/)+/, "")} by scripts/spec-to-ts.mjs; do not edit.\n` +
    `export const openapiDocument: Record<string, unknown> = ${JSON.stringify(doc, null, 2)};\n`,
);
