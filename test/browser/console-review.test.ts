/**
 * The review queue and the review screen in Chromium, on SQLite and PostgreSQL, over real WebM
 * chunks recorded by Chromium's MediaRecorder (test/fixtures/recordings: webcam and screen, each
 * from two recorders as a page reload makes them). A candidate's session is recorded with a reload
 * in the middle and finished, and the finalisation job runs; a reviewer then finds it in the exam's
 * review queue (sorted by incidents, filtered by verdict), watches webcam and screen side by side
 * in sync, jumps to incidents from the timeline's markers and the keyboard, adds an incident at the
 * playhead and records a verdict that V3 then shows. A session not yet finalised shows its status;
 * a running one plays near-live from its chunks. Every screen gets axe and a screenshot; 390 px too.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { httpRequest } from '../helpers/http.ts';
import { multipartBody } from '../helpers/multipart.ts';
import { pdfPages } from '../helpers/pdf.ts';
import { browserDialects } from '../helpers/server.ts';
import { runDueJobs } from '../mail/support.ts';
import {
  assertNoHorizontalScroll,
  checkScreen,
  newPage,
  signedInPage,
  signIn,
  startConsoleWorld,
  type ConsoleWorld,
  type StaffUser,
} from './console/support.ts';

const FIXTURES = path.resolve(import.meta.dirname, '../fixtures/recordings');
const chunksOf = (prefix: string, count: number): Buffer[] =>
  Array.from({ length: count }, (_, index) =>
    fs.readFileSync(path.join(FIXTURES, `${prefix}-${index}.webm`)),
  );

const CAMERA_A = chunksOf('camera-a', 5);
const CAMERA_B = chunksOf('camera-b', 4);
const SCREEN_A = chunksOf('screen-a', 4);
const SCREEN_B = chunksOf('screen-b', 3);
/** When the reload's second recorders start, in seconds after the exam's start. */
const RELOAD_AT = 40;
/** When the recorded session ends, in seconds after its start. */
const ENDS_AT = RELOAD_AT + 13;

type Json = Record<string, unknown>;

