import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";

/** Writes `files` (relative path → content) under a new temporary directory and returns it (for tests of code reading kernel trees). */
export function fileTree(files: Record<string, string>, prefix = "x-tree-"): string {
  const root = mkdtempSync(path.join(os.tmpdir(), prefix));
  for (const [file, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    writeFileSync(path.join(root, file), content);
  }
  return root;
}

/**
 * For a describe block of tests: `fileTree` with this prefix, every tree it made removed
 * after the block.
 */
export function useFileTrees(prefix: string): (files: Record<string, string>) => string {
  const roots: string[] = [];
  afterAll(() => {
    for (const root of roots) rmSync(root, { recursive: true, force: true });
  });
  return (files) => {
    const root = fileTree(files, prefix);
    roots.push(root);
    return root;
  };
}
