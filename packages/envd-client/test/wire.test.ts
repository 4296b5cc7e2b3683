/**
 * Wire compatibility with the public `e2b` client, two ways:
 * 1. Our schemas describe exactly the messages, fields, enums and methods that the client's
 *    embedded descriptors describe (names, numbers, types, JSON names, streaming).
 * 2. A live exchange: the real client calls Stat, WatchDir, Start and SendSignal on a
 *    recording server; the request bytes equal what our generated messages serialise to,
 *    and responses serialised by our messages are understood by the client.
 */
import { readFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { create, type DescMessage, fromBinary, type MessageShape, toJsonString } from "@bufbuild/protobuf";
import {
  type DescriptorProto,
  type FileDescriptorProto,
  FileDescriptorProtoSchema,
  timestampFromDate,
} from "@bufbuild/protobuf/wkt";
import { Sandbox } from "e2b";
import {
  EventType,
  FileType,
  file_filesystem_filesystem,
  file_process_process,
  SendSignalRequestSchema,
  SendSignalResponseSchema,
  Signal,
  StartRequestSchema,
  StartResponseSchema,
  StatRequestSchema,
  StatResponseSchema,
  WatchDirRequestSchema,
  WatchDirResponseSchema,
} from "../src/index.js";

type Shape = Record<string, unknown>;

function lowerCamel(name: string): string {
  return name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

function describeMessage(m: DescriptorProto, prefix: string, out: Shape): void {
  const name = `${prefix}${m.name}`;
  out[name] = m.field.map((f) => ({
    name: f.name,
    number: f.number,
    type: f.type,
    label: f.label,
    typeName: f.typeName,
    // Descriptors may leave json_name out when it is the default lowerCamelCase of the name.
    jsonName: f.jsonName || lowerCamel(f.name),
    oneof: Object.hasOwn(f, "oneofIndex") ? m.oneofDecl[f.oneofIndex]?.name : undefined,
    proto3Optional: f.proto3Optional,
  }));
  for (const nested of m.nestedType) describeMessage(nested, `${name}.`, out);
}

/** The parts of a file descriptor that matter on the wire (comments and options do not). */
function wireShape(file: FileDescriptorProto): Shape {
  const out: Shape = { package: file.package };
  for (const m of file.messageType) describeMessage(m, "", out);
  for (const e of file.enumType) out[`enum ${e.name}`] = e.value.map((v) => [v.name, v.number]);
  for (const s of file.service) {
    out[`service ${s.name}`] = s.method.map((x) => [
      x.name,
      x.inputType,
      x.outputType,
      x.clientStreaming,
      x.serverStreaming,
    ]);
  }
  return out;
}

function clientDescriptors(): Map<string, FileDescriptorProto> {
  const dist = readFileSync(require.resolve("e2b"), "utf8");
  const files = new Map<string, FileDescriptorProto>();
  for (const match of dist.matchAll(/fileDesc\)\("([A-Za-z0-9+/=]+)"/g)) {
    const file = fromBinary(FileDescriptorProtoSchema, Buffer.from(match[1]!, "base64"));
    files.set(file.name, file);
  }
  return files;
}

/**
 * Fields of ours that the public client does not know (documented in the .proto): new field
 * numbers only, which its decoder skips and its encoder never sends.
 */
const EXTENSIONS: Record<string, string[]> = {
  "process/process.proto": ["ConnectRequest.output_offset", "ProcessEvent.DataEvent.offset"],
};

/** The shape without the named extension fields (`Message.field`). */
function withoutExtensions(shape: Shape, extensions: string[]): Shape {
  const out: Shape = { ...shape };
  for (const ext of extensions) {
    const dot = ext.lastIndexOf(".");
    const [message, field] = [ext.slice(0, dot), ext.slice(dot + 1)];
    const fields = out[message] as Array<{ name: string }> | undefined;
    expect(fields?.some((f) => f.name === field)).toBe(true);
    out[message] = fields!.filter((f) => f.name !== field);
  }
  return out;
}

describe("schemas match the public client's descriptors", () => {
  const theirs = clientDescriptors();
  it.each([
    ["filesystem/filesystem.proto", file_filesystem_filesystem.proto],
    ["process/process.proto", file_process_process.proto],
  ])("%s", (name, ours) => {
    const reference = theirs.get(name);
    expect(reference).toBeDefined();
    expect(withoutExtensions(wireShape(ours), EXTENSIONS[name] ?? [])).toEqual(wireShape(reference!));
  });
});

/** Connect streaming frames: 1 flag byte, 4 length bytes (big endian), payload. */
function frame(flags: number, payload: string): Buffer {
  const body = Buffer.from(payload);
  const head = Buffer.alloc(5);
  head.writeUInt8(flags, 0);
  head.writeUInt32BE(body.length, 1);
  return Buffer.concat([head, body]);
}

function unframe(buf: Buffer): string {
  return buf.subarray(5, 5 + buf.readUInt32BE(1)).toString();
}

interface Recorded {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

describe("live exchange with the public client", () => {
  const recorded: Recorded[] = [];
  const streamReplies = new Map<string, string[]>();
  const unaryReplies = new Map<string, string>();
  let server: http.Server;
  let sandbox: Sandbox;

  function reply<D extends DescMessage>(schema: D, init: Partial<MessageShape<D>>): string {
    return toJsonString(schema, create(schema, init as never));
  }

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const raw = Buffer.concat(chunks);
        const streaming = String(req.headers["content-type"]).startsWith("application/connect+json");
        const path = req.url ?? "";
        recorded.push({ path, headers: req.headers, body: streaming ? unframe(raw) : raw.toString() });
        if (streaming) {
          res.writeHead(200, { "content-type": "application/connect+json" });
          for (const msg of streamReplies.get(path) ?? []) res.write(frame(0, msg));
          res.end(frame(2, "{}"));
        } else {
          res.writeHead(200, { "content-type": "application/json" });
          res.end(unaryReplies.get(path) ?? "{}");
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    sandbox = new Sandbox({
      sandboxId: "wire-check",
      envdVersion: "0.6.4",
      envdAccessToken: "token-1",
      sandboxUrl: `http://127.0.0.1:${port}`,
      apiKey: "e2b_0123456789abcdef",
    } as ConstructorParameters<typeof Sandbox>[0]);
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  function lastCall(path: string): Recorded {
    const call = recorded.filter((r) => r.path === path).at(-1);
    expect(call).toBeDefined();
    return call!;
  }

  it("Stat", async () => {
    const modified = new Date("2026-01-02T03:04:05.678Z");
    unaryReplies.set(
      "/filesystem.Filesystem/Stat",
      reply(StatResponseSchema, {
        entry: {
          $typeName: "filesystem.EntryInfo",
          name: "a.txt",
          type: FileType.FILE,
          path: "/home/user/a.txt",
          size: 12n,
          mode: 0o644,
          permissions: "-rw-r--r--",
          owner: "user",
          group: "user",
          modifiedTime: timestampFromDate(modified),
          metadata: {},
        },
      }),
    );
    const info = await sandbox.files.getInfo("/home/user/a.txt");
    const call = lastCall("/filesystem.Filesystem/Stat");
    expect(call.body).toBe(
      toJsonString(StatRequestSchema, create(StatRequestSchema, { path: "/home/user/a.txt" })),
    );
    expect(call.headers["connect-protocol-version"]).toBe("1");
    expect(call.headers["x-access-token"]).toBe("token-1");
    expect(call.headers["e2b-sandbox-id"]).toBe("wire-check");
    expect(call.headers["e2b-sandbox-port"]).toBe("49983");
    expect(info).toMatchObject({
      name: "a.txt",
      type: "file",
      path: "/home/user/a.txt",
      size: 12,
      mode: 0o644,
      permissions: "-rw-r--r--",
      owner: "user",
      group: "user",
      modifiedTime: modified,
    });
  });

  it("WatchDir", async () => {
    streamReplies.set("/filesystem.Filesystem/WatchDir", [
      reply(WatchDirResponseSchema, {
        event: { case: "start", value: { $typeName: "filesystem.WatchDirResponse.StartEvent" } },
      }),
      reply(WatchDirResponseSchema, {
        event: {
          case: "filesystem",
          value: { $typeName: "filesystem.FilesystemEvent", name: "new.txt", type: EventType.CREATE },
        },
      }),
      reply(WatchDirResponseSchema, {
        event: { case: "keepalive", value: { $typeName: "filesystem.WatchDirResponse.KeepAlive" } },
      }),
    ]);
    const events: unknown[] = [];
    const ended = new Promise<void>((resolve) => {
      void sandbox.files
        .watchDir("/home/user", (e) => void events.push(e), { recursive: true, onExit: () => resolve() })
        .catch(() => resolve());
    });
    await ended;
    const call = lastCall("/filesystem.Filesystem/WatchDir");
    expect(call.body).toBe(
      toJsonString(
        WatchDirRequestSchema,
        create(WatchDirRequestSchema, { path: "/home/user", recursive: true }),
      ),
    );
    expect(call.headers["content-type"]).toBe("application/connect+json");
    expect(events).toEqual([{ name: "new.txt", type: "create" }]);
  });

  it("Start", async () => {
    streamReplies.set("/process.Process/Start", [
      reply(StartResponseSchema, {
        event: {
          $typeName: "process.ProcessEvent",
          event: { case: "start", value: { $typeName: "process.ProcessEvent.StartEvent", pid: 42 } },
        },
      }),
      reply(StartResponseSchema, {
        event: {
          $typeName: "process.ProcessEvent",
          event: {
            case: "data",
            value: {
              $typeName: "process.ProcessEvent.DataEvent",
              output: { case: "stdout", value: Buffer.from("hi\n") },
              offset: 0n,
            },
          },
        },
      }),
      reply(StartResponseSchema, {
        event: {
          $typeName: "process.ProcessEvent",
          event: {
            case: "end",
            value: {
              $typeName: "process.ProcessEvent.EndEvent",
              exitCode: 0,
              exited: true,
              status: "exit status 0",
            },
          },
        },
      }),
    ]);
    const result = await sandbox.commands.run("echo hi", { envs: { A: "1" }, cwd: "/tmp" });
    const call = lastCall("/process.Process/Start");
    expect(call.body).toBe(
      toJsonString(
        StartRequestSchema,
        create(StartRequestSchema, {
          process: { cmd: "/bin/bash", args: ["-l", "-c", "echo hi"], envs: { A: "1" }, cwd: "/tmp" },
          stdin: false,
        }),
      ),
    );
    expect(result).toMatchObject({ exitCode: 0, stdout: "hi\n", stderr: "" });
  });

  it("SendSignal", async () => {
    unaryReplies.set("/process.Process/SendSignal", reply(SendSignalResponseSchema, {}));
    await expect(sandbox.commands.kill(42)).resolves.toBe(true);
    const call = lastCall("/process.Process/SendSignal");
    expect(call.body).toBe(
      toJsonString(
        SendSignalRequestSchema,
        create(SendSignalRequestSchema, {
          process: { selector: { case: "pid", value: 42 } },
          signal: Signal.SIGKILL,
        }),
      ),
    );
  });
});