for (const dialect of browserDialects(import.meta.url)) {
  describe(`console review in Chromium [${dialect}]`, () => {
    let world: ConsoleWorld;
    let teacher: StaffUser;
    let reviewer: StaffUser;
    let page: Page;
    let examId: number;
    let recorded: { id: number; token: string };
    let busy: { id: number; token: string };
    let running: { id: number; token: string };
    let students = 0;

    const runJobs = () => runDueJobs(world.server, dialect, world.server.app.clock);

    /** A session of the exam, started in the room (requirements skipped). */
    async function startedSession(name: string): Promise<{ id: number; token: string }> {
      students += 1;
      const answer = await teacher.client.v3('POST', '/exams/:exam_id/student_sessions', {
        exam_id: examId,
        name,
        email: `candidate${students}@example.org`,
        skip_requirements: true,
      });
      assert.equal(answer.status, 201, answer.text);
      const student = (answer.json as { student: { id: number; token: string } }).student;
      // The exam has terms: the candidate accepts them with the start.
      await room(student.token, 'start', { terms_accepted: true });
      return { id: student.id, token: student.token };
    }

    async function room(token: string, action: string, body?: Record<string, unknown>): Promise<void> {
      const answer = await httpRequest({
        url: `${world.baseUrl}/api/room/${token}/${action}`,
        method: 'POST',
        ...(body === undefined
          ? {}
          : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
      });
      assert.equal(answer.status, 200, answer.text);
    }

    async function sendFile(
      token: string,
      route: string,
      fields: Record<string, string>,
      bytes: Buffer,
      type: string,
    ) {
      const { body, contentType } = multipartBody(fields, [
        {
          field: 'file',
          fileName: type === 'image/png' ? 'photo.png' : 'chunk.webm',
          contentType: type,
          bytes,
        },
      ]);
      const answer = await httpRequest({
        url: `${world.baseUrl}/api/room/${token}/${route}`,
        method: 'POST',
        headers: { 'content-type': contentType },
        body,
      });
      assert.ok(answer.status === 200 || answer.status === 201, answer.text);
    }

    /** Uploads a recorder's chunks as the room does, from sequence `first`. */
    async function record(
      token: string,
      source: 'webcam' | 'screen',
      first: number,
      chunks: readonly Buffer[],
    ) {
      for (const [index, bytes] of chunks.entries()) {
        await sendFile(token, 'recordings', { sequence: String(first + index), source }, bytes, 'video/webm');
      }
    }

    /**
     * Puts the recorded session on a clock of its own, as if it had lasted ENDS_AT seconds: each
     * chunk arriving 150 ms after its 4 s of recording, the reload's recorders starting at RELOAD_AT.
     */
    async function spreadOverTime(sessionId: number): Promise<void> {
      const db = world.server.app.database.db;
      const row = await db
        .selectFrom('student_sessions')
        .select('start_time')
        .where('id', '=', sessionId)
        .executeTakeFirstOrThrow();
      const start = Number(row.start_time);
      const arrivals = (count: number, startSeconds: number) =>
        Array.from(
          { length: count },
          (_, index) => startSeconds + Math.min(4 * (index + 1), 4 * (count - 1) + 0.5) + 0.15,
        );
      const plan = [
        ['recording', [...arrivals(CAMERA_A.length, 0), ...arrivals(CAMERA_B.length, RELOAD_AT)]],
        ['screen_recording', [...arrivals(SCREEN_A.length, 0), ...arrivals(SCREEN_B.length, RELOAD_AT)]],
      ] as const;
      for (const [kind, seconds] of plan) {
        for (const [sequence, at] of seconds.entries()) {
          await db
            .updateTable('session_files')
            .set({ created_at: start + Math.round(at * 1000) })
            .where('student_session_id', '=', sessionId)
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
        .where('id', '=', sessionId)
        .execute();
    }

    async function incident(sessionId: number, comment: string, offset: number): Promise<void> {
      const answer = await teacher.client.v3('POST', '/student_sessions/:id/incidents', {
        id: sessionId,
        comment,
        offset_time: offset,
      });
      assert.equal(answer.status, 201, answer.text);
    }

    /** A small PNG (a coloured block), as a phone camera would send a photo. */
    async function photo(colour: string): Promise<Buffer> {
      const scratch = await newPage(world, { width: 200, height: 200 });
      await scratch.setContent(`<body style="margin:0;background:${colour}"></body>`);
      const bytes = await scratch.screenshot({ clip: { x: 0, y: 0, width: 120, height: 150 } });
      await scratch.context().close();
      return bytes;
    }

    /** The master and follower videos' times and states. */
    function videos(target: Page) {
      return target.evaluate(() =>
        [...document.querySelectorAll('video')].map((video) => ({
          source: video.dataset.source,
          time: video.currentTime,
          paused: video.paused,
          rate: video.playbackRate,
          ready: video.readyState,
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
      world = await startConsoleWorld(dialect);
      teacher = await world.staff('teacher');
      reviewer = await world.staff('reviewer');
      const exam = await teacher.client.v3('POST', '/exams', {
        name: 'Chemistry final',
        type: 'record_review',
        duration_minutes: 60,
        web_cam: true,
        screen_share: true,
        terms: 'I work alone.',
      });
      assert.equal(exam.status, 201, exam.text);
      examId = (exam.json as { exam: { id: number } }).exam.id;

      // Ada: recorded with a reload in the middle, photos, an incident at 10 s; finished.
      recorded = await startedSession('Ada Lovelace');
      await sendFile(recorded.token, 'face_photo', {}, await photo('#b98b73'), 'image/png');
      await sendFile(recorded.token, 'id_card', {}, await photo('#4a6fa5'), 'image/png');
      await record(recorded.token, 'webcam', 0, CAMERA_A);
      await record(recorded.token, 'screen', 0, SCREEN_A);
      await record(recorded.token, 'webcam', CAMERA_A.length, CAMERA_B);
      await record(recorded.token, 'screen', SCREEN_A.length, SCREEN_B);
      await incident(recorded.id, 'Looked away from the screen', 10);
      await room(recorded.token, 'finish');
      await spreadOverTime(recorded.id);

      // Cleo: many incidents, no recording. Bob: none.
      const cleo = await startedSession('Cleo Many');
      for (const offset of [5, 60, 120, 180, 240, 300, 360])
        await incident(cleo.id, `Talking at ${offset}`, offset);
      await room(cleo.token, 'finish');
      const bob = await startedSession('Bob Quiet');
      await room(bob.token, 'finish');
      await runJobs();

      // Eve: finished after the worker ran: her recordings wait in the queue.
      busy = await startedSession('Eve Waiting');
      await record(busy.token, 'webcam', 0, CAMERA_A.slice(0, 2));
      await room(busy.token, 'finish');

      // Dan: still in the exam, his webcam chunks arriving.
      running = await startedSession('Dan Running');
      await record(running.token, 'webcam', 0, CAMERA_A);
      await record(running.token, 'screen', 0, SCREEN_A);

      page = await signedInPage(world, reviewer);
    });

    after(async () => {
      await world.close();
    });

    it('the recordings were finalised: both completed', async () => {
      const answer = await reviewer.client.v3('GET', '/student_sessions/:id/recordings', { id: recorded.id });
      assert.equal(answer.status, 200, answer.text);
      const list = (answer.json as { recordings: Json[] }).recordings;
      assert.deepEqual(
        list.map((entry) => [entry.source, entry.status]),
        [
          ['webcam', 'completed'],
          ['screen', 'completed'],
        ],
      );
    });

    it('the review queue lists the finished sessions, the most incidents first', async () => {
      await page.goto(`${world.baseUrl}/console/exams/${examId}/review`);
      await page.getByRole('cell', { name: 'Cleo Many' }).waitFor();
      const rows = page.locator('table.review-queue tbody tr');
      const names = await rows.locator('td[data-label="Student"] a').allTextContents();
      assert.deepEqual(
        names,
        ['Cleo Many', 'Ada Lovelace', 'Bob Quiet', 'Eve Waiting'].slice(0, names.length),
      );
      assert.equal(names.length, 4);
      const counts = (await rows.locator('td[data-label="Incidents"]').allTextContents()).map(Number);
      assert.deepEqual(
        counts,
        [...counts].sort((a, b) => b - a),
      );
      assert.equal(counts[0], 7);
      assert.equal(
        await page.getByRole('link', { name: 'Review', exact: true }).getAttribute('aria-current'),
        'page',
      );
      await checkScreen(page, 'review-queue');
    });

    it('filters the queue by verdict', async () => {
      await page.getByLabel('Verdict').selectOption('passed');
      await page.getByText('No session has this verdict').waitFor();
      assert.match(page.url(), /verdict=passed/);
      await page.getByLabel('Verdict').selectOption('');
      await page.getByRole('link', { name: 'Ada Lovelace' }).waitFor();
    });

    it('opens the review screen: two videos, the markers, the photo and the session facts', async () => {
      await page.getByRole('link', { name: 'Ada Lovelace' }).click();
      await page.waitForURL(`**/console/sessions/${recorded.id}/review`);
      await page.waitForFunction(() => {
        const list = [...document.querySelectorAll('video')];
        return list.length === 2 && list.every((video) => video.readyState >= 1);
      });
      assert.deepEqual(
        (await videos(page)).map((video) => video.source),
        ['webcam', 'screen'],
      );
      await page.getByRole('button', { name: 'Incident at 00:10: Looked away from the screen' }).waitFor();
      // The reload left a gap between the recorders: the job made it an incident, on the timeline too.
      const markers = await page
        .getByRole('list', { name: 'Incidents on the timeline' })
        .getByRole('button')
        .count();
      assert.ok(markers >= 2, `${markers} markers`);
      await page.getByRole('img', { name: 'Face photo of Ada Lovelace' }).waitFor();
      await page.getByRole('img', { name: 'ID card of Ada Lovelace' }).waitFor();
      await page.getByRole('heading', { name: 'Keyboard shortcuts' }).waitFor();
      // The candidate accepted the exam's terms with the start: the same time, in the same words.
      const fact = (name: string) =>
        page.locator('dl.facts > div', { has: page.locator('dt', { hasText: new RegExp(`^${name}$`) }) });
      const started = ((await fact('Started').locator('dd').textContent()) ?? '').trim();
      assert.match(started, /\d/);
      assert.equal(((await fact('Terms accepted').locator('dd').textContent()) ?? '').trim(), started);
      const slider = page.getByRole('slider', { name: 'Playhead' });
      // The recording lasts as long as the session, within a second.
      assert.match((await slider.getAttribute('aria-valuetext')) ?? '', /^00:00 of 00:5[23]$/);
      await checkScreen(page, 'review');
    });

    it('seeks both videos to an incident when its marker is clicked', async () => {
      await page.getByRole('button', { name: 'Incident at 00:10: Looked away from the screen' }).click();
      await waitForTime(page, 10);
      assert.match(
        (await page.getByRole('slider', { name: 'Playhead' }).getAttribute('aria-valuetext')) ?? '',
        /^00:10 of /,
      );
      // Into the second recorder's part (after the reload): both follow.
      await page.getByRole('slider', { name: 'Playhead' }).focus();
      for (let press = 0; press < 7; press += 1) await page.keyboard.press('ArrowRight');
      await waitForTime(page, 45);
    });

    it('answers the keyboard shortcuts', async () => {
      await page.getByRole('button', { name: 'Incident at 00:10: Looked away from the screen' }).click();
      await waitForTime(page, 10);
      await page.locator('h1').focus();
      await page.keyboard.press('l');
      await waitForTime(page, 15);
      await page.keyboard.press('j');
      await page.keyboard.press('ArrowLeft');
      await waitForTime(page, 5);
      await page.keyboard.press('ArrowRight');
      await waitForTime(page, 10);
      await page.keyboard.press('n');
      const next = await page.evaluate(() => document.querySelector('video')?.currentTime ?? 0);
      assert.ok(next > 10.5, `N went to ${next}`);
      await page.keyboard.press('p');
      await waitForTime(page, 10);
      // Speed, then play: the follower plays at the master's speed and stays with it.
      await page.getByLabel('Speed').selectOption('2');
      await page.locator('h1').focus();
      await page.keyboard.press('k');
      await page.waitForFunction(() =>
        [...document.querySelectorAll('video')].every((video) => !video.paused),
      );
      await page.waitForTimeout(1500);
      await page.keyboard.press(' ');
      await page.waitForFunction(() =>
        [...document.querySelectorAll('video')].every((video) => video.paused),
      );
      const [webcam, screen] = await videos(page);
      assert.ok(webcam !== undefined && screen !== undefined);
      assert.equal(webcam.rate, 2);
      assert.equal(screen.rate, 2);
      assert.ok(webcam.time > 11, `played to ${webcam.time}`);
      assert.ok(Math.abs(webcam.time - screen.time) < 0.5, `webcam ${webcam.time}, screen ${screen.time}`);
      await page.getByLabel('Speed').selectOption('1');
    });

    it('adds an incident at the playhead', async () => {
      const slider = page.getByRole('slider', { name: 'Playhead' });
      await slider.focus();
      await page.keyboard.press('Home');
      for (let press = 0; press < 4; press += 1) await page.keyboard.press('ArrowRight');
      await waitForTime(page, 20);
      await page.getByLabel('Incident', { exact: true }).fill('A second person in view');
      await page.getByRole('button', { name: 'Add incident at playhead (00:20)' }).click();
      await page.getByText('Incident added at 00:20.').waitFor();
      await page.getByRole('button', { name: 'Incident at 00:20: A second person in view' }).waitFor();
      const answer = await reviewer.client.v3('GET', '/student_sessions/:id', { id: recorded.id });
      const incidents = (answer.json as { student: { incidents: Json[] } }).student.incidents;
      assert.ok(
        incidents.some((item) => item.comment === 'A second person in view' && item.offset_time === 20),
      );
    });

    it('records a verdict that GET review then shows', async () => {
      await page.getByRole('radio', { name: /Suspicious/ }).check();
      await page.getByLabel('Comment').fill('Someone walks in at 00:20.');
      await page.getByRole('button', { name: 'Save verdict' }).click();
      await page.getByText('Verdict saved: Suspicious.').waitFor();
      const answer = await reviewer.client.v3('GET', '/student_sessions/:id/review', { id: recorded.id });
      assert.equal(answer.status, 200, answer.text);
      const review = (answer.json as { review: Json & { history: Json[] } }).review;
      assert.equal(review.verdict, 'suspicious');
      assert.equal(review.comment, 'Someone walks in at 00:20.');
      assert.equal(review.history.length, 1);
      await page.getByRole('list').filter({ hasText: 'Someone walks in at 00:20.' }).waitFor();
      await checkScreen(page, 'review-verdict');
      // The queue shows it, and filters by it.
      await page.goto(`${world.baseUrl}/console/exams/${examId}/review?verdict=suspicious`);
      await page.getByRole('link', { name: 'Ada Lovelace' }).waitFor();
      assert.equal(await page.locator('table.review-queue tbody tr').count(), 1);
    });

    it('shows a recording not ready yet with its status and a way to look again', async () => {
      await page.goto(`${world.baseUrl}/console/sessions/${busy.id}/review`);
      await page.getByText('Webcam recording: waiting to be prepared (queued).').waitFor();
      await checkScreen(page, 'review-pending');
      await runJobs();
      await page.getByRole('button', { name: 'Check the recordings again' }).click();
      await page.waitForFunction(() => document.querySelector('video')?.readyState !== undefined);
      await page.locator('video[data-source="webcam"]').waitFor();
    });

    it('plays a running session near-live from its chunks', async () => {
      await page.goto(`${world.baseUrl}/console/sessions/${running.id}/review`);
      await page.getByRole('heading', { name: 'Live', exact: true }).waitFor();
      await page.waitForFunction(
        () => {
          const list = [...document.querySelectorAll<HTMLVideoElement>('video[data-live]')];
          return (
            list.length === 2 && list.every((video) => video.buffered.length > 0 && video.readyState >= 2)
          );
        },
        undefined,
        { timeout: 30_000 },
      );
      await page.getByText('Live, a few seconds behind').first().waitFor();
      // New chunks are appended as they arrive (the recorder goes on after a reload).
      const before = await page.evaluate(
        () => document.querySelector<HTMLVideoElement>('video[data-live]')?.buffered.end(0) ?? 0,
      );
      await record(running.token, 'webcam', CAMERA_A.length, CAMERA_B.slice(0, 2));
      await page.waitForFunction(
        (known) => {
          const video = document.querySelector<HTMLVideoElement>('video[data-live]');
          if (video === null || video.buffered.length === 0) return false;
          return video.buffered.end(video.buffered.length - 1) > known + 1;
        },
        before,
        { timeout: 30_000 },
      );
      await checkScreen(page, 'review-live');
    });

    it('reads at 390 px without horizontal scrolling', async () => {
      const narrow = await newPage(world, { width: 390, height: 844 });
      await signIn(narrow, world.baseUrl, reviewer.email);
      await narrow.goto(`${world.baseUrl}/console/exams/${examId}/review`);
      await narrow.getByRole('link', { name: 'Ada Lovelace' }).waitFor();
      await assertNoHorizontalScroll(narrow, 'review queue at 390 px');
      await checkScreen(narrow, 'review-queue-narrow');
      await narrow.getByRole('link', { name: 'Ada Lovelace' }).click();
      await narrow.waitForFunction(() => document.querySelectorAll('video').length === 2);
      await narrow.getByRole('slider', { name: 'Playhead' }).waitFor();
      await assertNoHorizontalScroll(narrow, 'review screen at 390 px');
      await checkScreen(narrow, 'review-narrow');
      await narrow.context().close();
    });

    it('offers the report as a PDF download', async () => {
      await page.goto(`${world.baseUrl}/console/sessions/${recorded.id}/review`);
      const download = page.waitForEvent('download');
      await page.getByRole('button', { name: 'Download report (PDF)' }).click();
      const file = await download;
      assert.equal(file.suggestedFilename(), `student-session-${recorded.id}-report.pdf`);
      const saved = await file.path();
      assert.equal(fs.readFileSync(saved).subarray(0, 5).toString('latin1'), '%PDF-');
      // In the institute's language by default (English here); the reviewer may pick another.
      assert.match(pdfPages(fs.readFileSync(saved)).join('\n'), /Student session report/);
      await page.getByLabel('Language of the report').selectOption('fr');
      const french = page.waitForEvent('download');
      await page.getByRole('button', { name: 'Download report (PDF)' }).click();
      const frenchFile = fs.readFileSync(await (await french).path());
      assert.match(pdfPages(frenchFile).join('\n'), /Rapport de session d’examen/);
    });
  });
}
