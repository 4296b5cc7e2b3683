import { mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { AccountFile } from "./users.js";

/** The next turn of the event loop, from which a change to the file is seen. */
const nextTurn = () => new Promise((r) => setImmediate(r));

describe("AccountFile", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), "envd-accounts-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  test("sees an account added after the first read, as useradd adds it (a new file renamed in)", async () => {
    const file = path.join(dir, "passwd");
    writeFileSync(file, "root:x:0:0:root:/root:/bin/bash\n# a comment\n");
    const accounts = new AccountFile(file);
    expect(accounts.read().map((f) => f[0])).toEqual(["root"]);
    writeFileSync(`${file}+`, "root:x:0:0:root:/root:/bin/bash\nuser:x:1000:1000::/home/user:/bin/bash\n");
    renameSync(`${file}+`, file);
    await nextTurn();
    expect(accounts.read().map((f) => f[0])).toEqual(["root", "user"]);
  });

  test("sees an edit in place of the same length", async () => {
    const file = path.join(dir, "group");
    writeFileSync(file, "sudo:x:27:\n");
    const groups = new AccountFile(file);
    expect(groups.read()).toEqual([["sudo", "x", "27", ""]]);
    writeFileSync(file, "sudo:x:28:\n");
    await nextTurn();
    expect(groups.read()).toEqual([["sudo", "x", "28", ""]]);
  });

  test("a missing file has no accounts, and one created later is read", async () => {
    const file = path.join(dir, "passwd");
    const accounts = new AccountFile(file);
    expect(accounts.read()).toEqual([]);
    writeFileSync(file, "root:x:0:0:root:/root:/bin/bash\n");
    await nextTurn();
    expect(accounts.read()).toHaveLength(1);
  });

  test("checks the file once per turn of the event loop: the reads of one request stat it once", async () => {
    const file = path.join(dir, "passwd");
    writeFileSync(file, "root:x:0:0:root:/root:/bin/bash\n");
    const accounts = new AccountFile(file);
    expect(accounts.read()).toHaveLength(1);
    // changed within the same turn: not looked at again until the next
    writeFileSync(file, "root:x:0:0:root:/root:/bin/bash\nuser:x:1000:1000::/home/user:/bin/bash\n");
    await Promise.resolve();
    expect(accounts.read()).toHaveLength(1);
    await nextTurn();
    expect(accounts.read()).toHaveLength(2);
  });
});
