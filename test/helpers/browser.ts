import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type Browser, type BrowserContext, chromium } from 'playwright-core';

/** Debian's Chromium (package `chromium`); CHROMIUM_PATH names another build. Never a downloaded one. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Where the browser tests leave their screenshots (git-ignored; CI keeps them as the run's evidence). */
export const SCREENSHOT_DIR = path.resolve(import.meta.dirname, '../../test-output/screenshots');

/**
 * Flags for headless Chromium on a machine with a closed network, as root: no sandbox, no GPU, no
 * background calls to Google; a fake camera, microphone and screen, allowed without a prompt.
 */
export const CHROMIUM_FLAGS = [
  '--headless=new',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--use-fake-device-for-media-stream',
  '--use-fake-ui-for-media-stream',
  '--auto-select-desktop-capture-source=Entire screen',
  '--autoplay-policy=no-user-gesture-required',
];

export interface TestBrowser {
  readonly browser: BrowserContext;
  close(): Promise<void>;
}

/**
 * Starts Chromium with a new, empty profile (deleted on close) and returns its persistent context.
 * Throws when Chromium is not installed, naming the path and the package.
 */
export async function launchChromium(viewport = { width: 1280, height: 900 }): Promise<TestBrowser> {
  if (!fs.existsSync(CHROMIUM_PATH)) {
    throw new Error(
      `Chromium is not at ${CHROMIUM_PATH}: install Debian's chromium package (apt-get install chromium)`,
    );
  }
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'invigil-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: CHROMIUM_FLAGS,
    ignoreDefaultArgs: ['--headless'],
    viewport,
  });
  return {
    browser: context,
    async close() {
      await context.close();
      fs.rmSync(profile, { recursive: true, force: true });
    },
  };
}

export type { Browser };

/**
 * Starts Chromium as a browser whose contexts are separate cookie jars (one per signed-in user, one
 * for a candidate), each with `viewport`. Throws when Chromium is not installed.
 */
export async function launchChromiumBrowser(): Promise<Browser> {
  if (!fs.existsSync(CHROMIUM_PATH)) {
    throw new Error(
      `Chromium is not at ${CHROMIUM_PATH}: install Debian's chromium package (apt-get install chromium)`,
    );
  }
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: CHROMIUM_FLAGS,
    ignoreDefaultArgs: ['--headless'],
  });
}
