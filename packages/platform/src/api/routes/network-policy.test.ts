import { DomainError } from "../../model/errors.js";
import { httpErrorOf } from "../errors.js";
import { internetAccess } from "./network-policy.js";

describe("internetAccess", () => {
  it("allows the internet unless it is turned off", () => {
    expect(internetAccess({})).toBe(true);
    expect(
      internetAccess({
        allow_internet_access: true,
        allowOut: [],
        denyOut: [],
        rules: {},
        egressProxy: null,
      }),
    ).toBe(true);
    expect(internetAccess({ allow_internet_access: false })).toBe(false);
    expect(internetAccess({ denyOut: ["0.0.0.0/0"] })).toBe(false);
    expect(internetAccess({ denyOut: ["0.0.0.0/0", "::/0"], allow_internet_access: false })).toBe(false);
    expect(internetAccess({}, { allowPublicTraffic: true, httpsPorts: [] })).toBe(true);
  });

  it.each([
    [{ allowOut: ["1.1.1.1"] }, {}, /allowOut/],
    [{ denyOut: ["10.0.0.0/8"] }, {}, /denyOut/],
    [{ denyOut: ["0.0.0.0/0", "10.0.0.0/8"] }, {}, /denyOut/],
    [{ egressProxy: { address: "p:1080" } }, {}, /egressProxy/],
    [{ rules: { "a.com": [{}] } }, {}, /rules/],
    [{ allow_internet_access: true, denyOut: ["0.0.0.0/0"] }, {}, /contradicts/],
    [{}, { allowPublicTraffic: false }, /allowPublicTraffic/],
    [{}, { maskRequestHost: "x" }, /maskRequestHost/],
    [{}, { httpsPorts: [443] }, /httpsPorts/],
  ])("refuses %j %j with 400", (egress, ingress, message) => {
    let error: unknown;
    try {
      internetAccess(egress, ingress);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(DomainError);
    expect(httpErrorOf(error)?.status).toBe(400);
    expect((error as DomainError).message).toMatch(message);
  });
});
