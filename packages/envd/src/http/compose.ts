import { type FileHandle, open, rm } from "node:fs/promises";
import path from "node:path";
import type { EnvdComponents } from "@x/envd-client";
import type { EnvdContext } from "../context.js";
import { errnoOf } from "../errors.js";
import { resolvePath } from "../paths.js";
import { rename, unlink } from "../sync-fs.js";
import { requestUser, requireToken } from "./access.js";
import { readJson } from "./body.js";
import { appendFileRange } from "./copy-range.js";
import { ensureDir, existingFile, tempSibling } from "./file-writer.js";
import { statForRead } from "./files-download.js";
import type { WrittenEntry } from "./files-upload.js";
import { fsHttpError, HttpError, type HttpRequest, type HttpResponse, sendJson } from "./respond.js";

type ComposeRequest = EnvdComponents["schemas"]["ComposeRequest"];

function parseRequest(body: unknown): ComposeRequest {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new HttpError(400, "request body must be a JSON object {source_paths, destination, username?}");
  }
  const { source_paths: sources, destination, username } = body as Record<string, unknown>;
  if (!Array.isArray(sources) || sources.length === 0)
    throw new HttpError(400, "source_paths must be a non-empty array of paths");
  if (!sources.every((s): s is string => typeof s === "string" && s.length > 0)) {
    throw new HttpError(400, "source_paths must contain only non-empty strings");
  }
  if (typeof destination !== "string" || !destination) throw new HttpError(400, "destination is required");
  if (username !== undefined && username !== null && typeof username !== "string")
    throw new HttpError(400, "username must be a string");
  return { source_paths: sources, destination, username: username ?? undefined };
}

async function checkSource(file: string): Promise<void> {
  if (!(await statForRead(file)).isFile()) throw new HttpError(400, `path '${file}' is not a regular file`);
}

async function appendSource(source: string, out: FileHandle, destination: string): Promise<void> {
  let input: FileHandle;
  try {
    input = await open(source, "r");
  } catch (err) {
    throw fsHttpError(err, "open", source);
  }
  try {
    await appendFileRange(input.fd, out.fd);
  } catch (err) {
    const errno = errnoOf(err);
    throw errno === "ENOSPC" || errno === "EDQUOT"
      ? fsHttpError(err, "write", destination)
      : fsHttpError(err, `append '${source}' to`, destination);
  } finally {
    await input.close();
  }
}

/**
 * `POST /files/compose`: concatenates the sources, in order, into the destination with
 * in-kernel copies, then deletes the sources. The result is assembled under a temporary
 * name and renamed at the end, so a failure leaves neither a half-written destination nor
 * a changed one; sources are deleted only after success.
 */
export async function composeFiles(ctx: EnvdContext, req: HttpRequest, res: HttpResponse): Promise<void> {
  requireToken(ctx.state, req);
  const request = parseRequest(await readJson(req));
  const user = await requestUser(ctx.state, req, request.username);
  const destination = resolvePath(request.destination, user);
  const sources = request.source_paths.map((s) => resolvePath(s, user));
  for (const source of sources) {
    if (source === destination)
      throw new HttpError(400, `source path '${source}' cannot also be the destination`);
    await checkSource(source);
  }
  await existingFile(destination);
  ensureDir(path.dirname(destination), user);

  const staging = tempSibling(destination, "compose");
  let out: FileHandle;
  try {
    out = await open(staging, "wx");
  } catch (err) {
    throw fsHttpError(err, "create", destination);
  }
  try {
    await out.chown(user.uid, user.gid);
    for (const source of sources) await appendSource(source, out, destination);
    await rename(staging, destination);
  } catch (err) {
    await unlink(staging).catch(() => undefined);
    throw fsHttpError(err, "write", destination);
  } finally {
    await out.close();
  }

  for (const source of new Set(sources)) {
    await rm(source, { force: true }).catch((err: unknown) =>
      ctx.log("warn", "compose: cannot delete source", { path: source, err: String(err) }),
    );
  }
  const entry: WrittenEntry = { path: destination, name: path.basename(destination), type: "file" };
  sendJson(res, 200, entry);
}
