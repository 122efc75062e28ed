/**
 * The phone page in the candidate's language, in Chromium on a phone-sized context with the fake
 * camera: a student whose session says Dutch (`language: nl`) pairs by the QR code's address and sees
 * every stage in Dutch (setup, the check, the exam, the end), and switches to Arabic and back with
 * the page's language menu, which the session remembers; a student who opens the link with
 * `?lang=ar` sees the page right to left (setup, the check, the exam, the link replaced). Each stage
 * passes axe, nothing scrolls sideways, and `<html lang dir>` says the language. The exam room's live
 * panel (web/room/live) in Arabic: mirrored, the chat with the proctor both ways. Then the pseudo-locale
 * (`?lang=en-XA`) over the same stages shows no plain English. SQLite only: the page is the subject,
 * and the phone's API is the same on both databases (mobile-pairing.test.ts covers both).
 * Screenshots: test-output/screenshots/phone-languages-<lang>-NN-<stage>.png.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { LANGUAGE_NAMES } from '../../src/i18n/locales.ts';
import { SCREENSHOT_DIR } from '../helpers/browser.ts';
import { httpRequest } from '../helpers/http.ts';
import { object } from '../helpers/json.ts';
import { assertNoSeriousAxeViolations } from './axe.ts';
import { startConsoleWorld, type ConsoleWorld, type StaffUser } from './console/support.ts';
import {
  assertNoAlert,
  assertPhoneFriendly,
  eventually,
  FOLLOW_MS,
  newPhone,
  roomMobile,
  v3,
} from './mobile-support.ts';
import { assertNoEnglish } from './pseudo.ts';
import { acceptPrivacy } from './privacy-support.ts';

const EXAM_NAME = 'Biologie 101';

/** Saves a full-page screenshot as phone-languages-<lang>-NN-<stage>.png. */
function screenshots(lang: string) {
  let step = 0;
  return async (page: Page, stage: string): Promise<void> => {
    step += 1;
    const target = path.join(
      SCREENSHOT_DIR,
      `phone-languages-${lang}-${String(step).padStart(2, '0')}-${stage}.png`,
    );
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: target, fullPage: true });
    assert.ok(fs.statSync(target).size > 0);
  };
}

/** `<html lang dir>` as the page has them now. */
async function htmlLanguage(page: Page): Promise<{ lang: string; dir: string }> {
  return page.evaluate(() => ({ lang: document.documentElement.lang, dir: document.documentElement.dir }));
}

/** Waits until `<html lang>` is `lang` and checks its `dir`. */
async function assertLanguage(page: Page, lang: string, dir: 'ltr' | 'rtl'): Promise<void> {
  await page.waitForFunction((wanted) => document.documentElement.lang === wanted, lang, {
    timeout: FOLLOW_MS,
  });
  assert.deepEqual(await htmlLanguage(page), { lang, dir });
}

/** Chooses the camera by its button's name (in the page's language) and waits for its picture. */
async function chooseCamera(phone: Page, name: string): Promise<void> {
  await acceptPrivacy(phone, FOLLOW_MS);
  await phone.getByRole('button', { name }).click();
  await phone.getByRole('button', { name, pressed: true }).waitFor({ timeout: FOLLOW_MS });
  await phone.waitForFunction(
    () => {
      const video = document.getElementById('preview');
      return video instanceof HTMLVideoElement && video.readyState >= 2 && video.videoWidth > 0;
    },
    undefined,
    { timeout: FOLLOW_MS },
  );
}

/** Runs the phone camera check by its button's name and waits for the passed line. */
async function runCheck(phone: Page, button: string, passed: string): Promise<void> {
  await phone.getByRole('button', { name: button }).click();
  await phone.locator('#check-result', { hasText: passed }).waitFor({ timeout: FOLLOW_MS });
  await assertNoAlert(phone, 'the phone');
}

