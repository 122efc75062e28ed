/**
 * What the phone's browser tests share: a phone in its own Chromium context (a phone's viewport,
 * touch, a phone's user agent, Chromium's fake camera), the room and the V3 API read over HTTP,
 * the computer's checks run in the room page, and a screenshot (with an axe check) of either screen
 * as test-output/screenshots/mobile-*.png.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { SCREENSHOT_DIR } from '../helpers/browser.ts';
import { httpRequest } from '../helpers/http.ts';
import { object } from '../helpers/json.ts';
import type { Scalar } from '../helpers/signing.ts';
import { assertNoSeriousAxeViolations } from './axe.ts';
import { acceptPrivacy } from './privacy-support.ts';
import type { ConsoleWorld, StaffUser } from './console/support.ts';

export type Json = Record<string, unknown>;

/** A Pixel 7 with Chrome 131 on Android 14, as the phone page describes itself to the server. */
export const PHONE_USER_AGENT =
  'Mozilla/5.0 (Linux; Android 14; Pixel 7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36';
export const PHONE_DEVICE = 'Chrome 131 on Android 14';
export const PHONE_VIEWPORT = { width: 390, height: 844 };
export const DESKTOP_VIEWPORT = { width: 1280, height: 900 };

/** Generous waits: the pages read their views every 5 s on a shared two-core machine. */
export const FOLLOW_MS = 60_000;

/** The first bytes of every WebM (Matroska) file. */
export const EBML_MAGIC = Buffer.from([0x1a, 0x45, 0xdf, 0xa3]);

/** The session's phone incidents' comments (src/domain/mobile/mobile.ts MOBILE_INCIDENTS). */
export const PHONE_LOST = 'The phone camera stopped sending video';
export const PHONE_BACK = 'The phone camera is sending video again';

/** A phone: its own browser context (own storage and permissions), a phone's screen and agent. */
export async function newPhone(world: ConsoleWorld): Promise<{ context: BrowserContext; page: Page }> {
  const context = await world.chromium.newContext({
    viewport: PHONE_VIEWPORT,
    screen: PHONE_VIEWPORT,
    deviceScaleFactor: 2,
    isMobile: true,
    hasTouch: true,
    userAgent: PHONE_USER_AGENT,
  });
  return { context, page: await context.newPage() };
}

/** The computer: a desktop context of its own. */
export async function newComputer(browser: Browser): Promise<Page> {
  const context = await browser.newContext({ viewport: DESKTOP_VIEWPORT });
  return context.newPage();
}

/** Names the screenshots of one test file and dialect: mobile-<file>-<dialect>-NN-<screen>-<step>.png. */
export function screenshots(file: string, dialect: string) {
  let step = 0;
  return async function screenshot(page: Page, screen: 'phone' | 'room' | 'review', name: string) {
    step += 1;
    const target = path.join(
      SCREENSHOT_DIR,
      `mobile-${file}-${dialect}-${String(step).padStart(2, '0')}-${screen}-${name}.png`,
    );
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: target, fullPage: true });
    assert.ok(fs.statSync(target).size > 0);
  };
}

/** The room view, read over HTTP as the room page reads it. */
export async function roomView(world: ConsoleWorld, token: string): Promise<Json> {
  const answer = await httpRequest({ url: `${world.baseUrl}/api/room/${token}` });
  assert.equal(answer.status, 200, answer.text);
  return object(answer.json, 'room view');
}

/** The room view's phone part. */
export async function roomMobile(world: ConsoleWorld, token: string): Promise<Json> {
  return object((await roomView(world, token)).mobile, 'mobile');
}

/** A signed V3 call that must succeed. Returns the body. */
export async function v3(user: StaffUser, method: string, route: string, params: Record<string, Scalar>) {
  const answer = await user.client.v3(method, route, params);
  assert.ok(answer.status === 200 || answer.status === 201, `${method} ${route}: ${answer.text}`);
  return object(answer.json, 'body');
}

/** The phone's chunks the server holds, as staff list them (V3 files of kind mobile_recording). */
export async function phoneFiles(user: StaffUser, sessionId: number): Promise<Json[]> {
  const body = await v3(user, 'GET', '/student_sessions/:id/files', {
    id: sessionId,
    kind: 'mobile_recording',
  });
  return body.files as Json[];
}

