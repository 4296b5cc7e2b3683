import type { Sandbox } from "e2b";

/**
 * A background counter in a sandbox: the tests' witness that processes (and their memory) live
 * on across pause, checkpoint, snapshot and platform restarts.
 */
export const COUNTER_FILE = "/tmp/counter";

/** Starts the counting loop, writing the count to `file` ten times a second. */
export async function startCounter(sandbox: Sandbox, file = COUNTER_FILE): Promise<void> {
  await sandbox.commands.run(`i=0; while true; do i=$((i+1)); echo $i > ${file}; sleep 0.1; done`, {
    background: true,
    // the client would end a background command after its default 60 s
    timeoutMs: 0,
  });
}

/** The count; `echo $i > file` truncates first, so an empty read is read again. 0 when unreadable. */
export async function readCounter(sandbox: Sandbox, file = COUNTER_FILE): Promise<number> {
  for (let i = 0; ; i++) {
    const text = (await sandbox.files.read(file).catch(() => "")).trim();
    if (text !== "" || i >= 20) return Number(text || "0");
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Waits until the count passes `from` (or the time is up); returns the count seen. */
export async function counterPassed(
  sandbox: Sandbox,
  from: number,
  opts: { file?: string; timeoutMs?: number } = {},
): Promise<number> {
  const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
  for (;;) {
    const now = await readCounter(sandbox, opts.file);
    if (now > from || Date.now() > deadline) return now;
    await new Promise((r) => setTimeout(r, 100));
  }
}
