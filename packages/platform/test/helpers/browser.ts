/**
 * Chromium from Debian, driven by playwright-core (which downloads no browser): for the web
 * console's tests. Screenshots go to one directory per run, named in the test output.
 */
import { mkdirSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";

export const CHROMIUM = process.env.X_TEST_CHROMIUM ?? "/usr/bin/chromium";

/** Where a run's screenshots go: X_TEST_SCREENSHOTS, or a directory under the system's temp. */
export const SCREENSHOT_DIR =
  process.env.X_TEST_SCREENSHOTS ?? path.join(os.tmpdir(), `x-console-screenshots-${process.pid}`);

export async function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    // as root in CI: Chromium's sandbox needs user namespaces it is not given there
    args: ["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"],
  });
}

/** Saves a full-page screenshot named `name` and says where, so a failed run can be looked at. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const file = path.join(SCREENSHOT_DIR, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  process.stdout.write(`screenshot: ${file}\n`);
  return file;
}