/** Waits until `probe` answers something other than undefined; fails naming `what` after FOLLOW_MS. */
export async function eventually<T>(what: string, probe: () => Promise<T | undefined>, limitMs = FOLLOW_MS) {
  const until = Date.now() + limitMs;
  for (;;) {
    const found = await probe();
    if (found !== undefined) return found;
    if (Date.now() > until) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/** Waits until the server holds at least `count` phone chunks. Returns them. */
export async function phoneChunks(user: StaffUser, sessionId: number, count: number): Promise<Json[]> {
  return eventually(`${count} phone chunks`, async () => {
    const files = await phoneFiles(user, sessionId);
    return files.length >= count ? files : undefined;
  });
}

/** Fails with the page's error text when it shows one. */
export async function assertNoAlert(page: Page, where: string): Promise<void> {
  const alert = page.locator('#alert');
  if (await alert.isVisible()) assert.fail(`${where} shows an error: ${await alert.textContent()}`);
}

/** axe finds no serious or critical problem, nothing scrolls sideways, and every control is 48 px or more. */
export async function assertPhoneFriendly(page: Page, stage: string): Promise<void> {
  await assertNoSeriousAxeViolations(page, stage);
  const problems = await page.evaluate(() => {
    const found: string[] = [];
    const root = document.documentElement;
    if (root.scrollWidth > root.clientWidth + 1)
      found.push(`scrolls sideways: ${root.scrollWidth} > ${root.clientWidth}`);
    for (const control of document.querySelectorAll('button, input')) {
      const box = control.getBoundingClientRect();
      if (box.width === 0 && box.height === 0) continue;
      if (box.height < 47.5) found.push(`#${control.id || control.tagName} is ${box.height}px high`);
    }
    return found;
  });
  assert.deepEqual(problems, [], stage);
}

/**
 * Runs the computer's own checks in the room page: camera and microphone, the screen when the exam
 * records it, speakers, the connection, and the two photos.
 */
export async function runRoomChecks(room: Page, options: { screen: boolean }): Promise<void> {
  await acceptPrivacy(room, FOLLOW_MS);
  await room.getByRole('button', { name: 'Test camera and microphone' }).click();
  await room.getByText('Camera: passed', { exact: true }).waitFor({ timeout: FOLLOW_MS });
  await room.getByText('Microphone: passed', { exact: true }).waitFor({ timeout: FOLLOW_MS });
  if (options.screen) {
    await room.getByRole('button', { name: 'Share your screen' }).click();
    await room.getByText('Screen sharing: passed', { exact: true }).waitFor({ timeout: FOLLOW_MS });
  }
  await room.getByRole('button', { name: 'Play a test sound' }).click();
  await room.getByRole('button', { name: 'Yes, I heard it' }).click();
  await room.getByText('Speakers: passed (optional)').waitFor({ timeout: FOLLOW_MS });
  await room.getByRole('button', { name: 'Measure your connection' }).click();
  // A recorded exam may start on a slow line; a shared test machine can measure one.
  await room.getByText(/Connection speed: (passed|failed)/).waitFor({ timeout: FOLLOW_MS });
  await room.getByRole('button', { name: 'Take a photo of your ID card' }).click();
  await room.locator('#id_card-state', { hasText: 'Photo saved.' }).waitFor({ timeout: FOLLOW_MS });
  await room.getByRole('button', { name: 'Take a photo of your face' }).click();
  await room.locator('#face_photo-state', { hasText: 'Photo saved.' }).waitFor({ timeout: FOLLOW_MS });
}

/** Chooses a camera on the phone page and waits until its picture plays. */
export async function chooseCamera(phone: Page, which: 'Front camera' | 'Back camera'): Promise<void> {
  await acceptPrivacy(phone, FOLLOW_MS);
  const button = phone.getByRole('button', { name: which });
  await button.click();
  await phone
    .getByRole('button', { name: which, pressed: true })
    .waitFor({ timeout: FOLLOW_MS })
    .catch(async (error: unknown) => {
      const trouble = await phone.locator('#camera-trouble').textContent();
      assert.fail(`the ${which.toLowerCase()} did not turn on (${trouble ?? ''}): ${String(error)}`);
    });
  await phone.waitForFunction(
    () => {
      const video = document.getElementById('preview');
      return (
        video instanceof HTMLVideoElement && !video.hidden && video.readyState >= 2 && video.videoWidth > 0
      );
    },
    undefined,
    { timeout: FOLLOW_MS },
  );
}

/** Runs the phone's camera check and waits for its result. */
export async function runPhoneCheck(phone: Page): Promise<void> {
  await phone.getByRole('button', { name: 'Check the phone camera' }).click();
  await phone
    .locator('#check-result', { hasText: 'Phone camera check passed' })
    .waitFor({ timeout: FOLLOW_MS });
  await assertNoAlert(phone, 'the phone');
}
