/**
 * Fault injection for the failure drills (tests only): with X_TEST_CRASH_AT=<name> in its
 * environment, the process SIGKILLs itself on reaching the point of that name, as a power cut
 * or the host's OOM killer would end it there (X_TEST_CRASH_SIGNAL=SIGTERM sends that instead,
 * as an operator stopping it there would). Without the variable, nothing happens.
 */
export function crashPoint(name: string): void {
  if (process.env.X_TEST_CRASH_AT === name)
    process.kill(process.pid, (process.env.X_TEST_CRASH_SIGNAL as NodeJS.Signals | undefined) ?? "SIGKILL");
}
