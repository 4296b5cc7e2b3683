import { addressVerdict, allowedDomain, deniesEverything, egressRules, ipv4Cidr } from "./egress-rules.js";
import { NetworkManager } from "./network-manager.js";

describe("egress rules", () => {
  it("splits addresses from names, canonical and without nested CIDRs", () => {
    const r = egressRules({
      allowOut: ["198.51.100.7", "198.51.100.0/24", "198.51.100.9/32", "API.Example.com", "2001:db8::1"],
      denyOut: ["10.1.2.3/8", "::/0"],
    });
    expect(r).toEqual({ allow: ["198.51.100.0/24"], deny: ["10.0.0.0/8"], domains: ["api.example.com"] });
    expect(egressRules({ allowInternetAccess: false, allowOut: [], denyOut: [] }).deny).toEqual([
      "0.0.0.0/0",
    ]);
    expect(deniesEverything(egressRules({ allowOut: [], denyOut: ["0.0.0.0/0"] }))).toBe(true);
    expect(ipv4Cidr("1.2.3.4/40")).toBeUndefined();
  });

  it("lets an allow beat a deny, and allows what nothing denies", () => {
    const r = egressRules({ allowOut: ["198.51.100.7"], denyOut: ["198.51.100.0/24"] });
    expect(addressVerdict(r, "198.51.100.7")).toEqual({ allowed: true, rule: "allowOut 198.51.100.7/32" });
    expect(addressVerdict(r, "198.51.100.8")).toEqual({ allowed: false, rule: "denyOut 198.51.100.0/24" });
    expect(addressVerdict(r, "203.0.113.1")).toEqual({ allowed: true, rule: "default (not denied)" });
  });

  it("matches names exactly, wildcards below the apex at any depth, and * everything", () => {
    const r = egressRules({ allowOut: ["api.example.com", "*.example.org"], denyOut: ["0.0.0.0/0"] });
    expect(allowedDomain(r, "API.example.com.")).toBe("api.example.com");
    expect(allowedDomain(r, "x.api.example.com")).toBeUndefined();
    expect(allowedDomain(r, "a.b.example.org")).toBe("*.example.org");
    expect(allowedDomain(r, "example.org")).toBeUndefined();
    expect(allowedDomain(r, "badexample.org")).toBeUndefined();
    expect(allowedDomain(egressRules({ allowOut: ["*"], denyOut: [] }), "anything.test")).toBe("*");
  });
});

describe("egress rules with header transforms", () => {
  const egress = {
    allowOut: [],
    denyOut: [],
    rules: { "api.example.com": [{ transform: { headers: { Authorization: "Bearer ${e2b.secrets.k}" } } }] },
  };

  it("carry the compiled rules, also for a sandbox adopted after a restart", () => {
    expect(egressRules({ allowOut: [], denyOut: [] }).transforms).toBeUndefined();
    expect(egressRules(egress).transforms?.exact.get("api.example.com")?.headers).toEqual([
      { name: "Authorization", value: ["Bearer ", { kind: "secret", name: "k" }] },
    ]);
    const network = new NetworkManager({ prefix: "u" });
    const net = {
      id: "sbx",
      netns: "u-sbx",
      netnsPath: "/run/netns/u-sbx",
      hostIf: "uh0",
      slot: 0,
      hostIp: "10.200.0.1",
      sandboxIp: "10.200.0.2",
      prefixLength: 30 as const,
    };
    network.remember(net, egress);
    expect(network.egressAt("10.200.0.2")?.rules.transforms).toBeDefined();
    expect(network.egressOf("sbx")?.rules.transforms?.exact.has("api.example.com")).toBe(true);
  });
});
