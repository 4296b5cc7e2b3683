import { createProgress } from "./progress.js";

function capture(tty: boolean) {
  let err = "";
  const progress = createProgress({ out: () => undefined, err: (t) => (err += t), tty });
  return { progress, text: () => err };
}

describe("createProgress", () => {
  it("prints plain lines off a terminal, one per change of status", () => {
    const { progress, text } = capture(false);
    progress.status("uploading");
    progress.status("building", "step 1");
    progress.log("[1/2] RUN make");
    progress.status("building", "step 2");
    progress.stop();
    expect(text()).toBe("uploading\nbuilding\n[1/2] RUN make\n");
  });

  it("redraws a spinner line in place on a terminal, with log lines above it", () => {
    const { progress, text } = capture(true);
    progress.status("building", "step 1");
    progress.log("[1/2] RUN make");
    progress.stop();
    const line = "\r\x1b[K";
    expect(text()).toBe(
      `${line}⠋ building, step 1 (0 s)${line}[1/2] RUN make\n${line}⠙ building, step 1 (0 s)${line}`,
    );
  });
});