describe('the phone page in the candidate’s language [sqlite]', () => {
  let world: ConsoleWorld;
  let teacher: StaffUser;
  let examId: number;
  const contexts: BrowserContext[] = [];

  before(async () => {
    world = await startConsoleWorld('sqlite', { env: { PSEUDO_LOCALE: 'true' } });
    teacher = await world.staff('teacher');
    const exam = await v3(teacher, 'POST', '/exams', {
      name: EXAM_NAME,
      type: 'record_review',
      duration_minutes: 30,
      web_cam: true,
      mobile_cam: true,
    });
    examId = Number(object(exam.exam, 'exam').id);
  });

  after(async () => {
    for (const context of contexts) await context.close().catch(() => undefined);
    await world?.close();
  });

  /** A student who may start without the computer's checks (the phone is the subject here). */
  async function student(name: string, email: string, language?: string) {
    const record = object(
      (
        await v3(teacher, 'POST', '/exams/:exam_id/student_sessions', {
          exam_id: examId,
          name,
          email,
          skip_requirements: true,
          ...(language === undefined ? {} : { language }),
        })
      ).student,
      'student',
    );
    const token = String(record.token);
    return { id: Number(record.id), token, pairingUrl: String((await roomMobile(world, token)).pairing_url) };
  }

  /** What the exam room does on the computer, over its API: start, finish, a new phone code. */
  async function roomCall(token: string, route: string): Promise<void> {
    const answer = await httpRequest({
      url: `${world.baseUrl}/api/room/${token}${route}`,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    assert.equal(answer.status, 200, `${route}: ${answer.text}`);
  }

  /** Opens the phone page at `url` and, unless `panel` is asked for, accepts its privacy panel. */
  async function openPhone(url: string, panel: 'accept' | 'keep' = 'accept'): Promise<Page> {
    const { context, page } = await newPhone(world);
    contexts.push(context);
    await page.goto(url);
    if (panel === 'accept') await acceptPrivacy(page, FOLLOW_MS);
    return page;
  }

  it('shows every stage in Dutch for a student whose session says Dutch, and its menu switches', async () => {
    const screenshot = screenshots('nl');
    const dutch = await student('Maria Sibylla Merian', 'merian@example.org', 'nl');
    const phone = await openPhone(dutch.pairingUrl);

    await phone.getByRole('heading', { name: 'Uw telefooncamera instellen' }).waitFor();
    await assertLanguage(phone, 'nl', 'ltr');
    assert.equal(await phone.title(), `${EXAM_NAME} · telefooncamera`);
    assert.ok(await phone.getByText('Uw gezicht, uw handen en uw scherm in beeld').isVisible());
    await assertPhoneFriendly(phone, 'Dutch setup');
    await screenshot(phone, 'setup');

    await chooseCamera(phone, 'Camera achterzijde');
    await runCheck(phone, 'Telefooncamera controleren', 'Controle van de telefooncamera geslaagd');
    assert.ok(await phone.getByRole('button', { name: 'Opnieuw controleren' }).isVisible());
    await phone
      .getByText('Houd deze pagina open; de opname begint wanneer u het examen op uw computer start.')
      .waitFor();
    await assertPhoneFriendly(phone, 'Dutch check passed');
    await screenshot(phone, 'check-passed');

    // The language menu: Arabic at once, right to left, no reload; the session keeps the pick.
    const menu = phone.locator('#language-select');
    await menu.selectOption('ar');
    await phone.getByRole('heading', { name: 'إعداد كاميرا هاتفك' }).waitFor();
    await assertLanguage(phone, 'ar', 'rtl');
    assert.ok(await phone.getByRole('button', { name: 'الكاميرا الخلفية', pressed: true }).isVisible());
    await eventually('the pick saved', async () => {
      const saved = object(
        (await v3(teacher, 'GET', '/student_sessions/:id', { id: dutch.id })).student,
        'student',
      );
      return saved.chosen_language === 'ar' ? saved : undefined;
    });
    await assertPhoneFriendly(phone, 'Dutch student’s page switched to Arabic');
    await screenshot(phone, 'menu-arabic');
    await menu.selectOption('nl');
    await phone.getByRole('heading', { name: 'Uw telefooncamera instellen' }).waitFor();
    await assertLanguage(phone, 'nl', 'ltr');

    await roomCall(dutch.token, '/start');
    await phone.getByRole('heading', { name: 'Examen bezig' }).waitFor({ timeout: FOLLOW_MS });
    await phone.locator('#recording-state', { hasText: 'Opname loopt' }).waitFor({ timeout: FOLLOW_MS });
    await phone.locator('#chunks-sent', { hasText: /^[1-9]\d*$/ }).waitFor({ timeout: FOLLOW_MS });
    assert.ok(await phone.getByText('Resterende tijd').isVisible());
    await assertPhoneFriendly(phone, 'Dutch exam');
    await screenshot(phone, 'exam');

    await roomCall(dutch.token, '/finish');
    await phone.getByRole('heading', { name: 'Het examen is afgelopen' }).waitFor({ timeout: FOLLOW_MS });
    await phone
      .locator('#finished-arrival', {
        hasText: /De server heeft \d+ opname(deel|delen) van deze telefoon ontvangen\./,
      })
      .waitFor({ timeout: FOLLOW_MS });
    await assertPhoneFriendly(phone, 'Dutch finished');
    await screenshot(phone, 'finished');
  });

  it('shows the page right to left in Arabic for a link opened with ?lang=ar', async () => {
    const screenshot = screenshots('ar');
    const arabic = await student('Ibn al-Haytham', 'alhazen@example.org');
    const phone = await openPhone(`${arabic.pairingUrl}?lang=ar`);

    await phone.getByRole('heading', { name: 'إعداد كاميرا هاتفك' }).waitFor();
    await assertLanguage(phone, 'ar', 'rtl');
    assert.equal(await phone.title(), `${EXAM_NAME} · كاميرا الهاتف`);
    // Mirrored: the first camera button (front) sits to the right of the second.
    const front = await phone.getByRole('button', { name: 'الكاميرا الأمامية' }).boundingBox();
    const back = await phone.getByRole('button', { name: 'الكاميرا الخلفية' }).boundingBox();
    assert.ok(front !== null && back !== null && front.x > back.x, 'the buttons run right to left');
    await assertPhoneFriendly(phone, 'Arabic setup');
    await screenshot(phone, 'setup');

    await chooseCamera(phone, 'الكاميرا الأمامية');
    await runCheck(phone, 'فحص كاميرا الهاتف', 'نجح فحص كاميرا الهاتف');
    await assertPhoneFriendly(phone, 'Arabic check passed');
    await screenshot(phone, 'check-passed');

    await roomCall(arabic.token, '/start');
    await phone.getByRole('heading', { name: 'الامتحان جارٍ' }).waitFor({ timeout: FOLLOW_MS });
    await phone.locator('#recording-state', { hasText: 'جارٍ التسجيل' }).waitFor({ timeout: FOLLOW_MS });
    await phone.locator('#chunks-sent', { hasText: /^[1-9]\d*$/ }).waitFor({ timeout: FOLLOW_MS });
    // The countdown reads left to right inside the right-to-left page.
    assert.equal(await phone.locator('#time-left').getAttribute('dir'), 'ltr');
    // Heartbeats (which name the session's language, not this load's ?lang=) keep the page in Arabic.
    assert.deepEqual(await htmlLanguage(phone), { lang: 'ar', dir: 'rtl' });
    await assertPhoneFriendly(phone, 'Arabic exam');
    await screenshot(phone, 'exam');

    // A new code on the computer: this link stops working, and the page says what to do.
    await roomCall(arabic.token, '/mobile/pairing');
    await phone
      .getByRole('heading', { name: 'لم يعد رابط الهاتف هذا صالحًا' })
      .waitFor({ timeout: FOLLOW_MS });
    assert.equal(
      await phone.getByRole('link', { name: 'الاتصال باستخدام رمز PIN' }).getAttribute('href'),
      '/m',
    );
    await assertPhoneFriendly(phone, 'Arabic link replaced');
    await screenshot(phone, 'gone');
  });

  it('shows the exam room’s live panel in Arabic, mirrored, with the chat', async () => {
    const screenshot = screenshots('ar-room');
    const exam = await v3(teacher, 'POST', '/exams', {
      name: 'Chimie',
      type: 'live_proctoring',
      duration_minutes: 30,
      web_cam: true,
    });
    const record = object(
      (
        await v3(teacher, 'POST', '/exams/:exam_id/student_sessions', {
          exam_id: Number(object(exam.exam, 'exam').id),
          name: 'Jabir ibn Hayyan',
          email: 'jabir@example.org',
          skip_requirements: true,
          language: 'ar',
        })
      ).student,
      'student',
    );
    const context = await world.chromium.newContext({ viewport: { width: 1280, height: 900 } });
    contexts.push(context);
    const room = await context.newPage();
    await room.goto(`${world.baseUrl}/room/${String(record.token)}`);
    const panel = room.locator('#live-panel');
    await panel.getByRole('heading', { name: 'المراقب', level: 2 }).waitFor({ timeout: FOLLOW_MS });
    await assertLanguage(room, 'ar', 'rtl');

    // The proctor writes; the candidate answers from the panel.
    await v3(teacher, 'POST', '/student_sessions/:id/messages', {
      id: Number(record.id),
      body: 'Please show your ID card.',
    });
    await panel.locator('.chat-message.proctor').waitFor({ timeout: FOLLOW_MS });
    assert.match((await panel.locator('.chat-meta').first().innerText()) ?? '', /^المراقب/);
    await room.getByRole('button', { name: 'إرسال' }).click();
    await panel.locator('#chat-error', { hasText: 'اكتب رسالة أولًا.' }).waitFor();
    await room.getByLabel('رسالتك إلى المراقب').fill('تفضّل.');
    await room.getByRole('button', { name: 'إرسال' }).click();
    await panel.locator('.chat-message.mine', { hasText: 'تفضّل.' }).waitFor({ timeout: FOLLOW_MS });
    assert.match(await panel.locator('.chat-message.mine .chat-meta').innerText(), /^أنت/);

    // Mirrored: the panel sits to the left of the exam, its messages' borders on the right.
    const panelBox = await panel.boundingBox();
    const mainBox = await room.locator('main').boundingBox();
    assert.ok(panelBox !== null && mainBox !== null && panelBox.x < mainBox.x, 'the panel is on the left');
    const border = await panel
      .locator('.chat-message.proctor')
      .evaluate((element) => getComputedStyle(element).borderRightWidth);
    assert.notEqual(border, '0px', 'the proctor’s message is marked on its right');
    await assertNoSeriousAxeViolations(room, 'the Arabic room’s live panel');
    await screenshot(room, 'live-panel');
  });

  it('shows no plain English in the pseudo-locale on any stage', async () => {
    const screenshot = screenshots('en-XA');
    const pseudo = await student('Ada Lovelace', 'ada@example.org');
    const phone = await openPhone(`${pseudo.pairingUrl}?lang=en-XA`, 'keep');
    // Data on the page: the exam's and the institute's names; the language menu names each language in itself.
    const allow = [EXAM_NAME, 'Example University', ...Object.values(LANGUAGE_NAMES)];

    await phone.locator('#privacy-accept').waitFor();
    await assertNoEnglish(phone, 'privacy panel', allow);
    await acceptPrivacy(phone, FOLLOW_MS);
    await phone.locator('#stage-setup').waitFor();
    await assertLanguage(phone, 'en-XA', 'ltr');
    await assertNoEnglish(phone, 'setup', allow);
    await screenshot(phone, 'setup');

    await chooseCamera(phone, await phone.locator('#camera-front').innerText());
    await phone.locator('#run-check').click();
    await phone.locator('#check-result.succeeded').waitFor({ timeout: FOLLOW_MS });
    await assertNoAlert(phone, 'the phone');
    await assertNoEnglish(phone, 'check passed', allow);
    await assertPhoneFriendly(phone, 'pseudo-locale check passed');
    await screenshot(phone, 'check-passed');

    await roomCall(pseudo.token, '/start');
    await phone.locator('#stage-exam').waitFor({ timeout: FOLLOW_MS });
    await phone.locator('#recording-state.on').waitFor({ timeout: FOLLOW_MS });
    await phone.locator('#chunks-sent', { hasText: /^[1-9]\d*$/ }).waitFor({ timeout: FOLLOW_MS });
    await assertNoEnglish(phone, 'exam', allow);
    await assertPhoneFriendly(phone, 'pseudo-locale exam');
    await screenshot(phone, 'exam');

    await roomCall(pseudo.token, '/finish');
    await phone.locator('#stage-finished').waitFor({ timeout: FOLLOW_MS });
    await phone.waitForFunction(
      () => (document.getElementById('finished-arrival')?.textContent ?? '').trim() !== '',
      undefined,
      { timeout: FOLLOW_MS },
    );
    await assertNoEnglish(phone, 'finished', allow);
    await screenshot(phone, 'finished');

    // The link replaced by a newer code, on another student's phone.
    const replaced = await student('Grace Hopper', 'grace@example.org');
    const other = await openPhone(`${replaced.pairingUrl}?lang=en-XA`, 'keep');
    await other.locator('#stage-setup').waitFor();
    await roomCall(replaced.token, '/mobile/pairing');
    await other.locator('#stage-gone').waitFor({ timeout: FOLLOW_MS });
    await assertNoEnglish(other, 'link replaced', allow);
    await screenshot(other, 'gone');
  });
});
