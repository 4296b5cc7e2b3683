/**
 * @e2b/desktop 2.4.0, unchanged, against the platform with the `desktop` template installed as
 * an operator installs it (`x template install`), under runc and gVisor: the SDK's own start-up
 * (Xvfb, XFCE), screenshots, mouse and keyboard, windows, and the VNC stream its getUrl() gives,
 * over the proxy's HTTPS port with and without the stream's password.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { Sandbox } from "@e2b/desktop";
import WebSocket from "ws";
import { pointE2bClient, startTestPlatform, TEST_DATA_DIR, type TestPlatform } from "../helpers/platform.js";
import { installShippedTemplates, SHIPPED_STORE } from "../helpers/shipped-templates.js";

beforeAll(() => installShippedTemplates(["desktop"]), 45 * 60_000);

const PNG_MAGIC = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/**
 * Opens the stream's WebSocket the way noVNC's page does (`wss://…/websockify`, subprotocol
 * binary) and returns the first bytes of the VNC server: its protocol version, then after
 * ours, the security types it offers (1 none, 2 a VNC password).
 */
async function vncHandshake(
  url: string,
  ca: Buffer,
  tlsPort: number,
): Promise<{ version: string; security: number[] }> {
  const page = new URL(url);
  // by address, with the URL's name for SNI and Host (ws hands TLS options on to https)
  const options = { headers: { host: page.host }, servername: page.hostname, ca };
  const ws = new WebSocket(`wss://127.0.0.1:${tlsPort}/websockify`, ["binary"], options);
  const received: Buffer[] = [];
  let resolveNext: (() => void) | undefined;
  ws.on("message", (data: Buffer) => {
    received.push(data);
    resolveNext?.();
  });
  const next = async (): Promise<Buffer> => {
    const deadline = Date.now() + 15_000;
    while (received.length === 0) {
      if (Date.now() > deadline) throw new Error("no message from the VNC server within 15 s");
      await new Promise<void>((r) => {
        resolveNext = r;
        setTimeout(r, 500);
      });
    }
    return received.shift()!;
  };
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
  });
  try {
    const version = (await next()).toString("latin1");
    ws.send(Buffer.from("RFB 003.008\n", "latin1"));
    const types = await next();
    return { version, security: [...types.subarray(1, 1 + types[0]!)] };
  } finally {
    ws.close();
  }
}

describe.each(["runc", "runsc"] as const)("@e2b/desktop on %s", (runtime) => {
  let t: TestPlatform;
  let restoreEnv = () => {};
  let ca: Buffer;

  beforeAll(async () => {
    t = await startTestPlatform({
      runtime,
      databaseUrl: SHIPPED_STORE,
      config: { warmPoolSize: 1, tlsPort: 0 },
    });
    restoreEnv = pointE2bClient(t);
    ca = readFileSync(t.platform.caFile ?? path.join(TEST_DATA_DIR, "tls", "ca.pem"));
  });

  afterAll(async () => {
    restoreEnv();
    await t?.stop();
  }, 120_000);

  test("the SDK starts its desktop: screen, screenshots, mouse, keyboard and windows", async () => {
    const desktop = await Sandbox.create({ timeoutMs: 300_000 });
    try {
      expect(await desktop.getScreenSize()).toEqual({ width: 1024, height: 768 });
      expect(await desktop.getCursorPosition()).toEqual({ x: 512, y: 384 });
      const shot = Buffer.from(await desktop.screenshot());
      expect(shot.subarray(0, 8)).toEqual(PNG_MAGIC);
      expect(shot.length).toBeGreaterThan(5000);

      await desktop.moveMouse(100, 200);
      expect(await desktop.getCursorPosition()).toEqual({ x: 100, y: 200 });
      await desktop.leftClick();
      await desktop.rightClick(300, 300);
      await desktop.press("Escape");
      await desktop.scroll("down", 2);

      // an app by its desktop file, typed into, found by its window class and title
      await desktop.files.write("/home/user/notes.txt", "");
      await desktop.launch("org.xfce.mousepad", "/home/user/notes.txt");
      let windows: string[] = [];
      for (let i = 0; i < 60 && windows.filter(Boolean).length === 0; i++) {
        windows = await desktop.getApplicationWindows("mousepad").catch(() => []);
        if (windows.filter(Boolean).length === 0) await desktop.wait(500);
      }
      const [window] = windows.filter(Boolean);
      expect(window).toBeDefined();
      expect(await desktop.getWindowTitle(window!)).toMatch(/notes\.txt/);
      await desktop.write("hello from the SDK");
      await desktop.press(["ctrl", "s"]);
      await desktop.wait(1000);
      expect(await desktop.files.read("/home/user/notes.txt")).toBe("hello from the SDK");
      expect(await desktop.getCurrentWindowId()).toMatch(/^\d+$/);

      await desktop.files.write("/home/user/testfile.txt", "open me");
      await desktop.open("/home/user/testfile.txt");
    } finally {
      await desktop.kill();
    }
  });

  test("the VNC stream is served through the proxy's HTTPS URL, with and without its password", async () => {
    const desktop = await Sandbox.create({ timeoutMs: 300_000 });
    try {
      await desktop.stream.start();
      const url = desktop.stream.getUrl();
      expect(url).toMatch(
        new RegExp(`^https://6080-${desktop.sandboxId}\\.[^/]+/vnc\\.html\\?autoconnect=true&resize=scale$`),
      );
      const page = new URL(url);
      const res = await fetch(`${t.proxyUrl}/vnc.html`, {
        headers: { "E2b-Sandbox-Id": desktop.sandboxId, "E2b-Sandbox-Port": "6080" },
      });
      expect(res.status).toBe(200);
      expect(await res.text()).toMatch(/noVNC/);
      expect(page.port).toBe(String(t.platform.tlsPort));
      const open = await vncHandshake(url, ca, t.platform.tlsPort!);
      expect(open.version).toBe("RFB 003.008\n");
      expect(open.security).toContain(1);
      await expect(desktop.stream.start()).rejects.toThrow(/already running/);
      await desktop.stream.stop();

      await desktop.stream.start({ requireAuth: true });
      const key = desktop.stream.getAuthKey();
      expect(desktop.stream.getUrl({ authKey: key })).toMatch(new RegExp(`&password=${key}$`));
      const locked = await vncHandshake(desktop.stream.getUrl({ authKey: key }), ca, t.platform.tlsPort!);
      expect(locked.security).toEqual([2]);
      await desktop.stream.stop();
    } finally {
      await desktop.kill();
    }
  });
});
