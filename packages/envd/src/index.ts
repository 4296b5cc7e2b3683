export type { EnvdContext } from "./context.js";
export { EnvdServer, type EnvdServerOptions } from "./server.js";
export { ENVD_VERSION, type EnvdState } from "./state.js";
