import { type ChildProcess, spawn } from "node:child_process";
import { command } from "../../../src/runtime/command.js";
import { httpGet, waitFor } from "./http.js";

/**
 * A stand-in for "the internet": a netns of our own, routed from the host, with an HTTP server
 * that answers with the caller's address. Tests may send packets only to namespaces they made,
 * so internet on/off is checked against this host instead of a real one.
 */
export class FakeOutside {
  readonly netns: string;
  readonly hostIf: string;
  readonly hostIp: string;
  readonly ip: string;
  readonly port = 8080;
  private server?: ChildProcess;

  /** `prefix` names the netns `<prefix>out` and host link `<prefix>o0`; `net` is an a.b.c.0 whose /30 it uses. */
  constructor(prefix: string, net: string) {
    this.netns = `${prefix}out`;
    this.hostIf = `${prefix}o0`;
    const base = net.split(".").slice(0, 3).join(".");
    this.hostIp = `${base}.1`;
    this.ip = `${base}.2`;
  }

  get url(): string {
    return `http://${this.ip}:${this.port}/`;
  }

  async start(): Promise<void> {
    await this.stop();
    await command("ip", ["netns", "add", this.netns]);
    await command("ip", [
      "link",
      "add",
      this.hostIf,
      "type",
      "veth",
      "peer",
      "name",
      "eth0",
      "netns",
      this.netns,
    ]);
    await command("ip", ["addr", "add", `${this.hostIp}/30`, "dev", this.hostIf]);
    await command("ip", ["link", "set", this.hostIf, "up"]);
    await command("ip", ["-n", this.netns, "-batch", "-"], {
      input: `link set lo up\naddr add ${this.ip}/30 dev eth0\nlink set eth0 up\nroute add default via ${this.hostIp}\n`,
    });
    const script = `require('node:http').createServer((q, s) => s.end('outside saw ' + q.socket.remoteAddress)).listen(${this.port}, '0.0.0.0')`;
    this.server = spawn("ip", ["netns", "exec", this.netns, process.execPath, "-e", script], {
      stdio: "ignore",
    });
    await waitFor(() => httpGet(this.url, 500), 5000);
  }

  async stop(): Promise<void> {
    this.server?.kill("SIGKILL");
    this.server = undefined;
    await command("ip", ["netns", "delete", this.netns]).catch(() => undefined);
    await command("ip", ["link", "delete", this.hostIf]).catch(() => undefined);
  }
}
