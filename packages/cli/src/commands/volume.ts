import { createReadStream, createWriteStream } from "node:fs";
import { stat } from "node:fs/promises";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createPlatformClient, type PlatformClient, type Schemas } from "@x/platform-client";
import { CliError, CONNECTION_HELP, type Connection, call, connect } from "../connection.js";
import { type Io, print } from "../output/io.js";
import { table } from "../output/table.js";
import { integer, parse, required } from "./args.js";

const HELP = `x volume: persistent volumes, mounted into sandboxes by name

  x volume create NAME [--size MB]   create a volume (the platform's default size otherwise)
  x volume list                      the team's volumes
  x volume info VOLUME               size, use, token and the sandboxes that mount it
  x volume rm VOLUME                 delete a volume and its files (refused while mounted)
  x volume ls VOLUME[:PATH] [--depth N]
                                     files of a volume (its root by default)
  x volume cp SRC DST [--force]      copy a file in or out: one side is VOLUME:PATH
                                     (--force replaces a file and creates missing directories)

VOLUME is a volume's name or ID. Mount one with 'x sandbox create --volume NAME:/mnt/data'.

${CONNECTION_HELP}`;

/** The team's volume by name or ID, with its token. */
async function find(conn: Connection, ref: string): Promise<Schemas["VolumeAndToken"]> {
  const { data: all } = await call(conn, "listing volumes", conn.api.GET("/volumes"));
  const found = all.find((v) => v.volumeID === ref) ?? all.find((v) => v.name === ref);
  if (!found) throw new CliError(`no volume '${ref}': 'x volume list' shows the team's volumes`);
  const { data } = await call(
    conn,
    `reading volume ${ref}`,
    conn.api.GET("/volumes/{volumeID}", { params: { path: { volumeID: found.volumeID } } }),
  );
  return data;
}

/** The content API with the volume's own token. */
function contentApi(conn: Connection, token: string): PlatformClient {
  return createPlatformClient({ baseUrl: conn.apiUrl, headers: { Authorization: `Bearer ${token}` } });
}

/** `VOLUME:PATH`, or undefined for a local path. */
function volumeSide(arg: string): { volume: string; path: string } | undefined {
  const m = /^([a-zA-Z0-9_-]+):(.*)$/.exec(arg);
  return m ? { volume: m[1]!, path: m[2] || "/" } : undefined;
}

function mb(n: number | undefined): string {
  return n === undefined ? "-" : `${n} MB`;
}

