/**
 * Issue 27's weak network, in Chromium: a candidate takes a 3-minute recorded exam (webcam and
 * screen at the room's default recording profile) on an uplink throttled to 0.25 Mbit/s by the
 * DevTools protocol's network emulation, with a 30-second dip to 0.025 Mbit/s, then finishes. Every chunk the page's recorders wrote
 * arrives (counted in the page, compared with the server's stored files: one gapless numbering per
 * stream), the finished page says everything arrived, and the finalisation assembles both streams
 * complete, without a recording gap. Whenever the upload fell behind, the page said how much was
 * waiting and that it is saved on this computer.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { launchChromium, SCREENSHOT_DIR, type TestBrowser } from '../helpers/browser.ts';
import { browserDialects, startTestServer, type TestServer } from '../helpers/server.ts';
import { runDueJobs } from '../mail/support.ts';
import {
  createNetworkExam,
  roomSession,
  storedFiles,
  type Json,
  type NetworkExam,
} from './room-network-support.ts';
import { acceptPrivacy } from './privacy-support.ts';

/** 0.25 Mbit/s, in bytes per second. */
const UPLINK_BYTES_PER_SECOND = 31_250;
/** How long the candidate works before finishing. */
const EXAM_MS = 3 * 60_000;
/**
 * A dip in the middle (from 60 s, for 30 s) to a tenth of that, as a shared or mobile line has: the
 * default profile fits in 0.25 Mbit/s, so only a dip makes the upload fall behind the recording
 * (and then catch up on the 0.25 Mbit/s line).
 */
const DIP = { fromMs: 60_000, forMs: 30_000, bytesPerSecond: 3_125 };
const KIND = { webcam: 'recording', screen: 'screen_recording' } as const;

/**
 * Counts, in the page, every chunk its MediaRecorders hand out (what the room queues): the camera's
 * recorder is the one whose stream has sound.
 */
function countRecordedChunks(): void {
  const counts = { webcam: 0, screen: 0 };
  Object.defineProperty(window, '__recordedChunks', { value: counts });
  const Original = window.MediaRecorder;
  class Counting extends Original {
    constructor(stream: MediaStream, options?: MediaRecorderOptions) {
      super(stream, options);
      const source = stream.getAudioTracks().length > 0 ? 'webcam' : 'screen';
      this.addEventListener('dataavailable', (event) => {
        if (event.data.size > 0) counts[source] += 1;
      });
    }
  }
  window.MediaRecorder = Counting;
}

