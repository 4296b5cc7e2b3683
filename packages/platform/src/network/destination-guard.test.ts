import { BlockList } from "node:net";
import {
  canonicalHost,
  classifyAddress,
  DestinationGuard,
  describeRefusal,
  destinationRules,
  embeddedIpv4,
  ipv6Bytes,
  ResolveError,
} from "./destination-guard.js";

/** No address of this machine's own: the classes alone. */
const NONE = new BlockList();

describe("classifyAddress", () => {
  it.each([
    ["127.0.0.1", "loopback"],
    ["127.255.0.9", "loopback"],
    ["10.1.2.3", "private"],
    ["172.16.0.1", "private"],
    ["172.31.255.255", "private"],
    ["192.168.1.1", "private"],
    ["169.254.169.254", "link-local"],
    ["100.64.0.1", "cgnat"],
    ["0.0.0.0", "unspecified"],
    ["0.1.2.3", "unspecified"],
    ["224.0.0.1", "multicast"],
    ["240.0.0.1", "multicast"],
    ["255.255.255.255", "multicast"],
  ])("refuses IPv4 %s as %s", (ip, kind) => {
    expect(classifyAddress(ip, NONE)).toBe(kind);
  });

  it.each(["8.8.8.8", "1.1.1.1", "172.32.0.1", "192.169.0.1", "100.128.0.1", "198.51.100.7"])(
    "lets public IPv4 %s through",
    (ip) => {
      expect(classifyAddress(ip, NONE)).toBeUndefined();
    },
  );

  it.each([
    ["::1", "loopback"],
    ["::", "unspecified"],
    ["fe80::1", "link-local"],
    ["fe80::1%eth0", "link-local"],
    ["fd00:ec2::254", "private"],
    ["fc00::1", "private"],
    ["fec0::1", "private"],
    ["ff02::1", "multicast"],
    ["2001:db8::1", "reserved"],
    ["2001::1", "reserved"],
    ["100::1", "reserved"],
    // IPv4-compatible (deprecated) and other space outside global unicast
    ["::7f00:1", "reserved"],
    ["4000::1", "reserved"],
  ])("refuses IPv6 %s as %s", (ip, kind) => {
    expect(classifyAddress(ip, NONE)).toBe(kind);
  });

  it("judges IPv4 embedded in IPv6 as that IPv4 (mapped, NAT64, 6to4)", () => {
    expect(classifyAddress("::ffff:127.0.0.1", NONE)).toBe("loopback");
    expect(classifyAddress("::ffff:7f00:1", NONE)).toBe("loopback");
    expect(classifyAddress("::FFFF:169.254.169.254", NONE)).toBe("link-local");
    expect(classifyAddress("::ffff:a00:1", NONE)).toBe("private");
    expect(classifyAddress("64:ff9b::a9fe:a9fe", NONE)).toBe("link-local");
    expect(classifyAddress("2002:c0a8:101::1", NONE)).toBe("private");
    expect(classifyAddress("::ffff:8.8.8.8", NONE)).toBeUndefined();
    expect(classifyAddress("2606:4700:4700::1111", NONE)).toBeUndefined();
  });

  it("refuses this host's own addresses", () => {
    const own = new BlockList();
    own.addAddress("203.0.113.5", "ipv4");
    own.addAddress("2001:4860::5", "ipv6");
    expect(classifyAddress("203.0.113.5", own)).toBe("host");
    expect(classifyAddress("::ffff:203.0.113.5", own)).toBe("host");
    expect(classifyAddress("2001:4860::5", own)).toBe("host");
    expect(classifyAddress("203.0.113.6", own)).toBeUndefined();
  });

  it("calls anything that is not an address reserved", () => {
    expect(classifyAddress("not-an-ip", NONE)).toBe("reserved");
  });
});

describe("ipv6Bytes and embeddedIpv4", () => {
  it("expands every form", () => {
    expect(Buffer.from(ipv6Bytes("::1")!).toString("hex")).toBe(`${"0".repeat(30)}01`);
    expect(Buffer.from(ipv6Bytes("1::")!).toString("hex")).toBe(`0001${"0".repeat(28)}`);
    expect(Buffer.from(ipv6Bytes("::ffff:1.2.3.4")!).toString("hex")).toBe(`${"0".repeat(20)}ffff01020304`);
    expect(Buffer.from(ipv6Bytes("1:2:3:4:5:6:7:8")!).toString("hex")).toBe(
      "00010002000300040005000600070008",
    );
    expect(ipv6Bytes("1.2.3.4")).toBeUndefined();
    expect(embeddedIpv4("::ffff:c000:0280")).toBe("192.0.2.128");
    expect(embeddedIpv4("2001:db8::1")).toBeUndefined();
  });
});

