/** The platform's version, as `GET /health` and the console say it. */
export const PLATFORM_VERSION = "0.1.0";
