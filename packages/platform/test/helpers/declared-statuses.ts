import { openapiDocument } from "@x/platform-client";
import { OpenApiRouter } from "../../src/api/openapi.js";

const router = new OpenApiRouter(openapiDocument);

/**
 * Every answer of an operation the spec declares must carry a status the spec lists for it:
 * a status the handlers make up fails the test that saw it (the clients are generated from the
 * spec, so an undeclared status is one they cannot know). Paths outside the spec are left to
 * the tests that send them (they answer 404 or 405 by design).
 */
export function checkDeclared(method: string, path: string, status: number): void {
  const match = router.match(method, new URL(path, "http://x").pathname);
  if (!match || match === "method-not-allowed") return;
  const declared = [...match.op.validateResponse.keys()];
  if (!declared.includes(status)) {
    throw new Error(
      `${method} ${path} answered ${status}, which openapi.yaml does not declare for ${match.op.id} (${declared.join(", ")})`,
    );
  }
}
