import { CommandError, command, commandLines } from "./command.js";
import { spawner } from "./spawner.js";

afterAll(() => spawner.close());

describe("host commands whose output a tenant decides", () => {
  it("fail once their output passes the limit, saying so", async () => {
    const err = await command("sh", ["-c", "head -c 2000000 /dev/zero"], { maxOutputBytes: 1000 }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(CommandError);
    expect((err as Error).message).toMatch(/its output was longer than the 1000 bytes the platform reads$/);
    expect(await command("sh", ["-c", "printf 1234"], { maxOutputBytes: 4 })).toBe("1234");
  });

  it("hand their lines on cut at 64 KiB, progress redraws (CR) as lines of their own", async () => {
    const lines: string[] = [];
    await commandLines(
      "sh",
      ["-c", "printf '10%%\\r20%%\\r\\n'; head -c 10000000 /dev/zero | tr '\\0' a; echo; echo end"],
      (l) => lines.push(l),
    );
    expect(lines.map((l) => (l.length > 100 ? `${l.length}:${l.slice(-21)}` : l))).toEqual([
      "10%",
      "20%",
      `${64 * 1024 + 21}: [line cut at 64 KiB]`,
      "end",
    ]);
  });
});
