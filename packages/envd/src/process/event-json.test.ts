import { create, type MessageInitShape, toJsonString } from "@bufbuild/protobuf";
import { ConnectResponseSchema, type ProcessEventSchema, StartResponseSchema } from "@x/envd-client";
import { toJsonString as connectToJsonString } from "../connect-protobuf.js";
import { outputEventJson } from "./event-json.js";

const bytes = Buffer.from('hello, \u0000 world \u00ff "quoted"\n');
const sliced = Buffer.concat([Buffer.from("xxxx"), bytes]).subarray(4);

describe("outputEventJson", () => {
  test("writes exactly what protobuf-es's toJsonString writes for output", () => {
    for (const schema of [StartResponseSchema, ConnectResponseSchema])
      for (const stream of ["stdout", "stderr", "pty"] as const)
        for (const data of [bytes, sliced, new Uint8Array(0), new Uint8Array(65_537).fill(7)])
          for (const offset of [0n, 1n, 18_446_744_073_709_551_615n]) {
            const message = create(schema, {
              event: { event: { case: "data", value: { output: { case: stream, value: data }, offset } } },
            });
            const json = outputEventJson(message);
            expect(json).toBe(toJsonString(schema, message));
            expect(connectToJsonString(schema, message)).toBe(json);
          }
  });

  test("leaves every other event to the generic encoder", () => {
    const events: MessageInitShape<typeof ProcessEventSchema>["event"][] = [
      { case: "start" as const, value: { pid: 7 } },
      { case: "end" as const, value: { exitCode: 1, exited: true, status: "exit status 1", error: "x" } },
      { case: "keepalive" as const, value: {} },
      { case: "data" as const, value: { offset: 5n } },
    ];
    for (const event of events) {
      const message = create(StartResponseSchema, { event: { event } });
      expect(outputEventJson(message)).toBeUndefined();
      expect(connectToJsonString(StartResponseSchema, message)).toBe(
        toJsonString(StartResponseSchema, message),
      );
    }
    expect(outputEventJson(create(StartResponseSchema, {}))).toBeUndefined();
  });
});
