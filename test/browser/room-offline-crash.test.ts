/**
 * Issue 27's "nothing recorded is lost", in Chromium: a candidate records webcam and screen, the
 * connection drops, chunks and an answer file wait on the device, and the page dies (closed without
 * unload, as a crashed tab). Opened again with the network back, the new page sends what the dead
 * one kept, first and in its order, under the right sequences, then records on: the server ends up
 * with every chunk the dead page kept, byte for byte, in one gapless numbering, and the answer file.
 * The webcam records again by itself after the reopening; the screen asks for its one click with a
 * prominent button. Screenshots of the waiting line and of that button, in English and German.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { launchChromium, SCREENSHOT_DIR, type TestBrowser } from '../helpers/browser.ts';
import { fetchAddress } from '../helpers/files.ts';
import { httpRequest } from '../helpers/http.ts';
import { SAMPLE } from '../helpers/multipart.ts';
import { browserDialects, startTestServer, type TestServer } from '../helpers/server.ts';
import { assertNoSeriousAxeViolations } from './axe.ts';
import {
  createNetworkExam,
  EBML_MAGIC,
  keptOnDevice,
  roomSession,
  storedDigest,
  storedFiles,
  storedHead,
  until,
  type KeptItem,
  type NetworkExam,
} from './room-network-support.ts';
import { acceptPrivacy } from './privacy-support.ts';

const ANSWER = Buffer.concat([SAMPLE.pdf, Buffer.alloc(200 * 1024, 7)]);
/** Chunks of each stream the page holds offline before it dies (4 s each). */
const WAITING_PER_STREAM = 3;

const KIND = { webcam: 'recording', screen: 'screen_recording' } as const;

