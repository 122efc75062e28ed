/**
 * A Safari candidate in the review screen (docs/recordings.md, "MP4 recordings (Safari)"), in
 * Chromium on SQLite and PostgreSQL: the webcam's chunks are fragmented MP4 (H.264 + AAC, made with
 * ffmpeg in the shape Safari's MediaRecorder writes, with a reload starting a new init segment), the
 * screen's are WebM (real MediaRecorder chunks, test/fixtures/recordings). Once finalised, the MP4
 * and the WebM play side by side on one timeline: both advance while playing, and seeking one seeks
 * the other. Axe and a screenshot (console-review-mp4.png).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { httpRequest } from '../helpers/http.ts';
import { mp4Chunks } from '../helpers/mp4-fixtures.ts';
import { multipartBody } from '../helpers/multipart.ts';
import { browserDialects } from '../helpers/server.ts';
import { runDueJobs } from '../mail/support.ts';
import {
  checkScreen,
  signedInPage,
  startConsoleWorld,
  type ConsoleWorld,
  type StaffUser,
} from './console/support.ts';

const FIXTURES = path.resolve(import.meta.dirname, '../fixtures/recordings');
const webm = (prefix: string, count: number): Buffer[] =>
  Array.from({ length: count }, (_, index) =>
    fs.readFileSync(path.join(FIXTURES, `${prefix}-${index}.webm`)),
  );
const SCREEN_A = webm('screen-a', 4);
const SCREEN_B = webm('screen-b', 3);
/** When the second recorders (a page reload) start, in seconds after the exam's start. */
const RELOAD_AT = 40;
const ENDS_AT = RELOAD_AT + 13;

