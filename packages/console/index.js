// Where the console's built files are, for the platform to serve under /console/.
import { fileURLToPath } from "node:url";

export const distDir = fileURLToPath(new URL("./dist", import.meta.url));
