// Shared jest set-up: TypeScript through @swc/jest in CommonJS mode (no experimental VM
// modules), `.js` import suffixes stripped, and workspace packages resolved to their sources.
const path = require("node:path");

module.exports = (dir, overrides = {}) => ({
  displayName: path.basename(dir),
  rootDir: dir,
  testEnvironment: "node",
  testEnvironmentOptions: { customExportConditions: ["@x/source", "node", "require", "default"] },
  setupFilesAfterEnv: [path.join(__dirname, "jest.setup.cjs")],
  testMatch: ["<rootDir>/src/**/*.test.ts", "<rootDir>/test/**/*.test.ts"],
  transform: {
    "^.+\\.(t|j)sx?$": [
      require.resolve("@swc/jest"),
      {
        jsc: { parser: { syntax: "typescript" }, target: "es2022" },
        module: { type: "commonjs" },
      },
    ],
  },
  // ESM-only dependencies (chalk of the public e2b client, jose) are compiled to CommonJS too.
  transformIgnorePatterns: ["/node_modules/(?!(\\.pnpm/)?(e2b|@x|chalk|jose)[/+@])"],
  moduleNameMapper: { "^(\\.{1,2}/.*)\\.js$": "$1" },
  ...overrides,
});