for (const dialect of browserDialects(import.meta.url)) {
  describe(`candidate room in Chromium: offline, the tab dies, reopened [${dialect}]`, () => {
    let server: TestServer;
    let chromium: TestBrowser;
    let page: Page;
    let exam: NetworkExam;
    /** What the server held of each stream when the connection dropped. */
    const storedBefore = { webcam: 0, screen: 0 };
    /** What the dead page kept on the device. */
    let kept: KeptItem[] = [];

    before(async () => {
      fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
      server = await startTestServer(dialect);
      exam = await createNetworkExam(server);
      chromium = await launchChromium();
      page = await chromium.browser.newPage();
    });

    after(async () => {
      await chromium?.close();
      await server?.close();
    });

    async function screenshot(name: string): Promise<void> {
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.screenshot({ path: path.join(SCREENSHOT_DIR, `offline-crash-${dialect}-${name}.png`) });
    }

    async function counts(): Promise<{ webcam: number; screen: number }> {
      const session = await roomSession(server, exam.token);
      return {
        webcam: Number(session.recording_chunks_count),
        screen: Number(session.screen_recording_chunks_count),
      };
    }

    it('keeps chunks and an answer file on the device while offline', async () => {
      await page.goto(`${server.baseUrl}/room/${exam.token}`);
      await acceptPrivacy(page);
      await page.getByRole('button', { name: 'Start the exam' }).click();
      await page.getByRole('heading', { name: 'Exam in progress' }).waitFor();
      await page.getByRole('button', { name: 'Start recording' }).click();
      await page.locator('#recording-state', { hasText: 'Recording your camera and screen' }).waitFor();
      await until(page, 'a chunk of each stream arrived', async () => {
        const now = await counts();
        return now.webcam >= 1 && now.screen >= 1;
      });

      await chromium.browser.setOffline(true);
      Object.assign(storedBefore, await counts());
      await page.getByLabel('Answer file').setInputFiles({
        name: 'answers.pdf',
        mimeType: 'application/pdf',
        buffer: ANSWER,
      });
      await page.getByRole('button', { name: 'Upload file' }).click();
      await page
        .locator('#waiting-files li', { hasText: 'answers.pdf' })
        .filter({ hasText: 'saved on this computer' })
        .waitFor();

      await until(
        page,
        `${WAITING_PER_STREAM} chunks of each stream wait on the device`,
        async () => {
          const items = await keptOnDevice(page);
          return (['webcam', 'screen'] as const).every(
            (source) => items.filter((item) => item.source === source).length >= WAITING_PER_STREAM,
          );
        },
        60_000,
      );
      const line = page.locator('#upload-waiting');
      await line.waitFor();
      assert.match(
        (await line.textContent())?.trim() ?? '',
        /^\d+ (KB|\d\.\d MB) waiting to upload — saved on this computer; you can keep working\.$/,
      );
      assert.match((await page.locator('#connection').textContent()) ?? '', /Connection lost/);
      await screenshot('waiting-offline');
      await assertNoSeriousAxeViolations(page, 'offline with chunks waiting');

      // The tab dies: no unload, no last words. What it kept is read just before.
      kept = await keptOnDevice(page);
      await page.close({ runBeforeUnload: false });
      assert.ok(
        kept.some((item) => item.source === 'answer' && item.name === 'answers.pdf'),
        'the answer file is kept',
      );
      assert.deepEqual(await counts(), storedBefore, 'nothing reached the server while offline');
    });

    it('sends what the dead page kept, first and in order, once opened again online', async () => {
      await chromium.browser.setOffline(false);
      page = await chromium.browser.newPage();
      await page.goto(`${server.baseUrl}/room/${exam.token}`);
      await page.getByRole('heading', { name: 'Exam in progress' }).waitFor();
      // The camera records again without a click; the screen asks for one, prominently.
      await page
        .locator('#recording-state', { hasText: 'Your camera is recording again. Your screen is not yet' })
        .waitFor();
      const share = page.getByRole('button', { name: 'Share your screen again' });
      await share.waitFor();
      assert.ok(
        Number.parseFloat(await share.evaluate((button) => getComputedStyle(button).fontSize)) >= 18,
        'the screen button stands out',
      );
      await screenshot('share-screen-prompt');
      await assertNoSeriousAxeViolations(page, 'reopened, the screen prompt');

      const keptOf = (source: 'webcam' | 'screen') => kept.filter((item) => item.source === source);
      await until(
        page,
        'the webcam chunks the dead page kept, and one of the new page, arrived',
        async () => {
          const now = await counts();
          return now.webcam > storedBefore.webcam + keptOf('webcam').length;
        },
      );
      await share.click();
      await page.locator('#recording-state', { hasText: 'Recording your camera and screen' }).waitFor();
      await until(page, 'the screen chunks kept, and one of the new page, arrived', async () => {
        const now = await counts();
        return now.screen > storedBefore.screen + keptOf('screen').length;
      });

      for (const source of ['webcam', 'screen'] as const) {
        const files = await storedFiles(exam, KIND[source]);
        assert.deepEqual(
          files.map((file) => file.sequence),
          files.map((_file, index) => index),
          `${source}: one numbering without gaps across the crash`,
        );
        const fromDead = files.slice(storedBefore[source], storedBefore[source] + keptOf(source).length);
        assert.deepEqual(
          await Promise.all(fromDead.map((file) => storedDigest(server, file))),
          keptOf(source).map((item) => item.digest),
          `${source}: every chunk the dead page kept arrived, byte for byte, in its order`,
        );
        // The new page's recording follows them, as a WebM stream of its own; at most one chunk
        // the dead page recorded in the moment between the reading and the close comes between.
        const rest = files.slice(storedBefore[source] + keptOf(source).length);
        const newStart = [];
        for (const file of rest.slice(0, 2))
          newStart.push((await storedHead(server, file)).equals(EBML_MAGIC));
        assert.ok(newStart.includes(true), `${source}: the new page's recording begins right after`);
      }

      await until(
        page,
        'the answer file arrived',
        async () => (await storedFiles(exam, 'upload')).length > 0,
      );
      const uploads = await storedFiles(exam, 'upload');
      assert.equal(uploads.length, 1, 'handed in once');
      assert.equal(uploads[0]?.file_name, 'answers.pdf');
      assert.ok((await fetchAddress(server, String(uploads[0]?.url))).bytes.equals(ANSWER), 'whole');
      await page.locator('#uploaded-files li', { hasText: 'answers.pdf' }).waitFor();

      const record = await exam.owner.client.v3('GET', '/student_sessions/:id', { id: exam.sessionId });
      assert.match(record.text, /The exam room page was reloaded/, 'the reopening is an incident');
    });

    it('words the waiting line and the screen prompt in the candidate language', async () => {
      const chosen = await httpRequest({
        url: `${server.baseUrl}/api/room/${exam.token}/language`,
        method: 'PUT',
        body: JSON.stringify({ language: 'de' }),
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(chosen.status, 200, chosen.text);
      await page.reload();
      const share = page.getByRole('button', { name: 'Bildschirm erneut freigeben' });
      await share.waitFor();
      await page.locator('#recording-state', { hasText: 'Ihre Kamera nimmt wieder auf' }).waitFor();
      await screenshot('share-screen-prompt-de');
      await share.click();
      await chromium.browser.setOffline(true);
      const line = page.locator('#upload-waiting');
      await line.waitFor({ timeout: 30_000 });
      assert.match(
        (await line.textContent()) ?? '',
        /warten auf das Hochladen — auf diesem Computer gespeichert/,
      );
      await screenshot('waiting-offline-de');
      await chromium.browser.setOffline(false);
    });

    it('empties the device store once the exam is finished and everything arrived', async () => {
      await page.getByRole('button', { name: 'Prüfung beenden' }).click();
      await page.getByRole('dialog', { name: 'Prüfung beenden?' }).waitFor();
      await page.getByRole('button', { name: 'Ja, jetzt beenden' }).click();
      await page.locator('#stage-finished').waitFor({ timeout: 60_000 });
      await until(page, 'the device store is empty', async () => (await keptOnDevice(page)).length === 0);
      const now = await counts();
      for (const source of ['webcam', 'screen'] as const) {
        const files = await storedFiles(exam, KIND[source]);
        assert.equal(files.length, now[source]);
        assert.deepEqual(
          files.map((file) => file.sequence),
          files.map((_file, index) => index),
          `${source}: gapless to the end`,
        );
      }
    });
  });
}
