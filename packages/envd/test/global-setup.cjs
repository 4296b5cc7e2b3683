// Tests drive the real bundle, so build it once before they run.
const { execFileSync } = require("node:child_process");
const path = require("node:path");

module.exports = async () => {
  execFileSync(process.execPath, [path.join(__dirname, "..", "scripts", "bundle.mjs")], { stdio: "inherit" });
};
