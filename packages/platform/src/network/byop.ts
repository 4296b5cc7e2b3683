import type net from "node:net";
import { isIP } from "node:net";
import { SocksClient } from "socks";
import { invalid } from "../model/errors.js";
import type { StoredEgressProxy } from "../model/network.js";

/** What a client sends (E2B's `SandboxEgressProxyConfig`). */
export interface EgressProxyInput {
  address: string;
  username?: string | null;
  password?: string | null;
}

const MAX_BYTES = 255;

export interface EgressProxyCheck {
  /** IPv4 addresses of a name through the platform's upstream resolvers. */
  resolve(name: string): Promise<string[]>;
  /** Whether a sandbox may never reach this address (private and not opened by the operator). */
  forbidden(ip: string): boolean;
}

/** `host` and `port` of a canonical address. */
export function splitAddress(address: string): { host: string; port: number } {
  const i = address.lastIndexOf(":");
  return { host: address.slice(0, i).replace(/^\[(.*)\]$/, "$1"), port: Number(address.slice(i + 1)) };
}

/** The 400 for a configuration E2B would refuse, with E2B's message. */
const refused = (reason: string) => invalid(`Invalid egress proxy config: ${reason}`);

/**
 * Checks a proxy configuration the way the hosted service does (E2B's messages): `host:port`,
 * port 1-65535, the host lower-cased and resolving (an IP literal is itself), none of its
 * addresses private unless the operator opened it, a password only with a username, each at
 * most 255 bytes. Returns it as kept (the store seals the password, bound to the sandbox); never
 * puts the password in a message.
 */
export async function checkEgressProxy(
  input: EgressProxyInput,
  check: EgressProxyCheck,
): Promise<StoredEgressProxy> {
  const address = (input.address ?? "").trim();
  if (address === "") throw refused("egress proxy address must not be empty");
  const split = /^(?:\[([^\]]*)\]|([^:[\]]*)):([^:]*)$/.exec(address);
  if (!split) throw refused("egress proxy address must be in host:port form");
  const host = (split[1] ?? split[2] ?? "").trim().toLowerCase();
  const port = split[3] ?? "";
  if (host === "") throw refused("egress proxy host must not be empty");
  const portNum = /^\d{1,5}$/.test(port) ? Number(port) : Number.NaN;
  if (!(portNum >= 1 && portNum <= 65535)) {
    throw refused(`egress proxy port ${JSON.stringify(port)} is not a valid 1-65535 value`);
  }
  if (Buffer.byteLength(host) > 253) throw refused(`egress proxy host is longer than 253 bytes`);
  let ips: string[];
  if (isIP(host) !== 0) ips = [host];
  else {
    try {
      ips = await check.resolve(host);
    } catch (err) {
      throw refused(`resolve egress proxy host "${host}": ${(err as Error).message}`);
    }
    if (ips.length === 0) throw refused(`resolve egress proxy host "${host}": no A records for "${host}"`);
  }
  for (const ip of ips) {
    // sandboxes have no IPv6 route: an IPv6 proxy address could never be reached
    if (isIP(ip) === 6 || check.forbidden(ip)) {
      throw refused(
        `egress proxy endpoint resolves to an internal / denied IP range: ${host} resolves to ${ip}`,
      );
    }
  }
  const username = input.username ?? "";
  const password = input.password ?? "";
  if (username === "" && password !== "") {
    throw refused("egress proxy password must be empty when username is empty");
  }
  if (Buffer.byteLength(username) > MAX_BYTES)
    throw refused("egress proxy username is longer than 255 bytes");
  if (Buffer.byteLength(password) > MAX_BYTES)
    throw refused("egress proxy password is longer than 255 bytes");
  return {
    address: `${isIP(host) === 6 ? `[${host}]` : host}:${portNum}`,
    ...(username !== "" ? { username } : {}),
    ...(password !== "" ? { password } : {}),
  };
}

/** Why a tunnel could not be made: worded for the decision log, without credentials. */
export class TunnelError extends Error {}

export interface TunnelOptions {
  proxy: StoredEgressProxy;
  /** The proxy's own address, resolved and checked by the caller. */
  proxyIp: string;
  password: string | undefined;
  /** A name (sent as ATYP=domain: the proxy resolves it) or an IPv4 address. */
  host: string;
  port: number;
  timeoutMs: number;
  /** Opens the TCP connection to the proxy (the egress proxy's marked sockets); a plain one by default. */
  connect?: (ip: string, port: number) => net.Socket;
}

/** A TCP connection to `host:port` through a SOCKS5 proxy (RFC 1928, RFC 1929 credentials). */
export async function socksTunnel(o: TunnelOptions): Promise<net.Socket> {
  const { port } = splitAddress(o.proxy.address);
  try {
    const { socket } = await SocksClient.createConnection({
      command: "connect",
      proxy: {
        host: o.proxyIp,
        port,
        type: 5,
        ...(o.proxy.username !== undefined ? { userId: o.proxy.username, password: o.password ?? "" } : {}),
      },
      destination: { host: o.host, port: o.port },
      timeout: o.timeoutMs,
      // the handshake is written once it connects
      ...(o.connect ? { existing_socket: o.connect(o.proxyIp, port) } : {}),
    });
    return socket;
  } catch (err) {
    // the socks client's messages name states and replies, never the credentials
    throw new TunnelError(String((err as Error).message ?? err).slice(0, 200));
  }
}
