import { DomainError } from "../../model/errors.js";
import { ingressPolicy } from "./ingress-policy.js";

describe("ingressPolicy", () => {
  it("stores the settings, public by default", () => {
    expect(ingressPolicy()).toEqual({ allowPublicTraffic: true, httpsPorts: [] });
    expect(
      ingressPolicy({
        allowPublicTraffic: false,
        maskRequestHost: "api.internal:${PORT}",
        httpsPorts: [443, 8443],
      }),
    ).toEqual({
      allowPublicTraffic: false,
      maskRequestHost: "api.internal:${PORT}",
      httpsPorts: [443, 8443],
    });
    for (const mask of ["10.0.0.1", "[::1]:8080", "host.example.", "h:${PORT}"]) {
      expect(ingressPolicy({ maskRequestHost: mask }).maskRequestHost).toBe(mask);
    }
  });

  it.each([
    [{ maskRequestHost: "a b" }, /mask request host is not valid: a b/],
    [{ maskRequestHost: "host:99999" }, /mask request host is not valid/],
    [{ maskRequestHost: "" }, /mask request host is not valid/],
    [
      { maskRequestHost: "bücher.example" },
      "mask request host bücher.example is not ASCII. Please use ASCII characters only.",
    ],
    [{ httpsPorts: [49983] }, /envd's port/],
    [{ httpsPorts: [65536] }, /not a port/],
    [{ httpsPorts: [1, 1] }, /more than once/],
    [{ httpsPorts: Array.from({ length: 129 }, (_, i) => i + 1) }, /at most 128/],
  ])("refuses %j", (config, message) => {
    expect(() => ingressPolicy(config)).toThrow(DomainError);
    expect(() => ingressPolicy(config)).toThrow(message);
  });
});
