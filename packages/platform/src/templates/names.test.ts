import { SYSTEM_NAMESPACE } from "../model/team.js";
import { RESERVED_TEMPLATE_NAMES, SHIPPED_TEMPLATES } from "../model/template.js";
import { InvalidName, parseOwnName } from "./names.js";

describe("names a team gives its templates", () => {
  it("keeps the platform's own names for the system team", () => {
    expect(RESERVED_TEMPLATE_NAMES).toEqual(
      expect.arrayContaining(["base", ...SHIPPED_TEMPLATES, "mcp-gateway"]),
    );
    for (const raw of [
      "base",
      "code-interpreter-v1",
      "Desktop",
      "team-b/mcp-gateway",
      "code-interpreter-v1:v2",
    ]) {
      expect(() => parseOwnName(raw, "team-b")).toThrow(InvalidName);
      expect(() => parseOwnName(raw, "team-b")).toThrow(/reserved for the platform's own templates/);
    }
    expect(parseOwnName("code-interpreter-v1", SYSTEM_NAMESPACE)).toEqual({
      namespace: SYSTEM_NAMESPACE,
      alias: "code-interpreter-v1",
      tag: undefined,
    });
    expect(parseOwnName("base-python:v1", "team-b")).toEqual({
      namespace: "team-b",
      alias: "base-python",
      tag: "v1",
    });
  });

  it("refuses a name of a template id's form", () => {
    expect(() => parseOwnName("0123456789abcdef0123", "team-b")).toThrow(/template id's form/);
    expect(() => parseOwnName("team-b/0123456789ABCDEF0123:v1", "team-b")).toThrow(/template id's form/);
    expect(parseOwnName("0123456789abcdef012", "team-b").alias).toBe("0123456789abcdef012");
    expect(parseOwnName("0123456789abcdef0123x", "team-b").alias).toBe("0123456789abcdef0123x");
  });
});
