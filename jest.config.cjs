// One jest run over every package: each package's own jest.config.cjs is a project.
const { readdirSync, existsSync } = require("node:fs");
const path = require("node:path");

const packages = path.join(__dirname, "packages");
module.exports = {
  projects: readdirSync(packages)
    .map((name) => path.join(packages, name, "jest.config.cjs"))
    .filter((file) => existsSync(file)),
};
