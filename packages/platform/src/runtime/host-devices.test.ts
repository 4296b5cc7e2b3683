import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { devNullProblem } from "./host-devices.js";

test("the host's /dev/null passes", () => {
  expect(devNullProblem()).toBeUndefined();
});

test("a regular file in its place is named with what is wrong and how to mend it", () => {
  const dir = mkdtempSync(join(tmpdir(), "x-devnull-"));
  try {
    const file = join(dir, "null");
    writeFileSync(file, "", { mode: 0o600 });
    const problem = devNullProblem(file);
    expect(problem).toMatch(/is not a character device/);
    expect(problem).toMatch(/has mode 600, not 666/);
    expect(problem).toMatch(/chown root:root/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a missing device is reported, not thrown", () => {
  expect(devNullProblem("/nonexistent/null")).toMatch(/cannot be read/);
});
