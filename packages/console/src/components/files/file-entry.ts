/** Files as the file browser shows them, whatever holds them (a sandbox, a volume). */

/** A directory entry as the file browser shows it. */
export interface FileEntry {
  name: string;
  path: string;
  type: "file" | "directory" | "symlink" | "unknown";
  size: number;
  permissions: string;
  owner: string;
  group: string;
  modified?: Date;
  symlinkTarget?: string;
}

/** Directories first, then by name. */
export function byKindAndName(a: FileEntry, b: FileEntry): number {
  const dir = (e: FileEntry) => (e.type === "directory" ? 0 : 1);
  return dir(a) - dir(b) || a.name.localeCompare(b.name);
}

export function joinPath(dir: string, name: string): string {
  return dir.endsWith("/") ? `${dir}${name}` : `${dir}/${name}`;
}

export function parentOf(path: string): string {
  const trimmed = path.replace(/\/+$/, "");
  const i = trimmed.lastIndexOf("/");
  return i <= 0 ? "/" : trimmed.slice(0, i);
}

/** Saves a blob under a name through the browser's download. */
export function saveBlob(blob: Blob, name: string): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** Text to edit, or the reason it is not: binary (a NUL in its first 8 KiB) or too large. */
export async function asEditableText(
  blob: Blob,
  maxBytes: number,
): Promise<{ text: string } | { reason: string }> {
  if (blob.size > maxBytes)
    return { reason: `It is ${blob.size} bytes; the editor opens files up to ${maxBytes}.` };
  const head = new Uint8Array(await blob.slice(0, 8192).arrayBuffer());
  if (head.includes(0)) return { reason: "It is a binary file." };
  try {
    return { text: new TextDecoder("utf-8", { fatal: true }).decode(await blob.arrayBuffer()) };
  } catch {
    return { reason: "It is not UTF-8 text." };
  }
}
