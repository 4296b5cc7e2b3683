import { DomainError } from "../model/errors.js";
import { MALFORMED_PLACEHOLDER } from "../model/placeholders.js";
import {
  compileTransforms,
  matchTransform,
  networkRules,
  onPublicSuffix,
  replaceHeaders,
  wildcardOwnsHost,
} from "./transforms.js";

const rule = (headers: Record<string, string>) => [{ transform: { headers } }];

/** The 400 message a set of rules is refused with. */
function refusal(rules: Parameters<typeof networkRules>[0]): string {
  try {
    networkRules(rules);
  } catch (err) {
    expect(err).toBeInstanceOf(DomainError);
    expect((err as DomainError).code).toBe("invalid");
    return (err as Error).message;
  }
  throw new Error("the rules were accepted");
}

describe("network rules validation", () => {
  it("accepts E2B's shapes and stores domains lower-cased, values as given", () => {
    expect(
      networkRules({
        "API.Example.com": rule({ Authorization: "Bearer ${e2b.secrets.openai_key}" }),
        "*.example.org": [{}],
        "x.test": [{ transform: {} }],
      }),
    ).toEqual({
      "api.example.com": rule({ Authorization: "Bearer ${e2b.secrets.openai_key}" }),
      "*.example.org": [{}],
      "x.test": [{ transform: {} }],
    });
    expect(networkRules({})).toBeUndefined();
    expect(networkRules(undefined)).toBeUndefined();
  });

  it("refuses what E2B refuses, with its messages", () => {
    const eleven = Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`d${i}.test`, rule({ A: "b" })]));
    expect(refusal(eleven)).toBe("Network rules can have at most 10 domains.");
    expect(refusal({ "": rule({ A: "b" }) })).toBe("Rule domain must not be empty.");
    const long = `${"a".repeat(60)}.${"b".repeat(60)}.example.com`;
    expect(refusal({ [long]: rule({ A: "b" }) })).toBe(
      `Rule domain "${long}" exceeds maximum length of 128 characters.`,
    );
    for (const bad of ["*", "*.", "a..b", "-a.test", "a b.test", "a.*.test", "https://a.test"]) {
      expect(refusal({ [bad]: rule({ A: "b" }) })).toBe(
        `Rule domain ${JSON.stringify(bad)} is not a valid domain name.`,
      );
    }
    expect(refusal({ "a.test": [...rule({ A: "b" }), ...rule({ C: "d" })] })).toBe(
      'Domain "a.test" can have at most 1 transform rule.',
    );
    // one domain given twice in different case is two rules for it
    expect(refusal({ "a.test": rule({ A: "b" }), "A.TEST": rule({ C: "d" }) })).toBe(
      'Domain "A.TEST" can have at most 1 transform rule.',
    );
    const many = Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`H${i}`, "v"]));
    expect(refusal({ "a.test": rule(many) })).toBe('Domain "a.test" can have at most 20 headers per rule.');
    expect(refusal({ "a.test": rule({ "": "v" }) })).toBe(
      'Header name in rule for domain "a.test" must not be empty.',
    );
    expect(refusal({ "a.test": rule({ "X Y": "v" }) })).toBe(
      // E2B's words for any name that is not an RFC 7230 token
      'Header name "X Y" in rule for domain "a.test" must not contain CR or LF characters.',
    );
    expect(refusal({ "a.test": rule({ ["X".repeat(65)]: "v" }) })).toBe(
      `Header name "${"X".repeat(65)}" in rule for domain "a.test" exceeds maximum length of 64 characters.`,
    );
    expect(refusal({ "a.test": rule({ A: "v\r\nB: c" }) })).toBe(
      'Value for header "A" in rule for domain "a.test" must not contain CR or LF characters.',
    );
    expect(refusal({ "a.test": rule({ A: "v\u0000" }) })).toBe(
      'Value for header "A" in rule for domain "a.test" must be a valid HTTP header value.',
    );
    expect(refusal({ "a.test": rule({ A: "v".repeat(2049) }) })).toBe(
      'Value for header "A" in rule for domain "a.test" exceeds maximum length of 2048 characters.',
    );
    expect(refusal({ "a.test": rule({ A: "${e2b.secrets.x" }) })).toBe(MALFORMED_PLACEHOLDER);
    expect(refusal({ "a.test": rule({ A: "${e2b.secrets.}" }) })).toBe(MALFORMED_PLACEHOLDER);
    const secrets = Object.fromEntries(
      Array.from({ length: 11 }, (_, i) => [
        `H${i}`,
        `${"${e2b.secrets.s"}${i}a} ${"${e2b.secrets.s"}${i}b} ${"${e2b.secrets.s"}${i}c}`,
      ]),
    );
    expect(refusal({ "a.test": rule(secrets) })).toBe(
      'Domain "a.test" can refer to at most 32 distinct secrets.',
    );
  });

  it("allows the limits themselves", () => {
    const ten = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`d${i}.test`, rule({ A: "b" })]));
    expect(Object.keys(networkRules(ten)!)).toHaveLength(10);
    const twenty = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`H${i}`, "v".repeat(2048)]));
    expect(networkRules({ [`${"a".repeat(60)}.${"b".repeat(60)}.test`]: rule(twenty) })).toBeDefined();
    // a literal ${...} that is not an E2B placeholder passes through
    expect(networkRules({ "a.test": rule({ A: "${foo}" }) })).toBeDefined();
  });
});

