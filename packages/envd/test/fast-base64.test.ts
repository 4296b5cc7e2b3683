import { randomBytes } from "node:crypto";
import { base64Decode as referenceDecode, base64Encode as referenceEncode } from "@bufbuild/protobuf/wire";
import { base64Decode, base64Encode } from "../src/fast-base64.js";

// The bundle swaps protobuf-es's base64 for this one: it must answer exactly as the original.
describe("fast base64", () => {
  it("encodes as protobuf-es does, in every flavour", () => {
    for (const length of [0, 1, 2, 3, 4, 5, 64, 1000, 65_537]) {
      const bytes = randomBytes(length);
      const view = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      for (const encoding of ["std", "std_raw", "url"] as const) {
        expect(base64Encode(view, encoding)).toBe(referenceEncode(view, encoding));
      }
      expect(base64Encode(view)).toBe(referenceEncode(view));
    }
  });

  it("decodes what protobuf-es decodes: both alphabets, whitespace, missing and inner padding", () => {
    const bytes = new Uint8Array(randomBytes(300));
    const samples = [
      referenceEncode(bytes),
      referenceEncode(bytes, "std_raw"),
      referenceEncode(bytes, "url"),
      `${referenceEncode(bytes).slice(0, 40)}\n${referenceEncode(bytes).slice(40)}`,
      `${referenceEncode(new Uint8Array([1]))}${referenceEncode(new Uint8Array([2, 3]))}`,
      "",
    ];
    for (const text of samples) expect(base64Decode(text)).toEqual(referenceDecode(text));
  });

  it("refuses what protobuf-es refuses", () => {
    for (const bad of ["a", "ab*c", "abcde"]) {
      expect(() => referenceDecode(bad)).toThrow("invalid base64 string");
      expect(() => base64Decode(bad)).toThrow("invalid base64 string");
    }
  });
});
