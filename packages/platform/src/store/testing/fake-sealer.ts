import type { SealedValue } from "../../model/secret.js";
import type { RowSealer } from "../sealing.js";

/**
 * A sealer for tests of what sits above the store (the orchestrator over a fake host, the
 * cluster's router): values are marked and bound, not encrypted, so a value opened under
 * another binding still fails as the real one's would. The store's own tests use the real key.
 */
export function fakeSealer(): RowSealer {
  const b64 = (s: string) => Buffer.from(s).toString("base64url");
  return {
    keyId: "fake",
    sealBound: (value, binding) => `$x1$fake$${b64(binding)}$${b64(value)}`,
    openBound(text, binding) {
      const [, , keyId, bound, value] = text.split("$");
      if (keyId !== "fake" || bound !== b64(binding) || value === undefined)
        throw new Error("the sealed value is malformed");
      return Buffer.from(value, "base64url").toString();
    },
    open(_sealed: SealedValue): string {
      throw new Error("the fake sealer has no values sealed as secret versions");
    },
  };
}
