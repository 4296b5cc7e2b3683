export { DEFAULTS, type PlatformConfig } from "./config.js";
export { ENVD_VERSION, PLATFORM_VERSION, type Platform, startPlatform } from "./platform.js";
