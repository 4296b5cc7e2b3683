// Where the console's built files are, for the platform to serve under /console/.
const path = require("node:path");

module.exports = { distDir: path.join(__dirname, "dist") };
