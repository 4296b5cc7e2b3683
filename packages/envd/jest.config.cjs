module.exports = require("../../jest.preset.cjs")(__dirname, {
  testTimeout: 30000,
  globalSetup: "<rootDir>/test/global-setup.cjs",
});
