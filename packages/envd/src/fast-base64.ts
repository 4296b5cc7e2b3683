/**
 * Base64 for protobuf-es's JSON codec, on Node's native encoder. The bundle puts it in place of
 * `@bufbuild/protobuf`'s own (a character-at-a-time string build) because the public client
 * speaks Connect JSON: every chunk of a process's output goes out as base64, and with the
 * generic encoder that capped a streamed command at ~18 MB/s. Same contract as the module it
 * replaces: `base64Encode(bytes, "std" | "std_raw" | "url")`, and `base64Decode` that takes both
 * alphabets, whitespace, missing and inner padding, and throws on anything else.
 */
export function base64Encode(bytes: Uint8Array, encoding: "std" | "std_raw" | "url" = "std"): string {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (encoding === "url") return buf.toString("base64url");
  const text = buf.toString("base64");
  return encoding === "std_raw" ? text.replace(/=+$/, "") : text;
}

export function base64Decode(base64Str: string): Uint8Array {
  const compact = base64Str.replace(/[\n\r\t ]/g, "");
  if (/[^A-Za-z0-9+/\-_=]/.test(compact)) throw Error("invalid base64 string");
  // padding ends a group: each padded piece decodes on its own, as concatenated strings would
  const pieces = compact.split(/=+/).filter((p) => p.length > 0);
  const parts = pieces.map((piece) => {
    if (piece.length % 4 === 1) throw Error("invalid base64 string");
    return Buffer.from(piece, "base64");
  });
  const joined = parts.length === 1 ? parts[0]! : Buffer.concat(parts);
  return new Uint8Array(joined.buffer, joined.byteOffset, joined.byteLength);
}
