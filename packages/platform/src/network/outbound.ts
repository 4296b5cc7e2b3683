import net from "node:net";
import { hostNet } from "../lib/host-native.js";

/** Opens a TCP connection from the host to `ip:port` (connecting; errors are the socket's). */
export type OutboundConnect = (ip: string, port: number) => net.Socket;

/**
 * How the egress proxy connects out: with `mark`, every socket carries it (SO_MARK) before it
 * connects, so the firewall's output chain judges the connection too (firewall.ts); without,
 * plain sockets (unit tests, which need no root). A socket that cannot be marked fails as a
 * connection would: nothing goes out unmarked.
 */
export function outboundConnector(mark?: number): OutboundConnect {
  if (mark === undefined) return (ip, port) => net.connect({ host: ip, port });
  return (ip, port) => {
    let fd: number;
    try {
      fd = hostNet().markedTcpSocket(mark);
    } catch (err) {
      const failed = new net.Socket();
      process.nextTick(() => failed.destroy(err as Error));
      return failed;
    }
    return new net.Socket({ fd }).connect({ host: ip, port });
  };
}
