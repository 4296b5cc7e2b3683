import { BootBudget } from "./boot-budget.js";

/** A promise with its resolve at hand. */
function gate(): { open: () => void; opened: Promise<void> } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { open, opened };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe("BootBudget", () => {
  it("lends a boot's turn while it only waits, and gives it back before boots not yet started", async () => {
    const budget = new BootBudget({ concurrent: 1, memoryReserveBytes: 0, availableMemory: async () => 1 });
    const order: string[] = [];
    const calibration = gate();
    const second = gate();
    const first = budget.run(
      async (turn) => {
        order.push("first starts");
        await turn.aside(calibration.opened);
        order.push("first goes on");
      },
      { urgent: false },
    );
    const other = budget.run(
      async () => {
        order.push("second starts");
        await second.opened;
        order.push("second ends");
      },
      { urgent: false },
    );
    const third = budget.run(async () => void order.push("third starts"), { urgent: false });
    await settle();
    // the first waits aside: the second has the one turn
    expect(order).toEqual(["first starts", "second starts"]);
    expect(budget.booting).toBe(1);
    calibration.open();
    await settle();
    // the wait is over, but the turn is the second's until it ends
    expect(order).toEqual(["first starts", "second starts"]);
    second.open();
    await Promise.all([first, other, third]);
    expect(order).toEqual(["first starts", "second starts", "second ends", "first goes on", "third starts"]);
    expect(budget.booting).toBe(0);
  });

  it("takes a turn again when the wait fails, and passes the failure on", async () => {
    const budget = new BootBudget({ concurrent: 1, memoryReserveBytes: 0, availableMemory: async () => 1 });
    const boot = budget.run((turn) => turn.aside(Promise.reject(new Error("cut short"))), { urgent: false });
    await expect(boot).rejects.toThrow("cut short");
    expect(budget.booting).toBe(0);
    await expect(budget.run(async () => "next", { urgent: false })).resolves.toBe("next");
  });
});
