import * as openapiFetch from "openapi-fetch";

type CreateClient = typeof openapiFetch.default;

/**
 * openapi-fetch's CommonJS build has no `__esModule` marker, so in our CommonJS output the
 * bundler's interop hands over its whole exports object as `default`: unwrap it once here.
 */
export const createFetchClient: CreateClient =
  typeof openapiFetch.default === "function"
    ? openapiFetch.default
    : (openapiFetch.default as unknown as { default: CreateClient }).default;
