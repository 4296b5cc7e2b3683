import { Ajv, type ValidateFunction } from "ajv";
import addFormats from "ajv-formats";
import { invalid } from "../model/errors.js";

/**
 * Routes and validators compiled from the OpenAPI document: the spec the clients are
 * generated from is also what the server checks every request and response against.
 */

type Json = Record<string, unknown>;

interface ParamSpec {
  name: string;
  in: "path" | "query" | "header";
  required: boolean;
  schema: Json;
  explode: boolean;
}

export interface Operation {
  id: string;
  method: string;
  path: string;
  /** Whether the team's API key is required (false for `security: []` and other schemes). */
  authenticated: boolean;
  /** The body is JSON and parsed before the handler runs. */
  jsonBody: boolean;
  /** A body of another type (an upload), which the handler reads as it arrives. */
  streamedBody: boolean;
  bodyRequired: boolean;
  validateParams: ValidateFunction;
  validateBody?: ValidateFunction;
  validateResponse: Map<number, ValidateFunction | undefined>;
  params: ParamSpec[];
}

interface CompiledRoute {
  op: Operation;
  regex: RegExp;
  names: string[];
  literalSegments: number;
}

export interface Match {
  op: Operation;
  pathParams: Record<string, string>;
}

const METHODS = ["get", "put", "post", "delete", "patch"] as const;

function resolveRef(doc: Json, value: unknown): Json {
  let node = value as Json;
  while (node && typeof node.$ref === "string") {
    const parts = (node.$ref as string).replace(/^#\//, "").split("/");
    node = parts.reduce<Json>((acc, key) => acc[key] as Json, doc);
  }
  return node;
}

/**
 * OpenAPI 3.0 writes a nullable reference as `nullable: true` beside `allOf: [$ref]`; ajv's
 * `nullable` only widens `type`, so the `allOf` would still refuse null. Such schemas become
 * "null, or the schema".
 */
function nullableRefs(node: unknown): Json {
  if (Array.isArray(node)) return node.map(nullableRefs) as unknown as Json;
  if (!node || typeof node !== "object") return node as Json;
  const out = Object.fromEntries(Object.entries(node).map(([k, v]) => [k, nullableRefs(v)])) as Json;
  if (out.nullable !== true || !out.allOf) return out;
  const { nullable: _, ...schema } = out;
  return { anyOf: [{ type: "null" }, schema] };
}

/** Rewrites local `#/…` refs so they resolve inside the registered document. */
function scoped(schema: unknown): Json {
  return JSON.parse(JSON.stringify(schema ?? {}).replaceAll('"$ref":"#/', '"$ref":"openapi#/')) as Json;
}

export class OpenApiRouter {
  private readonly routes: CompiledRoute[] = [];
  readonly operations = new Map<string, Operation>();

  constructor(doc: Json) {
    const bodies = new Ajv({ strict: false, allErrors: false, useDefaults: true });
    // Query and path values arrive as strings: coerce them to the types the spec declares.
    const params = new Ajv({ strict: false, allErrors: false, useDefaults: true, coerceTypes: "array" });
    for (const ajv of [bodies, params]) {
      addFormats.default(ajv);
      ajv.addSchema(nullableRefs(doc), "openapi");
    }
    const paths = doc.paths as Record<string, Json>;
    for (const [path, item] of Object.entries(paths)) {
      for (const method of METHODS) {
        const raw = item[method] as Json | undefined;
        if (!raw) continue;
        const op = this.compileOperation(doc, path, method, item, raw, bodies, params);
        this.operations.set(op.id, op);
        const names: string[] = [];
        const segments = path.split("/").filter(Boolean);
        const pattern = segments
          .map((segment) => {
            const m = segment.match(/^\{(.+)\}$/);
            if (!m) return segment.replace(/[.*+?^$()|[\]\\]/g, "\\$&");
            names.push(m[1]!);
            return "([^/]+)";
          })
          .join("/");
        this.routes.push({
          op,
          regex: new RegExp(`^/${pattern}/?$`),
          names,
          literalSegments: segments.filter((s) => !s.startsWith("{")).length,
        });
      }
    }
    // Literal paths (`/sandboxes/metrics`) win over templated ones (`/sandboxes/{id}`).
    this.routes.sort((a, b) => b.literalSegments - a.literalSegments);
  }

  private compileOperation(
    doc: Json,
    path: string,
    method: string,
    item: Json,
    raw: Json,
    bodies: Ajv,
    paramsAjv: Ajv,
  ): Operation {
    const params: ParamSpec[] = [
      ...((item.parameters as unknown[]) ?? []),
      ...((raw.parameters as unknown[]) ?? []),
    ]
      .map((p) => resolveRef(doc, p))
      .filter((p) => p.in !== "cookie")
      .map((p) => ({
        name: p.name as string,
        in: p.in as ParamSpec["in"],
        required: Boolean(p.required),
        schema: scoped(p.schema),
        explode: p.explode === undefined ? p.in === "query" : Boolean(p.explode),
      }));
    const paramSchema = {
      type: "object",
      properties: Object.fromEntries(params.map((p) => [p.name, p.schema])),
      required: params.filter((p) => p.required && p.in !== "header").map((p) => p.name),
    };
    const body = raw.requestBody ? resolveRef(doc, raw.requestBody) : undefined;
    const content = (body?.content ?? {}) as Record<string, Json>;
    const json = content["application/json"];
    const validateResponse = new Map<number, ValidateFunction | undefined>();
    for (const [status, response] of Object.entries((raw.responses ?? {}) as Json)) {
      const resolved = resolveRef(doc, response);
      const schema = (resolved.content as Record<string, Json> | undefined)?.["application/json"]?.schema;
      if (/^\d+$/.test(status))
        validateResponse.set(Number(status), schema ? bodies.compile(scoped(schema)) : undefined);
    }
    const security = (raw.security ?? doc.security) as unknown[] | undefined;
    return {
      id: raw.operationId as string,
      method: method.toUpperCase(),
      path,
      // by team API key; other schemes (a volume's bearer token) are checked by their handlers
      authenticated: Boolean(security?.some((req) => Object.hasOwn(req as Json, "ApiKeyAuth"))),
      jsonBody: Boolean(json),
      streamedBody: Boolean(body) && !json,
      bodyRequired: Boolean(body?.required),
      validateParams: paramsAjv.compile(paramSchema),
      validateBody: json?.schema ? bodies.compile(scoped(json.schema)) : undefined,
      validateResponse,
      params,
    };
  }

  /** The operation for a request, `405` when the path exists with other methods. */
  match(method: string, pathname: string): Match | "method-not-allowed" | undefined {
    let pathExists = false;
    for (const route of this.routes) {
      const m = route.regex.exec(pathname);
      if (!m) continue;
      if (route.op.method !== method) {
        pathExists = true;
        continue;
      }
      const pathParams: Record<string, string> = {};
      route.names.forEach((name, i) => {
        pathParams[name] = decodePathSegment(m[i + 1]!);
      });
      return { op: route.op, pathParams };
    }
    return pathExists ? "method-not-allowed" : undefined;
  }
}

function decodePathSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw invalid(`path segment '${segment}' is not valid percent-encoding`);
  }
}

