import { create, toJsonString } from "@bufbuild/protobuf";
import { TimestampSchema } from "@bufbuild/protobuf/wkt";
import { EntryInfoSchema, FileType, ListDirResponseSchema } from "@x/envd-client";
import { toJsonString as connectToJsonString } from "../connect-protobuf.js";
import { listDirResponseJson } from "./list-json.js";

const time = (seconds: bigint, nanos: number) => create(TimestampSchema, { seconds, nanos });

const entries = [
  create(EntryInfoSchema, {}),
  create(EntryInfoSchema, {
    name: "f.txt",
    type: FileType.FILE,
    path: "/home/user/f.txt",
    size: 75n,
    mode: 0o644,
    permissions: "-rw-r--r--",
    owner: "user",
    group: "user",
    modifiedTime: time(1_764_222_222n, 0),
    metadata: {},
  }),
  create(EntryInfoSchema, {
    name: 'quote " back \\ tab \t ünï 😀',
    type: FileType.DIRECTORY,
    path: "/d",
    size: -1n,
    mode: 0o755,
    modifiedTime: time(0n, 123_000_000),
    metadata: { a: "1", __proto__: "x", "key with space": "v\u0001" },
  }),
  create(EntryInfoSchema, {
    name: "l",
    type: FileType.SYMLINK,
    size: 9_007_199_254_740_993n,
    modifiedTime: time(-62_135_596_800n, 123_456_000),
    symlinkTarget: "",
  }),
  create(EntryInfoSchema, { name: "n", modifiedTime: time(253_402_300_799n, 1) }),
];

describe("listDirResponseJson", () => {
  test("writes exactly what protobuf-es's toJsonString writes", () => {
    for (const list of [[], entries, ...entries.map((e) => [e])]) {
      const message = create(ListDirResponseSchema, { entries: list });
      expect(listDirResponseJson(message)).toBe(toJsonString(ListDirResponseSchema, message));
    }
  });

  test("leaves what it does not cover to the generic encoder", () => {
    for (const entry of [
      create(EntryInfoSchema, { type: 7 as FileType }),
      create(EntryInfoSchema, { modifiedTime: time(-62_135_596_801n, 0) }),
      create(EntryInfoSchema, { modifiedTime: time(0n, -1) }),
    ]) {
      const message = create(ListDirResponseSchema, { entries: [entry] });
      expect(listDirResponseJson(message)).toBeUndefined();
    }
    const outOfRange = create(ListDirResponseSchema, {
      entries: [create(EntryInfoSchema, { modifiedTime: time(-62_135_596_801n, 0) })],
    });
    expect(() => connectToJsonString(ListDirResponseSchema, outOfRange)).toThrow(/0001-01-01/);
  });

  test("connect's toJsonString keeps options and other messages generic", () => {
    const message = create(ListDirResponseSchema, { entries: entries.slice(1, 2) });
    expect(connectToJsonString(ListDirResponseSchema, message, { enumAsInteger: true })).toBe(
      toJsonString(ListDirResponseSchema, message, { enumAsInteger: true }),
    );
    expect(connectToJsonString(EntryInfoSchema, entries[1]!)).toBe(
      toJsonString(EntryInfoSchema, entries[1]!),
    );
  });
});
