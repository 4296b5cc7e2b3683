/**
 * The api's routing table against the spec itself: every operation routed (tsc checks the
 * keys; this checks the spec has no operation tsc cannot see), each by a path parameter the
 * operation has, and new things placed only by operations that take a JSON body.
 */
import { openapiDocument } from "@x/platform-client";
import { OpenApiRouter } from "../api/openapi.js";
import { PLACED, ROUTE_PARAM, ROUTES } from "./routes.js";

const router = new OpenApiRouter(openapiDocument);
const operations = [...router.operations.values()];

it("routes every operation of the spec, and nothing else", () => {
  expect(Object.keys(ROUTES).sort()).toEqual(operations.map((op) => op.id).sort());
});

it("finds each node by a path parameter the operation has", () => {
  for (const op of operations) {
    const route = ROUTES[op.id as keyof typeof ROUTES];
    if (!(route in ROUTE_PARAM)) continue;
    const param = ROUTE_PARAM[route as keyof typeof ROUTE_PARAM];
    expect([op.id, op.params.some((p) => p.in === "path" && p.name === param)]).toEqual([op.id, true]);
  }
});

it("places new things only for POSTs with a JSON body, read whole before the node gets them", () => {
  const placed = operations.filter((op) => ROUTES[op.id as keyof typeof ROUTES] in PLACED);
  expect(placed.map((op) => op.id).sort()).toEqual([
    "createSandbox",
    "createSandboxLegacy",
    "createTemplate",
    "createVolume",
  ]);
  for (const op of placed) expect([op.id, op.method, op.jsonBody]).toEqual([op.id, "POST", true]);
});

it("matches the spec's paths to the operations x serve answers them with", () => {
  const routeOf = (method: string, path: string) => {
    const match = router.match(method, path);
    return match && match !== "method-not-allowed" ? ROUTES[match.op.id as keyof typeof ROUTES] : match;
  };
  expect(routeOf("POST", "/v2/sandboxes")).toBe("place-sandbox");
  expect(routeOf("GET", "/sandboxes/metrics")).toBe("sandboxes-metrics");
  expect(routeOf("GET", "/sandboxes/abc")).toBe("sandbox-record");
  expect(routeOf("POST", "/sandboxes/abc/pause")).toBe("sandbox");
  expect(routeOf("PUT", "/volumecontent/v1/file")).toBe("volume");
  expect(routeOf("POST", "/v2/templates/t/builds/b")).toBe("build");
  expect(routeOf("GET", "/templates/t/builds/b/status")).toBe("any");
  expect(routeOf("PUT", "/templates/t/files/h/upload")).toBe("build-files");
  expect(routeOf("PUT", "/v2/sandboxes")).toBe("method-not-allowed");
  expect(routeOf("GET", "/no/such/thing")).toBeUndefined();
});
