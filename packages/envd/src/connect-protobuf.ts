/**
 * `@bufbuild/protobuf` as connect-es sees it in the bundle (scripts/bundle.mjs swaps it in for
 * imports from `@connectrpc/*`): the same module, with `toJsonString` answering ListDir, the one
 * response of thousands of messages, from a direct encoder. Everything else goes to protobuf-es.
 */
import {
  type DescMessage,
  toJsonString as generic,
  type JsonWriteStringOptions,
  type MessageShape,
} from "@bufbuild/protobuf";
import type { ListDirResponse } from "@x/envd-client";
import { listDirResponseJson } from "./filesystem/list-json.js";

export * from "@bufbuild/protobuf";

const LIST_DIR_RESPONSE = "filesystem.ListDirResponse";

export function toJsonString<Desc extends DescMessage>(
  schema: Desc,
  message: MessageShape<Desc>,
  options?: Partial<JsonWriteStringOptions>,
): string {
  if (
    schema.typeName === LIST_DIR_RESPONSE &&
    !options?.alwaysEmitImplicit &&
    !options?.enumAsInteger &&
    !options?.useProtoFieldName &&
    !options?.prettySpaces
  ) {
    const json = listDirResponseJson(message as unknown as ListDirResponse);
    if (json !== undefined) return json;
  }
  return generic(schema, message, options);
}