for (const dialect of browserDialects(import.meta.url)) {
  describe(`candidate room in Chromium on a 0.25 Mbit/s uplink [${dialect}]`, () => {
    let server: TestServer;
    let chromium: TestBrowser;
    let page: Page;
    let exam: NetworkExam;
    /** The waiting line's sentences seen while the exam ran. */
    const waitingLines: string[] = [];

    before(async () => {
      fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
      server = await startTestServer(dialect);
      exam = await createNetworkExam(server);
      chromium = await launchChromium();
      page = await chromium.browser.newPage();
      await page.addInitScript(countRecordedChunks);
    });

    after(async () => {
      await chromium?.close();
      await server?.close();
    });

    async function recordedInPage(): Promise<{ webcam: number; screen: number }> {
      return page.evaluate(
        () =>
          (window as unknown as { __recordedChunks: { webcam: number; screen: number } }).__recordedChunks,
      );
    }

    it(
      'records a 3-minute exam through the throttled uplink, showing what waits',
      { timeout: 12 * 60_000 },
      async () => {
        const cdp = await page.context().newCDPSession(page);
        await cdp.send('Network.enable');
        const uplink = (bytesPerSecond: number) =>
          cdp.send('Network.emulateNetworkConditions', {
            offline: false,
            latency: 40,
            downloadThroughput: -1,
            uploadThroughput: bytesPerSecond,
          });
        await uplink(UPLINK_BYTES_PER_SECOND);
        await page.goto(`${server.baseUrl}/room/${exam.token}`);
        await acceptPrivacy(page);
        await page.getByRole('button', { name: 'Start the exam' }).click();
        await page.getByRole('heading', { name: 'Exam in progress' }).waitFor();
        await page.getByRole('button', { name: 'Start recording' }).click();
        await page.locator('#recording-state', { hasText: 'Recording your camera and screen' }).waitFor();

        const line = page.locator('#upload-waiting');
        const began = Date.now();
        const ends = began + EXAM_MS;
        let dip: 'before' | 'in' | 'after' = 'before';
        while (Date.now() < ends) {
          if (dip === 'before' && Date.now() - began >= DIP.fromMs) {
            await uplink(DIP.bytesPerSecond);
            dip = 'in';
          } else if (dip === 'in' && Date.now() - began >= DIP.fromMs + DIP.forMs) {
            await uplink(UPLINK_BYTES_PER_SECOND);
            dip = 'after';
          }
          if (await line.isVisible()) {
            const text = ((await line.textContent()) ?? '').trim();
            if (waitingLines.length === 0) {
              await page.screenshot({
                path: path.join(SCREENSHOT_DIR, `weak-network-${dialect}-waiting.png`),
              });
            }
            waitingLines.push(text);
          }
          await page.waitForTimeout(1000);
        }
        console.log(
          `weak network: the waiting line showed ${waitingLines.length} times, e.g. ${waitingLines.at(-1) ?? '-'}`,
        );

        await page.getByRole('button', { name: 'Finish the exam' }).click();
        await page.getByRole('dialog', { name: 'Finish the exam?' }).waitFor();
        await page.getByRole('button', { name: 'Yes, finish now' }).click();
        // The page sends what waits before it finishes: as long as the line needs.
        await page.getByRole('heading', { name: 'Your exam is finished' }).waitFor({ timeout: 10 * 60_000 });
        assert.equal(
          await page.locator('#arrival-summary').textContent(),
          'Everything this page recorded has arrived.',
        );
      },
    );

    it('stores every chunk the page recorded, in one gapless numbering per stream', async () => {
      const recorded = await recordedInPage();
      const session = await roomSession(server, exam.token);
      console.log(`weak network: recorded ${JSON.stringify(recorded)}`);
      for (const source of ['webcam', 'screen'] as const) {
        const files = await storedFiles(exam, KIND[source]);
        assert.ok(recorded[source] >= 40, `${source}: ${recorded[source]} chunks recorded in 3 minutes`);
        assert.equal(files.length, recorded[source], `${source}: every chunk recorded arrived`);
        assert.deepEqual(
          files.map((file) => file.sequence),
          files.map((_file, index) => index),
          `${source}: in order, without gaps`,
        );
        const counted =
          source === 'webcam' ? session.recording_chunks_count : session.screen_recording_chunks_count;
        assert.equal(counted, recorded[source]);
      }
    });

    it('showed how much waited and that it is saved, whenever the upload fell behind', () => {
      assert.ok(waitingLines.length > 0, 'the waiting line showed while the upload was behind');
      for (const text of waitingLines) {
        assert.match(
          text,
          /^\d+ (KB|\d+\.\d MB) waiting to upload — saved on this computer; you can keep working\.$/,
        );
      }
    });

    it('finalises both streams complete, without a recording gap', async () => {
      await runDueJobs(server, dialect, server.app.clock);
      const answer = await exam.owner.client.v3('GET', '/student_sessions/:id/recordings', {
        id: exam.sessionId,
      });
      assert.equal(answer.status, 200, answer.text);
      const recordings = (answer.json as { recordings: Json[] }).recordings;
      const record = await exam.owner.client.v3('GET', '/student_sessions/:id', { id: exam.sessionId });
      const student = (record.json as { student: Json }).student;
      const span = (Date.parse(String(student.end_time)) - Date.parse(String(student.start_time))) / 1000;
      assert.deepEqual(
        recordings.map((recording) => [recording.source, recording.status]),
        [
          ['webcam', 'completed'],
          ['screen', 'completed'],
        ],
      );
      for (const recording of recordings) {
        console.log(
          `weak network: ${String(recording.source)} ${String(recording.duration_seconds)} s of a ${span} s session, gaps ${JSON.stringify(recording.gaps)}`,
        );
        assert.deepEqual(recording.gaps, [], `${String(recording.source)}: no recording gap`);
        assert.ok(
          Number(recording.duration_seconds) >= EXAM_MS / 1000 - 5,
          `${String(recording.source)}: ${String(recording.duration_seconds)} s recorded`,
        );
      }
    });
  });
}
