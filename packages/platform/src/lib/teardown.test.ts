import { createLogger } from "./log.js";
import { Teardown } from "./teardown.js";

const quiet = createLogger({ level: "silent" });

describe("Teardown", () => {
  it("runs its steps last-added first, each once, going on past one that fails", async () => {
    const ran: string[] = [];
    const t = new Teardown(quiet);
    t.defer("store", () => ran.push("store"));
    t.defer("network", async () => {
      ran.push("network");
      throw new Error("nft is gone");
    });
    t.defer("listeners", async () => ran.push("listeners"));
    await t.unwind();
    expect(ran).toEqual(["listeners", "network", "store"]);
    await t.unwind();
    expect(ran).toEqual(["listeners", "network", "store"]);
  });
});
