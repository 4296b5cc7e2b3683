import type { IncomingMessage, ServerResponse } from "node:http";
import type { operations } from "@x/platform-client";
import type { Team } from "../model/team.js";
import type { Caller } from "./authenticate.js";
import type { Operation } from "./openapi.js";

/**
 * Handlers are typed by the same spec the clients are generated from: the parameters, body and
 * replies of each operation come from `operations` of @x/platform-client, so renaming a field
 * in openapi.yaml fails `tsc` where a handler reads or answers it. ajv checks the same at run
 * time (api/openapi.ts).
 */
export type OperationId = keyof operations;

type Parameters<K extends OperationId> = operations[K]["parameters"];
type Part<P, Where extends string> = Where extends keyof P
  ? [NonNullable<P[Where]>] extends [never]
    ? unknown
    : NonNullable<P[Where]>
  : unknown;

/** Path, query and header parameters of an operation, by name, as validated (and coerced) by ajv. */
export type ParamsOf<K extends OperationId> = Part<Parameters<K>, "path"> &
  Part<Parameters<K>, "query"> &
  Part<Parameters<K>, "header">;

type JsonContent<T> = T extends { content: { "application/json": infer J } } ? J : never;

/** The JSON body of an operation; undefined where it may be left out, never where it has none. */
export type BodyOf<K extends OperationId> = operations[K] extends { requestBody: infer B }
  ? JsonContent<B>
  : operations[K] extends { requestBody?: infer B }
    ? JsonContent<NonNullable<B>> | undefined
    : undefined;

type Responses<K extends OperationId> = operations[K]["responses"];
type ReplyFor<R, S> = [JsonContent<R>] extends [never]
  ? { status: S; body?: undefined; headers?: Record<string, string> }
  : { status: S; body: JsonContent<R>; headers?: Record<string, string> };

/** One of the answers the spec declares for an operation: its status and that status's body. */
export type ReplyOf<K extends OperationId> = {
  [S in keyof Responses<K>]: S extends number ? ReplyFor<Responses<K>[S], S> : never;
}[keyof Responses<K>];

/** What a handler gets: the validated request and the team that made it. */
export interface ApiRequest<K extends OperationId = OperationId> {
  op: Operation;
  /** Undefined only for operations without security (`/health`, signed uploads). */
  team: Team | undefined;
  /** With `team`: which of its keys or tokens made the request. */
  caller: Caller | undefined;
  params: ParamsOf<K>;
  body: BodyOf<K>;
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
}

/** A handler answers with a reply the spec declares, or with `undefined` when it wrote the response itself. */
export type Handler<K extends OperationId> = (request: ApiRequest<K>) => Promise<ReplyOf<K> | undefined>;

/** What the server does with any handler's answer, whatever its operation. */
export interface AnyReply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

/** Any operation's handler, as the server dispatches it (after matching the operation). */
export type AnyHandler = (request: ApiRequest) => Promise<AnyReply | undefined>;

/** Every operation of openapi.yaml with its handler: a missing one fails `tsc`. */
export type Handlers = { [K in OperationId]: Handler<K> };

/** Some operations' handlers, as each route module provides them. */
export type HandlersFor<K extends OperationId> = Pick<Handlers, K>;
