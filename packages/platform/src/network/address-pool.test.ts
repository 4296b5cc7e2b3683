import { AddressPool, intToIp, ipToInt } from "./address-pool.js";

test("a /16 holds 16384 /30 slots with the host at .1 and the sandbox at .2", () => {
  const pool = new AddressPool("10.200.0.0/16");
  expect(pool.size).toBe(16384);
  expect(pool.addresses(0)).toEqual({
    slot: 0,
    hostIp: "10.200.0.1",
    sandboxIp: "10.200.0.2",
    prefixLength: 30,
  });
  expect(pool.addresses(64)).toMatchObject({ hostIp: "10.200.1.1", sandboxIp: "10.200.1.2" });
  expect(pool.addresses(16383)).toMatchObject({ hostIp: "10.200.255.253", sandboxIp: "10.200.255.254" });
});

test("the base is masked to the prefix", () => {
  expect(new AddressPool("192.168.7.9/24").addresses(1).hostIp).toBe("192.168.7.5");
});

test("firstFree takes the lowest free slot and fails when none is left", () => {
  const pool = new AddressPool("10.0.0.0/29");
  expect(pool.firstFree(new Set([0]))).toBe(1);
  expect(() => pool.firstFree(new Set([0, 1]))).toThrow(/exhausted/);
});

test("bad input is refused", () => {
  expect(() => new AddressPool("10.0.0.0/31")).toThrow(/CIDR/);
  expect(() => new AddressPool("10.0.0/16")).toThrow(/invalid IPv4/);
  expect(() => new AddressPool("10.0.0.0/16").addresses(16384)).toThrow(/outside pool/);
});

test("addresses round-trip through integers", () => {
  for (const ip of ["0.0.0.0", "10.200.3.4", "255.255.255.255"]) expect(intToIp(ipToInt(ip))).toBe(ip);
});