/** Collects an operation's parameters from the request, shaped for validation. */
export function gatherParams(
  op: Operation,
  pathParams: Record<string, string>,
  query: URLSearchParams,
  headers: Record<string, string | string[] | undefined>,
): Json {
  const out: Json = {};
  for (const p of op.params) {
    if (p.in === "path") {
      out[p.name] = pathParams[p.name];
      continue;
    }
    if (p.in === "header") {
      const value = headers[p.name.toLowerCase()];
      if (value !== undefined) out[p.name] = Array.isArray(value) ? value[0] : value;
      continue;
    }
    const values = query.getAll(p.name);
    if (values.length === 0) continue;
    const isArray = p.schema.type === "array";
    if (!isArray) out[p.name] = values[0];
    else out[p.name] = p.explode ? values : values.flatMap((v) => v.split(",")).filter((v) => v !== "");
  }
  return out;
}

/** One line naming what is wrong, for a 400. */
export function describeErrors(where: string, validate: ValidateFunction): string {
  const err = validate.errors?.[0];
  if (!err) return `invalid ${where}`;
  const at = err.instancePath ? `${where}${err.instancePath.replaceAll("/", ".")}` : where;
  if (err.keyword === "required")
    return `${at}: missing required field '${(err.params as { missingProperty: string }).missingProperty}'`;
  if (err.keyword === "additionalProperties") {
    return `${at}: unknown field '${(err.params as { additionalProperty: string }).additionalProperty}'`;
  }
  if (err.keyword === "enum")
    return `${at} must be one of ${(err.params as { allowedValues: unknown[] }).allowedValues.join(", ")}`;
  return `${at} ${err.message ?? "is invalid"}`;
}
