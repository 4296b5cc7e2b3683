#!/usr/bin/env node
import { main } from "../dist/index.js";

// The exit is explicit: a command that has returned (or failed) is done, whatever a library
// may still hold open.
main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`x: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
