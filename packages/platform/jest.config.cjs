module.exports = require("../../jest.preset.cjs")(__dirname, {
  testTimeout: 120000,
  globalSetup: "<rootDir>/test/global-setup.ts",
});
