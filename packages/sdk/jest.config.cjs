module.exports = require("../../jest.preset.cjs")(__dirname, {
  // The platform's set-up: the envd bundle sandboxes boot and the base image, built once.
  globalSetup: "<rootDir>/../platform/test/global-setup.ts",
  // The examples (../../examples) import the SDK by name: give them its sources.
  moduleNameMapper: { "^@x/sdk$": "<rootDir>/src/index.ts", "^(\\.{1,2}/.*)\\.js$": "$1" },
});
