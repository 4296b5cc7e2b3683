/**
 * The host name a client names in its first bytes: TLS SNI from a ClientHello, or the Host
 * header of an HTTP/1 request. `complete` says whether more bytes could still change the
 * answer (a record or header block cut short).
 */
export interface Sniffed {
  name?: string;
  complete: boolean;
}

/** Bytes a client's first flight may take before we decide without it. */
export const SNIFF_LIMIT = 16 * 1024;

export function sniffName(data: Buffer): Sniffed {
  if (data.length === 0) return { complete: false };
  if (data[0] === 0x16) return tlsServerName(data);
  if (/^[A-Z]{3,10} /.test(data.subarray(0, 11).toString("latin1"))) return httpHost(data);
  return { complete: true };
}

/** SNI of a TLS ClientHello (RFC 8446 4.1.2, RFC 6066 3); the hello may span several records. */
export function tlsServerName(data: Buffer): Sniffed {
  // gather the handshake bytes of the leading handshake records
  const chunks: Buffer[] = [];
  let offset = 0;
  while (offset + 5 <= data.length && data[offset] === 0x16) {
    const length = data.readUInt16BE(offset + 3);
    if (offset + 5 + length > data.length) {
      chunks.push(data.subarray(offset + 5));
      offset = data.length;
      break;
    }
    chunks.push(data.subarray(offset + 5, offset + 5 + length));
    offset += 5 + length;
  }
  const hs = Buffer.concat(chunks);
  if (hs.length < 4) return { complete: false };
  if (hs[0] !== 0x01) return { complete: true };
  const helloLength = hs.readUIntBE(1, 3);
  if (hs.length < 4 + helloLength) return { complete: hs.length >= SNIFF_LIMIT };
  const hello = hs.subarray(4, 4 + helloLength);
  try {
    let p = 2 + 32; // version, random
    p += 1 + hello[p]!; // session id
    p += 2 + hello.readUInt16BE(p); // cipher suites
    p += 1 + hello[p]!; // compression methods
    if (p + 2 > hello.length) return { complete: true };
    const end = p + 2 + hello.readUInt16BE(p);
    p += 2;
    while (p + 4 <= end) {
      const type = hello.readUInt16BE(p);
      const length = hello.readUInt16BE(p + 2);
      if (type === 0) {
        // server_name: list length, then (type 0 = host_name, length, name)
        const nameType = hello[p + 6];
        const nameLength = hello.readUInt16BE(p + 7);
        if (nameType !== 0) return { complete: true };
        return { name: hello.subarray(p + 9, p + 9 + nameLength).toString("latin1"), complete: true };
      }
      p += 4 + length;
    }
  } catch {
    // a malformed hello names nobody
  }
  return { complete: true };
}

/** Host header of an HTTP/1 request head, without its port. */
export function httpHost(data: Buffer): Sniffed {
  const text = data.subarray(0, SNIFF_LIMIT).toString("latin1");
  const end = text.indexOf("\r\n\r\n");
  if (end < 0 && data.length < SNIFF_LIMIT) return { complete: false };
  const head = end < 0 ? text : text.slice(0, end);
  const host = /\r\nhost:[ \t]*([^\r\n]*)/i.exec(head)?.[1]?.trim();
  if (!host) return { complete: true };
  const name = host.startsWith("[") ? host.slice(1, host.indexOf("]")) : host.replace(/:\d+$/, "");
  return { name, complete: true };
}
