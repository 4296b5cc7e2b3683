import dnsPacket from "dns-packet";
import { silentLogger } from "../lib/log.js";
import { DomainDns } from "./domain-dns.js";

const dns = new DomainDns({ domain: "sb.test", address: "127.0.0.1", log: silentLogger });

const RCODE = { NOERROR: 0, REFUSED: 5 };

/** The decoded reply, with its response code (the low four bits of the flags). */
function ask(name: string, type: "A" | "AAAA" = "A"): dnsPacket.Packet & { rcode: number } {
  const query = dnsPacket.encode({
    id: 7,
    type: "query",
    flags: dnsPacket.RECURSION_DESIRED,
    questions: [{ name, type }],
  });
  const reply = dnsPacket.decode(dns.answer(query)!);
  return { ...reply, rcode: (reply.flags ?? 0) & 0x0f };
}

it("answers the domain and every name under it with the proxy's address", () => {
  for (const name of ["sb.test", "8080-abc.sb.test", "49983-x.SB.test"]) {
    const reply = ask(name);
    expect(reply.id).toBe(7);
    expect(reply.rcode).toBe(RCODE.NOERROR);
    expect(reply.answers).toEqual([expect.objectContaining({ type: "A", name, data: "127.0.0.1" })]);
  }
  // no IPv6 address: an empty answer, so clients fall back to the A record
  expect(ask("8080-abc.sb.test", "AAAA")).toMatchObject({ rcode: RCODE.NOERROR, answers: [] });
});

it("refuses names outside the domain and ignores what is not a query", () => {
  expect(ask("example.com").rcode).toBe(RCODE.REFUSED);
  expect(ask("xsb.test").rcode).toBe(RCODE.REFUSED);
  expect(dns.answer(Buffer.from("not dns"))).toBeUndefined();
});