/** `x volume create|list|info|rm|ls|cp`; returns the exit code. */
export async function volume(argv: string[], io: Io): Promise<number> {
  const [command, ...rest] = argv;
  if (!command || command === "--help" || command === "-h" || command === "help") {
    (command ? io.out : io.err)(HELP);
    return command ? 0 : 2;
  }
  if (!["create", "list", "info", "rm", "ls", "cp"].includes(command))
    throw new CliError(`x volume: unknown command '${command}'\n${HELP}`, 2);
  const name = `x volume ${command}`;
  const { values, positionals } = parse(name, rest, {
    size: { type: "string" },
    depth: { type: "string" },
    force: { type: "boolean", default: false },
  });
  if (values.help) {
    io.out(HELP);
    return 0;
  }
  const json = Boolean(values.json);
  const conn = connect(values);
  switch (command) {
    case "create": {
      const sizeMB = integer(name, "size", values.size as string | undefined);
      const { data } = await call(
        conn,
        "creating a volume",
        conn.api.POST("/volumes", {
          body: { name: required(name, positionals, 0, "the volume's name"), sizeMB },
        }),
      );
      print(io, json, data, `${data.volumeID}\n`);
      return 0;
    }
    case "list": {
      const { data } = await call(conn, "listing volumes", conn.api.GET("/volumes"));
      print(io, json, data, () =>
        data.length === 0
          ? "no volumes\n"
          : table([["VOLUME", "NAME", "SIZE"], ...data.map((v) => [v.volumeID, v.name, mb(v.sizeMB)])]),
      );
      return 0;
    }
    case "info": {
      const v = await find(conn, required(name, positionals, 0, "the volume's name or ID"));
      print(
        io,
        json,
        v,
        table([
          ["ID", v.volumeID],
          ["Name", v.name],
          ["Size", mb(v.sizeMB)],
          ["Used", mb(v.usedMB)],
          ["Mounted by", v.mountedBy?.join(", ") || "-"],
          ["Created", v.createdAt ?? "-"],
        ]),
      );
      return 0;
    }
    case "rm": {
      const v = await find(conn, required(name, positionals, 0, "the volume's name or ID"));
      await call(
        conn,
        `deleting volume ${v.name}`,
        conn.api.DELETE("/volumes/{volumeID}", { params: { path: { volumeID: v.volumeID } } }),
      );
      print(io, json, { deleted: v.volumeID }, `deleted ${v.name}\n`);
      return 0;
    }
    case "ls": {
      const arg = required(name, positionals, 0, "VOLUME[:PATH]");
      const side = volumeSide(arg) ?? { volume: arg, path: "/" };
      const v = await find(conn, side.volume);
      const { data } = await call(
        conn,
        `listing ${side.path} of ${v.name}`,
        contentApi(conn, v.token).GET("/volumecontent/{volumeID}/dir", {
          params: {
            path: { volumeID: v.volumeID },
            query: { path: side.path, depth: integer(name, "depth", values.depth as string | undefined) },
          },
        }),
      );
      print(io, json, data, () =>
        table([
          ["MODE", "OWNER", "SIZE", "MODIFIED", "PATH"],
          ...data.map((e) => [
            `${e.type === "directory" ? "d" : e.type === "symlink" ? "l" : "-"}${e.mode.toString(8).padStart(4, "0")}`,
            `${e.uid}:${e.gid}`,
            String(e.size),
            e.mtime,
            e.target ? `${e.path} -> ${e.target}` : e.path,
          ]),
        ]),
      );
      return 0;
    }
    default: {
      const src = required(name, positionals, 0, "the source");
      const dst = required(name, positionals, 1, "the destination");
      const [from, to] = [volumeSide(src), volumeSide(dst)];
      if (Boolean(from) === Boolean(to))
        throw new CliError(`${name}: exactly one of SRC and DST is VOLUME:PATH`, 2);
      if (to) {
        const v = await find(conn, to.volume);
        if (!(await stat(src).catch(() => undefined))?.isFile())
          throw new CliError(`${name}: no file ${src}`);
        const { data } = await call(
          conn,
          `writing ${to.path} of ${v.name}`,
          contentApi(conn, v.token).PUT("/volumecontent/{volumeID}/file", {
            params: {
              path: { volumeID: v.volumeID },
              query: { path: to.path, force: Boolean(values.force) },
            },
            body: Readable.toWeb(createReadStream(src)) as unknown as string,
            bodySerializer: (b: unknown) => b as BodyInit,
            headers: { "Content-Type": "application/octet-stream" },
            duplex: "half",
          } as Parameters<PlatformClient["PUT"]>[1]),
        );
        const entry = data as unknown as Schemas["VolumeEntryStat"];
        print(io, json, entry, `${entry.path} (${entry.size} bytes)\n`);
        return 0;
      }
      const v = await find(conn, from!.volume);
      const { data } = await call(
        conn,
        `reading ${from!.path} of ${v.name}`,
        contentApi(conn, v.token).GET("/volumecontent/{volumeID}/file", {
          params: { path: { volumeID: v.volumeID }, query: { path: from!.path } },
          parseAs: "stream",
        }),
      );
      const body = Readable.fromWeb(data as never);
      if (dst === "-") for await (const chunk of body) io.out(chunk as Uint8Array);
      else await pipeline(body, createWriteStream(dst));
      return 0;
    }
  }
}
