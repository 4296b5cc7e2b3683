import { DomainError } from "../../model/errors.js";
import { httpErrorOf } from "../errors.js";
import { egressPolicy } from "./egress-policy.js";

describe("egressPolicy", () => {
  it("stores entries as given, with allow_internet_access only when sent", () => {
    expect(egressPolicy({})).toEqual({ allowOut: [], denyOut: [] });
    expect(
      egressPolicy({
        allow_internet_access: true,
        allowOut: ["1.1.1.1"],
        denyOut: [],
        rules: {},
        egressProxy: null,
      }),
    ).toEqual({ allowInternetAccess: true, allowOut: ["1.1.1.1"], denyOut: [] });
    const named = {
      allowOut: ["API.example.com", "*.example.org", "*", "10.0.0.0/8"],
      denyOut: ["0.0.0.0/0"],
    };
    expect(egressPolicy(named)).toEqual(named);
    // internet off is the "deny everything else" that names need, too
    expect(egressPolicy({ allow_internet_access: false, allowOut: ["a.com"] })).toMatchObject({
      allowInternetAccess: false,
    });
    expect(egressPolicy({ denyOut: ["2001:db8::/32", "198.51.100.7"] }).denyOut).toHaveLength(2);
  });

  it.each([
    [{ denyOut: ["example.com"] }, "invalid denied CIDR example.com"],
    [{ denyOut: ["0.0.0.0"] }, "invalid denied CIDR 0.0.0.0"],
    [{ denyOut: ["::"] }, "invalid denied CIDR ::"],
    // as in the hosted service, only the IPv4 literal stands for everything
    [{ denyOut: ["::/0"] }, "invalid denied CIDR ::/0"],
    [{ denyOut: ["1.2.3.4/33"] }, "invalid denied CIDR 1.2.3.4/33"],
    [{ allowOut: ["0.0.0.0"], denyOut: ["0.0.0.0/0"] }, "invalid allowed address 0.0.0.0"],
    [{ allowOut: ["1.2.3.4/x"], denyOut: ["0.0.0.0/0"] }, "invalid allowed address 1.2.3.4/x"],
    [{ allowOut: ["http://a.com"], denyOut: ["0.0.0.0/0"] }, /invalid allowed domain http:\/\/a.com/],
    [{ allowOut: ["a.*.com"], denyOut: ["0.0.0.0/0"] }, /invalid allowed domain a.\*.com/],
    [
      { allowOut: ["a.com"] },
      "When specifying allowed domains in allow out, you must include 'ALL_TRAFFIC' in deny out to block all other traffic.",
    ],
    [{ egressProxy: { address: "p:1080" } }, /egressProxy/],
    // rules are checked by network/transforms.ts (its own tests): one of them reaches here
    [{ rules: { "a.com": [{}, {}] } }, /rule/i],
  ])("refuses %j with 400: %s", (config, message) => {
    let error: unknown;
    try {
      egressPolicy(config);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(DomainError);
    expect(httpErrorOf(error)?.status).toBe(400);
    expect((error as DomainError).message).toMatch(message);
  });
});
