import { Duplex } from "node:stream";
import { connect, type TLSSocket } from "node:tls";
import { parseEntry } from "./conntrack.js";
import { NameMemory } from "./name-memory.js";
import { sniffName } from "./sniff.js";

/** The ClientHello Node's own TLS client sends for a server name. */
function clientHello(servername?: string): Promise<Buffer> {
  return new Promise((resolve) => {
    const wire = new Duplex({
      read() {},
      write(chunk: Buffer) {
        resolve(chunk);
        setImmediate(() => socket.destroy());
      },
    });
    const socket: TLSSocket = connect({ socket: wire, ...(servername ? { servername } : {}) });
    socket.on("error", () => undefined);
  });
}

describe("sniffName", () => {
  it("reads SNI from a TLS ClientHello, also when it arrives in pieces", async () => {
    const hello = await clientHello("api.example.com");
    expect(sniffName(hello)).toEqual({ name: "api.example.com", complete: true });
    expect(sniffName(hello.subarray(0, 40))).toEqual({ complete: false });
    expect(sniffName(await clientHello())).toEqual({ complete: true });
  });

  it("reads the Host of an HTTP request head, without its port", () => {
    expect(sniffName(Buffer.from("GET / HTTP/1.1\r\nHost: a.test:8080\r\nX: y\r\n\r\n"))).toEqual({
      name: "a.test",
      complete: true,
    });
    expect(sniffName(Buffer.from("GET / HTTP/1.1\r\nHo"))).toEqual({ complete: false });
    expect(sniffName(Buffer.from("SSH-2.0-OpenSSH\r\n"))).toEqual({ complete: true });
  });
});

describe("parseEntry", () => {
  it("reads both tuples of a TCP conntrack line", () => {
    const line =
      "ipv4     2 tcp      6 299 ESTABLISHED src=10.200.0.2 dst=198.51.100.10 sport=40000 dport=443 src=10.200.0.1 dst=10.200.0.2 sport=41234 dport=40000 [ASSURED] mark=0 zone=0 use=2";
    expect(parseEntry(line)).toEqual({
      original: { src: "10.200.0.2", dst: "198.51.100.10", sport: 40000, dport: 443 },
      reply: { src: "10.200.0.1", dst: "10.200.0.2", sport: 41234, dport: 40000 },
    });
    expect(parseEntry("ipv4 2 udp 17 29 src=1.1.1.1 dst=2.2.2.2 sport=1 dport=2")).toBeUndefined();
  });
});

describe("NameMemory", () => {
  it("remembers answers past short TTLs, forgets them later and per sandbox", () => {
    let now = 0;
    const memory = new NameMemory({ minTtlMs: 1000, maxPerSandbox: 2 }, () => now);
    memory.remember("s", "A.test.", [{ ip: "198.51.100.1", ttlSeconds: 0 }]);
    expect(memory.nameOf("s", "198.51.100.1")).toBe("a.test");
    expect(memory.nameOf("t", "198.51.100.1")).toBeUndefined();
    now = 1001;
    expect(memory.nameOf("s", "198.51.100.1")).toBeUndefined();
    memory.remember("s", "b.test", [
      { ip: "198.51.100.2", ttlSeconds: 60 },
      { ip: "198.51.100.3", ttlSeconds: 60 },
      { ip: "198.51.100.4", ttlSeconds: 60 },
    ]);
    expect(memory.nameOf("s", "198.51.100.2")).toBeUndefined();
    expect(memory.nameOf("s", "198.51.100.4")).toBe("b.test");
    memory.forget("s");
    expect(memory.nameOf("s", "198.51.100.4")).toBeUndefined();
  });
});
