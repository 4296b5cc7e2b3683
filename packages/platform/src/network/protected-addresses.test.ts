import dnsPacket from "dns-packet";
import { createLogger } from "../lib/log.js";
import { withheld } from "./dns-forwarder.js";
import { localPrefixesOf, ProtectedAddresses } from "./protected-addresses.js";

const log = createLogger({ level: "silent" });

// as Linux prints it: the local routes of 127.0.0.0/8, an uplink's 192.0.2.2 and an AnyIP /24
const FIB_TRIE = `Main:
  +-- 0.0.0.0/0 3 0 5
     |-- 0.0.0.0
        /0 universe UNICAST
     +-- 127.0.0.0/8 2 0 2
        +-- 127.0.0.0/31 1 0 0
           |-- 127.0.0.0
              /8 host LOCAL
           |-- 127.0.0.1
              /32 host LOCAL
        |-- 127.255.255.255
           /32 link BROADCAST
     +-- 192.0.2.0/24 2 0 2
        +-- 192.0.2.0/30 2 0 2
           |-- 192.0.2.0
              /24 link UNICAST
           |-- 192.0.2.2
              /32 host LOCAL
     |-- 198.18.7.0
        /24 host LOCAL
Local:
  +-- 0.0.0.0/0 3 0 5
     |-- 192.0.2.2
        /32 host LOCAL
`;

describe("protected addresses", () => {
  it("reads this host's own addresses from the kernel's local routes, not its other routes", () => {
    expect(localPrefixesOf(FIB_TRIE).sort()).toEqual([
      "127.0.0.0/8",
      "127.0.0.1/32",
      "192.0.2.2/32",
      "198.18.7.0/24",
    ]);
  });

  it("says why: the pool, the host's addresses, the cluster's hosts (names resolved); the rest is not its to say", async () => {
    let hosts = ["10.1.0.5", "catalog.internal", ""];
    const told: string[][] = [];
    const p = new ProtectedAddresses({
      pool: "10.200.0.0/16",
      localPrefixes: async () => localPrefixesOf(FIB_TRIE),
      clusterHosts: async () => hosts,
      resolve: async (name) => {
        if (name === "catalog.internal") return ["10.1.0.9"];
        throw new Error(`${name} does not resolve`);
      },
      onClusterChange: async (ips) => void told.push([...ips]),
      log,
    });
    await p.start();
    try {
      expect(p.why("10.200.3.2")).toBe("sandbox pool");
      expect(p.why("192.0.2.2")).toBe("host address");
      expect(p.why("198.18.7.44")).toBe("host address");
      expect(p.why("10.1.0.5")).toBe("cluster node");
      expect(p.why("10.1.0.9")).toBe("cluster node");
      expect(p.why("192.0.2.3")).toBeUndefined();
      expect(p.why("8.8.8.8")).toBeUndefined();
      expect(p.why("::1")).toBeUndefined();
      expect(told).toEqual([["10.1.0.5", "10.1.0.9"]]);
      // a node that leaves, or a name that fails once, does not open its address again
      hosts = ["catalog.gone"];
      await p.refreshCluster();
      expect(p.why("10.1.0.9")).toBe("cluster node");
      expect(told).toHaveLength(1);
    } finally {
      p.close();
    }
  });
});

describe("DNS answers withheld", () => {
  const answer = dnsPacket.encode({
    id: 7,
    type: "response",
    flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE,
    questions: [{ type: "A", name: "intranet.corp" }],
    answers: [
      { type: "CNAME", name: "intranet.corp", ttl: 60, data: "web.corp" },
      { type: "A", name: "web.corp", ttl: 60, data: "10.1.2.3" },
      { type: "A", name: "web.corp", ttl: 60, data: "198.51.100.7" },
    ],
  });

  it("drops the addresses it is told to and keeps the rest of the answer", () => {
    const out = dnsPacket.decode(
      withheld(answer, (_n, ip) => (ip.startsWith("10.") ? "private range" : undefined)),
    );
    expect(out.id).toBe(7);
    expect(out.answers?.map((a) => [a.type, (a as dnsPacket.StringAnswer).data])).toEqual([
      ["CNAME", "web.corp"],
      ["A", "198.51.100.7"],
    ]);
  });

  it("passes an answer it keeps whole, byte for byte", () => {
    expect(withheld(answer, () => undefined)).toBe(answer);
  });
});
