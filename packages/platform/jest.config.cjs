module.exports = require("../../jest.preset.cjs")(__dirname, {
  globalSetup: "<rootDir>/test/global-setup.ts",
  globalTeardown: "<rootDir>/test/global-teardown.ts",
});
