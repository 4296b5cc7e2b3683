export { presentKey } from "./api/routes/keys.js";
export { DEFAULTS, type PlatformConfig } from "./config.js";
export { ENVD_VERSION, PLATFORM_VERSION, type Platform, startPlatform } from "./platform.js";
export { type ApiKeyRow, openStore, type Store, type Team } from "./store/index.js";
export { defaultTeam } from "./teams.js";
