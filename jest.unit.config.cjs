// The fast tier (`pnpm test:unit`): every test that needs no root, no sandbox and no database
// server, in seconds. Each package's own project, with only its unit tests and without its
// global set-up (which builds envd's bundle and the base image for the real-sandbox suites).
const base = require("./jest.config.cjs");

/**
 * Unit tests live beside the code (`src/**\/*.test.ts`). These few in `test/` need nothing
 * either (they read files, or talk to an in-process server), so the fast tier runs them too.
 */
const UNIT_TESTS_IN_TEST_DIRS = [
  "test/architecture/import-graph.test.ts",
  "test/wire.test.ts",
  "test/client.test.ts",
  "test/fast-base64.test.ts",
  "test/output-log.test.ts",
  // the API's limits over an orchestrator on a fake host (it imports the composition root)
  "test/team-limits.test.ts",
  // the CLI's usage mistakes exit 2, before any store or platform is touched
  "test/usage.test.ts",
];

/** Tests beside the code that still need root, left to `pnpm test`, each with why. */
const NEED_ROOT = [
  // layers with files of other owners and device nodes (chown, mknod)
  "/src/cluster/layer-transfer.test.ts",
];

module.exports = {
  projects: base.projects.map((file) => {
    const { globalSetup, globalTeardown, ...project } = require(file);
    return {
      ...project,
      testPathIgnorePatterns: ["/node_modules/", ...NEED_ROOT],
      testMatch: ["<rootDir>/src/**/*.test.ts", ...UNIT_TESTS_IN_TEST_DIRS.map((t) => `<rootDir>/${t}`)],
    };
  }),
};