describe("network rules matching", () => {
  const t = compileTransforms({
    "api.example.com": rule({ A: "exact" }),
    "*.example.com": rule({ A: "wide" }),
    "*.eu.example.com": rule({ A: "narrow" }),
  });
  const header = (name: string) => {
    const m = matchTransform(t, name);
    return m ? [m.domain, m.headers[0]?.value] : undefined;
  };

  it("takes the exact rule first, then the longest wildcard suffix, never the apex", () => {
    expect(header("api.example.com")).toEqual(["api.example.com", ["exact"]]);
    expect(header("API.Example.COM.")).toEqual(["api.example.com", ["exact"]]);
    expect(header("x.example.com")).toEqual(["*.example.com", ["wide"]]);
    expect(header("a.b.c.example.com")).toEqual(["*.example.com", ["wide"]]);
    expect(header("x.eu.example.com")).toEqual(["*.eu.example.com", ["narrow"]]);
    expect(header("eu.example.com")).toEqual(["*.example.com", ["wide"]]);
    expect(header("example.com")).toBeUndefined();
    expect(header("notexample.com")).toBeUndefined();
    expect(compileTransforms(undefined)).toBeUndefined();
  });

  it("parses placeholders for filling at request time", () => {
    const c = compileTransforms({ "a.test": rule({ Authorization: "Bearer ${e2b.secrets.Key}" }) });
    expect(matchTransform(c, "a.test")?.headers).toEqual([
      { name: "Authorization", value: ["Bearer ", { kind: "secret", name: "key" }] },
    ]);
  });
});

describe("header replacement", () => {
  it("replaces every header of a rule's name, whatever its case, and keeps the rest in order", () => {
    const raw = ["Host", "a.test", "x-test-token", "old", "Accept", "*/*", "X-TEST-TOKEN", "older"];
    expect(replaceHeaders(raw, [["X-Test-Token", "v1"]])).toEqual([
      "Host",
      "a.test",
      "Accept",
      "*/*",
      "X-Test-Token",
      "v1",
    ]);
    expect(replaceHeaders(raw, [])).toEqual(raw);
  });
});

describe("wildcards and public suffixes", () => {
  const ruleWith = (headers: Record<string, string>, extra: Record<string, unknown> = {}) => [
    { transform: { headers, ...extra } },
  ];

  it("refuses a wildcard with placeholders that sits on a public suffix", () => {
    for (const domain of [
      "*.github.io",
      "*.s3.amazonaws.com",
      "*.vercel.app",
      "*.co.uk",
      "*.com",
      "*.test",
    ]) {
      expect(() =>
        networkRules({ [domain]: ruleWith({ Authorization: "Bearer ${e2b.secrets.s}" }) }),
      ).toThrow(
        `Rule domain ${JSON.stringify(domain)} is a wildcard on the public suffix ${domain.slice(2)}`,
      );
      expect(() => networkRules({ [domain]: ruleWith({ A: "${e2b.identity.tokens.t}" }) })).toThrow(
        /public suffix/,
      );
      // without placeholders nothing of the team's goes anywhere: allowed
      expect(networkRules({ [domain]: ruleWith({ "X-Plain": "1" }) })).toEqual({
        [domain]: ruleWith({ "X-Plain": "1" }),
      });
    }
    for (const domain of ["*.example.com", "*.me.github.io", "*.amazonaws.com", "*.echo.test"])
      expect(networkRules({ [domain]: ruleWith({ A: "${e2b.secrets.s}" }) })).toBeDefined();
  });

  it("fills a wildcard's placeholders only for hosts whose registrable domain is the rule's own", () => {
    expect(wildcardOwnsHost("example.com", "a.b.example.com")).toBe(true);
    expect(wildcardOwnsHost("eu.example.com", "x.eu.example.com")).toBe(true);
    expect(wildcardOwnsHost("amazonaws.com", "sts.amazonaws.com")).toBe(true);
    expect(wildcardOwnsHost("amazonaws.com", "mybucket.s3.amazonaws.com")).toBe(false);
    expect(wildcardOwnsHost("me.github.io", "x.me.github.io")).toBe(true);
    expect(wildcardOwnsHost("amazonaws.com", "s3.amazonaws.com")).toBe(false);
    expect(onPublicSuffix("github.io")).toBe(true);
    expect(onPublicSuffix("example.com")).toBe(false);
  });

  it("takes allowPlainHttp as true or false only, and compiles it", () => {
    expect(() => networkRules({ "a.test": ruleWith({ A: "b" }, { allowPlainHttp: "yes" }) })).toThrow(
      'allowPlainHttp in rule for domain "a.test" must be true or false.',
    );
    const stored = networkRules({ "a.test": ruleWith({ A: "${e2b.secrets.s}" }, { allowPlainHttp: true }) });
    expect(stored).toEqual({ "a.test": ruleWith({ A: "${e2b.secrets.s}" }, { allowPlainHttp: true }) });
    expect(compileTransforms(stored)?.exact.get("a.test")?.allowPlainHttp).toBe(true);
    expect(compileTransforms({ "a.test": ruleWith({ A: "b" }) })?.exact.get("a.test")?.allowPlainHttp).toBe(
      false,
    );
  });
});
