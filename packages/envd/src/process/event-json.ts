import type { ConnectResponse, StartResponse } from "@x/envd-client";

/**
 * A Start or Connect response carrying output, as protobuf-es's `toJsonString` writes it with
 * default options, built by concatenation: base64 needs no JSON escaping, and the generic path
 * (reflection, then JSON.stringify scanning every character of the base64) cost envd about as
 * much CPU as reading the output. Undefined for every other event (the generic encoder answers).
 */
export function outputEventJson(message: StartResponse | ConnectResponse): string | undefined {
  const event = message.event?.event;
  if (event?.case !== "data") return undefined;
  const { output, offset } = event.value;
  if (output.case === undefined || !(output.value instanceof Uint8Array)) return undefined;
  const bytes = output.value;
  const base64 = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");
  const at = offset === 0n ? "" : `,"offset":"${offset}"`;
  return `{"event":{"data":{"${output.case}":"${base64}"${at}}}}`;
}