for (const dialect of browserDialects(import.meta.url)) {
  describe(`review of an MP4 webcam beside a WebM screen in Chromium [${dialect}]`, () => {
    const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'invigil-review-mp4-'));
    let world: ConsoleWorld;
    let teacher: StaffUser;
    let reviewer: StaffUser;
    let page: Page;
    let sessionId: number;
    let cameraA: Buffer[];
    let cameraB: Buffer[];

    async function post(
      url: string,
      fields?: Record<string, string>,
      bytes?: Buffer,
      type?: string,
    ): Promise<void> {
      const multipart =
        bytes === undefined
          ? undefined
          : multipartBody(fields ?? {}, [
              { field: 'file', fileName: 'chunk', contentType: type ?? 'video/webm', bytes },
            ]);
      const answer = await httpRequest({
        url,
        method: 'POST',
        ...(multipart === undefined
          ? {}
          : { headers: { 'content-type': multipart.contentType }, body: multipart.body }),
      });
      assert.ok(answer.status === 200 || answer.status === 201, `${url}: ${answer.status} ${answer.text}`);
    }

    /** When a WebM recorder's chunks arrive (s): 150 ms after each 4 s, its short last one right after. */
    const arrivals = (count: number, startSeconds: number): number[] =>
      Array.from(
        { length: count },
        (_, index) => startSeconds + Math.min(4 * (index + 1), 4 * (count - 1) + 0.5) + 0.15,
      );
    /** When an MP4 recorder's chunks arrive (s): 150 ms after each of its whole 4-s fragments. */
    const fragmentArrivals = (count: number, startSeconds: number): number[] =>
      Array.from({ length: count }, (_, index) => startSeconds + 4 * (index + 1) + 0.15);

    /** Puts the recorded session on a clock of its own, as if it had lasted ENDS_AT seconds. */
    async function spreadOverTime(id: number): Promise<void> {
      const db = world.server.app.database.db;
      const row = await db
        .selectFrom('student_sessions')
        .select('start_time')
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      const start = Number(row.start_time);
      const plan: [string, number[]][] = [
        [
          'recording',
          [...fragmentArrivals(cameraA.length, 0), ...fragmentArrivals(cameraB.length, RELOAD_AT)],
        ],
        ['screen_recording', [...arrivals(SCREEN_A.length, 0), ...arrivals(SCREEN_B.length, RELOAD_AT)]],
      ];
      for (const [kind, seconds] of plan) {
        for (const [sequence, at] of seconds.entries()) {
          await db
            .updateTable('session_files')
            .set({ created_at: start + Math.round(at * 1000) })
            .where('student_session_id', '=', id)
            .where('kind', '=', kind)
            .where('sequence', '=', sequence)
            .execute();
        }
      }
      await db
        .updateTable('student_sessions')
        .set({
          recording_started_at: start,
          recording_ended_at: start + ENDS_AT * 1000,
          end_time: start + ENDS_AT * 1000,
        })
        .where('id', '=', id)
        .execute();
    }

    function videos(target: Page) {
      return target.evaluate(() =>
        [...document.querySelectorAll('video')].map((video) => ({
          source: video.dataset.source,
          time: video.currentTime,
          duration: video.duration,
          paused: video.paused,
          src: video.currentSrc,
          error: video.error?.code ?? null,
        })),
      );
    }

    async function waitForTime(target: Page, seconds: number): Promise<void> {
      await target.waitForFunction(
        (wanted) =>
          [...document.querySelectorAll('video')].every(
            (video) => Math.abs(video.currentTime - wanted) < 0.5,
          ),
        seconds,
      );
    }

    before(async () => {
      // Safari's shape: 4-s fragments, the first chunk holding the init segment; 20 s, then 12 s after a reload.
      cameraA = mp4Chunks(directory, 'camera-a', { seconds: 20 });
      cameraB = mp4Chunks(directory, 'camera-b', { seconds: 12, pattern: 'smptebars' });
      world = await startConsoleWorld(dialect);
      teacher = await world.staff('teacher');
      reviewer = await world.staff('reviewer');
      const exam = await teacher.client.v3('POST', '/exams', {
        name: 'Safari exam',
        type: 'record_review',
        duration_minutes: 60,
        web_cam: true,
        screen_share: true,
      });
      assert.equal(exam.status, 201, exam.text);
      const examId = (exam.json as { exam: { id: number } }).exam.id;
      const answer = await teacher.client.v3('POST', '/exams/:exam_id/student_sessions', {
        exam_id: examId,
        name: 'Sam Safari',
        email: 'sam.safari@example.org',
        skip_requirements: true,
      });
      assert.equal(answer.status, 201, answer.text);
      const student = (answer.json as { student: { id: number; token: string } }).student;
      sessionId = student.id;
      const url = `${world.baseUrl}/api/room/${student.token}`;
      await post(`${url}/start`);
      const send = async (source: string, first: number, chunks: readonly Buffer[], type: string) => {
        for (const [index, bytes] of chunks.entries()) {
          await post(`${url}/recordings`, { sequence: String(first + index), source }, bytes, type);
        }
      };
      await send('webcam', 0, cameraA, 'video/mp4');
      await send('screen', 0, SCREEN_A, 'video/webm');
      await send('webcam', cameraA.length, cameraB, 'video/mp4');
      await send('screen', SCREEN_A.length, SCREEN_B, 'video/webm');
      await post(`${url}/finish`);
      await spreadOverTime(sessionId);
      await runDueJobs(world.server, dialect, world.server.app.clock);
      page = await signedInPage(world, reviewer);
    });

    after(async () => {
      await world.close();
      fs.rmSync(directory, { recursive: true, force: true });
    });

    it('finalised the webcam as MP4 and the screen as WebM', async () => {
      const answer = await reviewer.client.v3('GET', '/student_sessions/:id/recordings', { id: sessionId });
      assert.equal(answer.status, 200, answer.text);
      const list = (answer.json as { recordings: Record<string, unknown>[] }).recordings;
      assert.deepEqual(
        list.map((entry) => [entry.source, entry.status]),
        [
          ['webcam', 'completed'],
          ['screen', 'completed'],
        ],
      );
    });

    it('Chromium plays H.264 + AAC in MP4', async () => {
      await page.goto(`${world.baseUrl}/console/sessions/${sessionId}/review`);
      const answer = await page.evaluate(() =>
        document.createElement('video').canPlayType('video/mp4; codecs="avc1.4d400c, mp4a.40.2"'),
      );
      assert.equal(answer, 'probably');
    });

    it('loads both side by side with their whole length known', async () => {
      await page.waitForFunction(() => {
        const list = [...document.querySelectorAll('video')];
        return list.length === 2 && list.every((video) => video.readyState >= 2);
      });
      const [webcam, screen] = await videos(page);
      assert.ok(webcam !== undefined && screen !== undefined);
      assert.deepEqual(
        [webcam.source, screen.source, webcam.error, screen.error],
        ['webcam', 'screen', null, null],
      );
      // 20 s, the gap of the reload (20 s to 40 s), then 12 s.
      assert.ok(Math.abs(webcam.duration - 52) < 1, `webcam (MP4) lasts ${webcam.duration} s`);
      assert.ok(Number.isFinite(screen.duration), `screen (WebM) lasts ${screen.duration} s`);
      const slider = page.getByRole('slider', { name: 'Playhead' });
      assert.match((await slider.getAttribute('aria-valuetext')) ?? '', /^00:00 of 00:5[123]$/);
      await page.getByRole('button', { name: /^Incident at 00:2\d: Webcam recording gap: / }).waitFor();
    });

    it('plays both together: both advance, in step', async () => {
      await page.locator('h1').focus();
      await page.keyboard.press('k');
      await page.waitForFunction(() =>
        [...document.querySelectorAll('video')].every((video) => !video.paused),
      );
      await page.waitForFunction(() =>
        [...document.querySelectorAll('video')].every((video) => video.currentTime > 2),
      );
      await page.keyboard.press('k');
      await page.waitForFunction(() =>
        [...document.querySelectorAll('video')].every((video) => video.paused),
      );
      const [webcam, screen] = await videos(page);
      assert.ok(webcam !== undefined && screen !== undefined);
      assert.ok(
        Math.abs(webcam.time - screen.time) < 0.5,
        `webcam at ${webcam.time}, screen at ${screen.time}`,
      );
    });

    it('seeking moves both, into the MP4’s second recorder and back', async () => {
      const slider = page.getByRole('slider', { name: 'Playhead' });
      await slider.focus();
      await page.keyboard.press('Home');
      await waitForTime(page, 0);
      for (let press = 0; press < 9; press += 1) await page.keyboard.press('ArrowRight');
      // Into the second recorder (from 40 s): both follow.
      await page.waitForFunction(() =>
        [...document.querySelectorAll('video')].every(
          (video) => video.currentTime > 40 && video.readyState >= 2,
        ),
      );
      const [webcam, screen] = await videos(page);
      assert.ok(webcam !== undefined && screen !== undefined);
      assert.ok(
        Math.abs(webcam.time - screen.time) < 0.5,
        `webcam at ${webcam.time}, screen at ${screen.time}`,
      );
      await page.keyboard.press('Home');
      await waitForTime(page, 0);
      await page.waitForFunction(() =>
        [...document.querySelectorAll('video')].every((video) => video.readyState >= 2),
      );
      await checkScreen(page, 'review-mp4');
    });
  });
}
