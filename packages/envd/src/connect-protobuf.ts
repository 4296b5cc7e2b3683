/**
 * `@bufbuild/protobuf` as connect-es sees it in the bundle (scripts/bundle.mjs swaps it in for
 * imports from `@connectrpc/*`): the same module, with `toJsonString` answering ListDir (thousands
 * of entries in one response) and process output (megabytes a second of base64) from direct
 * encoders. Everything else goes to protobuf-es.
 */
import {
  type DescMessage,
  toJsonString as generic,
  type JsonWriteStringOptions,
  type MessageShape,
} from "@bufbuild/protobuf";
import type { ConnectResponse, ListDirResponse, StartResponse } from "@x/envd-client";
import { listDirResponseJson } from "./filesystem/list-json.js";
import { outputEventJson } from "./process/event-json.js";

export * from "@bufbuild/protobuf";

const LIST_DIR_RESPONSE = "filesystem.ListDirResponse";
const OUTPUT_RESPONSES = new Set(["process.StartResponse", "process.ConnectResponse"]);

export function toJsonString<Desc extends DescMessage>(
  schema: Desc,
  message: MessageShape<Desc>,
  options?: Partial<JsonWriteStringOptions>,
): string {
  const defaults =
    !options?.alwaysEmitImplicit &&
    !options?.enumAsInteger &&
    !options?.useProtoFieldName &&
    !options?.prettySpaces;
  if (defaults) {
    let json: string | undefined;
    if (schema.typeName === LIST_DIR_RESPONSE)
      json = listDirResponseJson(message as unknown as ListDirResponse);
    else if (OUTPUT_RESPONSES.has(schema.typeName))
      json = outputEventJson(message as unknown as StartResponse | ConnectResponse);
    if (json !== undefined) return json;
  }
  return generic(schema, message, options);
}