describe("canonicalHost", () => {
  it.each([
    // the forms a WHATWG URL (and inet_aton) reads as 127.0.0.1
    ["2130706433", "127.0.0.1"],
    ["0x7f.1", "127.0.0.1"],
    ["0x7f000001", "127.0.0.1"],
    ["127.1", "127.0.0.1"],
    ["0177.0.0.1", "127.0.0.1"],
    ["[::1]", "::1"],
    ["Registry.Example.COM.", "registry.example.com"],
    ["deadbeef.example", "deadbeef.example"],
  ])("%s is %s", (host, canonical) => {
    expect(canonicalHost(host)).toBe(canonical);
  });

  it("agrees with what URL parsing gives webhooks' hosts", () => {
    expect(new URL("http://2130706433/").hostname).toBe("127.0.0.1");
    expect(new URL("http://0x7f.1/").hostname).toBe("127.0.0.1");
  });
});

describe("destinationRules", () => {
  it("parses names, addresses and ranges, with or without a port", () => {
    const rules = destinationRules(
      ["registry.lan", "registry.lan:5000", "10.1.2.0/24", "127.0.0.1:5000", "[::1]:5000", "::1", "fd00::/8"],
      "--allow-private-registry",
    );
    expect(rules.map((r) => [r.kind, r.kind === "name" ? r.name : "", r.port])).toEqual([
      ["name", "registry.lan", undefined],
      ["name", "registry.lan", 5000],
      ["range", "", undefined],
      ["range", "", 5000],
      ["range", "", 5000],
      ["range", "", undefined],
      ["range", "", undefined],
    ]);
  });

  it.each(["", "a b", "10.0.0.0/33", "host:99999", "[registry.lan]:5000", "http://x", "fd00::/200"])(
    "refuses %j",
    (entry) => {
      expect(() => destinationRules([entry], "--allow-private-webhooks")).toThrow(
        `--allow-private-webhooks '${entry}' is not HOST`,
      );
    },
  );
});

describe("DestinationGuard", () => {
  const names: Record<string, string[]> = {
    "public.example": ["198.51.100.7", "2606:4700::1"],
    "mixed.example": ["198.51.100.7", "10.0.0.5"],
    "internal.lan": ["10.1.2.3"],
    "metadata.example": ["::ffff:169.254.169.254"],
  };
  const resolve = async (name: string) => {
    const found = names[name];
    if (!found) throw Object.assign(new Error("not found"), { code: "ENOTFOUND" });
    return found;
  };
  const strict = new DestinationGuard({ allow: [], resolve });

  it("lets public hosts through with every address they resolve to", async () => {
    expect(await strict.check("public.example", 443)).toEqual({
      allowed: true,
      addresses: ["198.51.100.7", "2606:4700::1"],
    });
    expect(await strict.check("198.51.100.9", 80)).toEqual({ allowed: true, addresses: ["198.51.100.9"] });
  });

  it("refuses literals, names with any internal answer, and localhost without asking DNS", async () => {
    const refused = async (host: string) => {
      const c = await strict.check(host, 80);
      if (c.allowed) throw new Error(`${host} was allowed`);
      return describeRefusal(host, c);
    };
    expect(await refused("127.0.0.1")).toBe("127.0.0.1 is a loopback address");
    expect(await refused("2130706433")).toBe("127.0.0.1 is a loopback address");
    expect(await refused("0x7f.1")).toBe("127.0.0.1 is a loopback address");
    expect(await refused("[::ffff:127.0.0.1]")).toBe("::ffff:127.0.0.1 is a loopback address");
    expect(await refused("169.254.169.254")).toBe("169.254.169.254 is a link-local address");
    expect(await refused("mixed.example")).toBe("'mixed.example' resolves to a private address");
    expect(await refused("metadata.example")).toBe("'metadata.example' resolves to a link-local address");
    expect(await refused("localhost")).toBe("'localhost' resolves to a loopback address");
    expect(await refused("app.localhost")).toBe("'app.localhost' resolves to a loopback address");
  });

  it("rejects a name without an address with its code", async () => {
    await expect(strict.check("nowhere.example", 443)).rejects.toEqual(
      new ResolveError("nowhere.example", "ENOTFOUND"),
    );
  });

  it("allows what the operator allowed: names (on a port or all), addresses and ranges", async () => {
    const guard = new DestinationGuard({
      allow: destinationRules(["internal.lan:5000", "127.0.0.1", "fd00::/8", "192.168.0.0/16"], "test"),
      resolve,
    });
    expect((await guard.check("internal.lan", 5000)).allowed).toBe(true);
    // another port of the same name, and the address it resolves to, are not what was allowed
    expect((await guard.check("internal.lan", 5001)).allowed).toBe(false);
    expect((await guard.check("10.1.2.3", 5000)).allowed).toBe(false);
    expect((await guard.check("127.0.0.1", 1234)).allowed).toBe(true);
    expect((await guard.check("::ffff:127.0.0.1", 1234)).allowed).toBe(true);
    expect((await guard.check("127.0.0.2", 1234)).allowed).toBe(false);
    expect((await guard.check("[fd00::1]", 443)).allowed).toBe(true);
    expect((await guard.check("192.168.7.7", 443)).allowed).toBe(true);
    // localhost resolves to ::1 too, which was not allowed
    expect((await guard.check("localhost", 80)).allowed).toBe(false);
    expect(guard.allowsName("Internal.LAN.", 5000)).toBe(true);
  });
});
