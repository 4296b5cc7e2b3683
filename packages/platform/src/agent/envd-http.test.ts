/**
 * A sandbox's root can put its own server on envd's port: what the host reads of its answers
 * is bounded (review H3). The "envd" here is a server on a loopback address of its own.
 */
import http from "node:http";
import { ENVD_PORT } from "@x/envd-client";
import { runCommand } from "./commands.js";
import { ENVD_ANSWER_MAX_BYTES, ENVD_MESSAGE_MAX_BYTES } from "./envd-http.js";
import { initEnvd } from "./init.js";

const ADDRESS = "127.77.41.3";
const MiB = 2 ** 20;

/** A Connect envelope: flags, big-endian length, payload. */
function envelope(payload: Buffer, flags = 0): Buffer {
  const header = Buffer.alloc(5);
  header[0] = flags;
  header.writeUInt32BE(payload.length, 1);
  return Buffer.concat([header, payload]);
}

const json = (value: unknown) => Buffer.from(JSON.stringify(value));

describe("envd's answers, read with a limit", () => {
  let server: http.Server;
  let handler: (req: http.IncomingMessage, res: http.ServerResponse) => void = () => undefined;
  /** Bytes the fake envd got written before the host went away. */
  let written = 0;

  beforeAll(async () => {
    server = http.createServer((req, res) => handler(req, res));
    await new Promise<void>((resolve) => server.listen(ENVD_PORT, ADDRESS, resolve));
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  /** Writes `chunk` until the client goes or `total` bytes went. */
  function flood(res: http.ServerResponse, chunk: Buffer, total: number): void {
    written = 0;
    const more = (): void => {
      while (written < total && !res.destroyed) {
        written += chunk.length;
        if (!res.write(chunk)) return void res.once("drain", more);
      }
      res.end();
    };
    more();
  }

  const target = { address: ADDRESS, accessToken: "token" };

  it("refuses an /init answer past its limit, without reading the rest", async () => {
    handler = (_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      flood(res, Buffer.alloc(64 * 1024, 0x20), 512 * MiB);
    };
    const identity = { sandboxId: "s", templateId: "t", teamId: "x" };
    await expect(initEnvd(target, { envVars: {}, identity })).rejects.toThrow(
      "envd's answer to POST /init is larger than the 1 MiB the platform reads of it",
    );
    expect(written).toBeLessThan(ENVD_ANSWER_MAX_BYTES + 16 * MiB);
  });

  it("refuses a stream message past its limit at its header", async () => {
    handler = (_req, res) => {
      res.writeHead(200, { "content-type": "application/connect+json" });
      // one message said to be 1 GiB long, then its bytes
      res.write(Buffer.from([0, 0x40, 0, 0, 0]));
      flood(res, Buffer.alloc(64 * 1024, 0x20), 1024 * MiB);
    };
    await expect(runCommand(target, { cmd: "true", user: "root" })).rejects.toThrow(
      /a message of envd's answer to POST \/process\.Process\/Start is larger than the 4 MiB/,
    );
    expect(written).toBeLessThan(ENVD_MESSAGE_MAX_BYTES + 16 * MiB);
  });

  it("reads a stream longer than one message's limit, message by message", async () => {
    const data = Buffer.alloc(60 * 1024, 0x61);
    handler = (_req, res) => {
      res.writeHead(200, { "content-type": "application/connect+json" });
      res.write(envelope(json({ event: { start: { pid: 7 } } })));
      // 8 MiB of output in all: twice one message's limit
      for (let i = 0; i < 140; i++) {
        res.write(
          envelope(
            json({
              event: { data: { stdout: Buffer.concat([data, Buffer.from("\n")]).toString("base64") } },
            }),
          ),
        );
      }
      res.write(envelope(json({ event: { end: { exitCode: 0, exited: true, status: "exit status 0" } } })));
      res.end(envelope(json({}), 2));
    };
    const lines: string[] = [];
    const result = await runCommand(
      target,
      { cmd: "x", user: "root" },
      { onOutput: (line) => lines.push(line) },
    );
    expect(result).toEqual({ exitCode: 0, status: "exit status 0" });
    expect(lines.length).toBe(140);
    expect(lines.every((l) => l === data.toString())).toBe(true);
  });
});
