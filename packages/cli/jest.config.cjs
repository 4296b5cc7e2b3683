module.exports = require("../../jest.preset.cjs")(__dirname, {
  // The platform's set-up: the envd bundle sandboxes boot and the base image, built once.
  globalSetup: "<rootDir>/../platform/test/global-setup.ts",
});
