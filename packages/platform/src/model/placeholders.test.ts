import { DomainError } from "./errors.js";
import {
  fillHeaderTemplate,
  normalizeSecretName,
  parseHeaderTemplate,
  secretNamesIn,
} from "./placeholders.js";

describe("placeholders", () => {
  it("normalises secret names as E2B does", () => {
    expect(normalizeSecretName(" GH-Token ")).toBe("gh-token");
    for (const bad of ["", "a b", "sec_x", "x".repeat(129), "é"])
      expect(normalizeSecretName(bad)).toBeUndefined();
  });

  it("cuts a header value into text and placeholders; other ${…} text is literal", () => {
    expect(parseHeaderTemplate("Bearer ${e2b.secrets.GH-token} ${foo} ${e2b.identity.tokens.aws}!")).toEqual([
      "Bearer ",
      { kind: "secret", name: "gh-token" },
      " ${foo} ",
      { kind: "identity", name: "aws" },
      "!",
    ]);
    expect(parseHeaderTemplate("plain")).toEqual(["plain"]);
    expect(secretNamesIn(parseHeaderTemplate("${e2b.secrets.a}${e2b.secrets.A}${e2b.secrets.b}"))).toEqual([
      "a",
      "b",
    ]);
  });

  it("refuses malformed placeholders with E2B's message", () => {
    for (const bad of [
      "${e2b.secrets.",
      "${e2b.secrets.}",
      "${e2b.secrets.a b}",
      "${e2b.secrets.sec_abc}",
      "${e2b.secrets.${e2b.secrets.x}}",
      "${e2b.identity.tokens.}",
      "${e2b.identity.tokens.a{b}",
    ]) {
      expect(() => parseHeaderTemplate(bad)).toThrow(
        new DomainError("invalid", "Network transform header contains a malformed E2B placeholder."),
      );
    }
  });

  it("fills placeholders, or names the first that has no value", async () => {
    const values = {
      secret: async (_team: string, name: string) => (name === "gh" ? "s3cr3t" : undefined),
      identityToken: async (_sandbox: string, name: string) => (name === "aws" ? "jwt" : undefined),
    };
    const parts = parseHeaderTemplate("Bearer ${e2b.secrets.gh}/${e2b.identity.tokens.aws}");
    expect(await fillHeaderTemplate(parts, "t", "s", values)).toEqual({ value: "Bearer s3cr3t/jwt" });
    expect(await fillHeaderTemplate(parseHeaderTemplate("${e2b.secrets.nope}"), "t", "s", values)).toEqual({
      missing: { kind: "secret", name: "nope" },
    });
  });
});
