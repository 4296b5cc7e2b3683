module.exports = require("../../jest.preset.cjs")(__dirname, { testTimeout: 300000 });
