/**
 * The review screen with the phone as a third camera (docs/review.md, "The phone"), in Chromium on
 * SQLite and PostgreSQL, over real MediaRecorder chunks (test/fixtures/recordings): in a
 * `mobile_cam` exam a candidate's webcam and screen come from the room, and the phone's camera
 * (video only, VP9, portrait) from the phone API, starting a few seconds late and lost for a while
 * in the middle. Once finalised, the reviewer sees three players (Webcam, Screen, Phone) on one
 * timeline: a marker, the keyboard and playing at 2× move all three together, the webcam's sound
 * stays on, and the session's facts show the phone's check, status and recording. A session whose
 * phone sent nothing shows two players; a running one plays all three near-live. Axe and a
 * screenshot for each (console-review-mobile*.png), at 1280 px and 390 px without horizontal scroll.
 */
import { MOBILE_FINISH_GRACE_MS } from '../../src/domain/mobile/mobile.ts';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { httpRequest } from '../helpers/http.ts';
import { multipartBody } from '../helpers/multipart.ts';
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
const PHONE_A = chunksOf('phone-a', 3);
const PHONE_B = chunksOf('phone-b', 4);
/** When the room's second recorders start, in seconds after the exam's start. */
const RELOAD_AT = 40;
/** When the phone's first recorder starts (it noticed the exam a little late). */
const PHONE_STARTS_AT = 3;
/** When the phone, lost after its first recorder, comes back with a second one. */
const PHONE_BACK_AT = 39.5;
/** When the recorded session ends, in seconds after its start. */
const ENDS_AT = RELOAD_AT + 13;

type Json = Record<string, unknown>;
type Source = 'webcam' | 'screen' | 'mobile';
interface Candidate {
  readonly id: number;
  readonly token: string;
  /** The phone's pairing token. */
  readonly phone: string;
}

for (const dialect of browserDialects(import.meta.url)) {
  describe(`console review with the phone in Chromium [${dialect}]`, () => {
    let world: ConsoleWorld;
    let teacher: StaffUser;
    let reviewer: StaffUser;
    let page: Page;
    let examId: number;
    let recorded: Candidate;
    let noPhone: Candidate;
    let running: Candidate;
    let students = 0;

    // A session with a phone is finalised once its last chunk may have come in (MOBILE_FINISH_GRACE_MS).
    const runJobs = () =>
      runDueJobs(world.server, dialect, { now: () => world.server.app.clock.now() + MOBILE_FINISH_GRACE_MS });

    /** A session of the exam (requirements skipped) with its phone's pairing token, not started. */
    async function candidate(name: string): Promise<Candidate> {
      students += 1;
      const answer = await teacher.client.v3('POST', '/exams/:exam_id/student_sessions', {
        exam_id: examId,
        name,
        email: `phone-candidate${students}@example.org`,
        skip_requirements: true,
      });
      assert.equal(answer.status, 201, answer.text);
      const student = (answer.json as { student: { id: number; token: string } }).student;
      // The room's view makes the pairing token its QR code holds.
      const view = await httpRequest({ url: `${world.baseUrl}/api/room/${student.token}` });
      assert.equal(view.status, 200, view.text);
      const pairing = (view.json as { mobile: { pairing_url: string } }).mobile.pairing_url;
      const phone = /\/m\/([0-9a-f]{32})$/.exec(pairing)?.[1];
      assert.ok(phone !== undefined, `pairing_url ${pairing}`);
      return { id: student.id, token: student.token, phone };
    }

    async function post(url: string, fields?: Record<string, string>, bytes?: Buffer): Promise<void> {
      const multipart =
        bytes === undefined
          ? undefined
          : multipartBody(fields ?? {}, [
              { field: 'file', fileName: 'chunk.webm', contentType: 'video/webm', bytes },
            ]);
      const answer = await httpRequest({
        url,
        method: 'POST',
        ...(multipart === undefined
          ? fields === undefined
            ? {}
            : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(fields) }
          : { headers: { 'content-type': multipart.contentType }, body: multipart.body }),
      });
      assert.ok(answer.status === 200 || answer.status === 201, `${url}: ${answer.status} ${answer.text}`);
    }

    /** The phone opens its page and passes its camera check (before the exam starts). */
    async function pairPhone(who: Candidate): Promise<void> {
      await post(`${world.baseUrl}/api/mobile/${who.phone}/hello`, { device: 'Chrome 131 on Android 14' });
      const clip = PHONE_A[0];
      assert.ok(clip !== undefined);
      await post(`${world.baseUrl}/api/mobile/${who.phone}/check`, {}, clip);
    }

    /** Uploads a recorder's chunks from sequence `first`: the room's (webcam, screen) or the phone's. */
    async function record(who: Candidate, source: Source, first: number, chunks: readonly Buffer[]) {
      const url =
        source === 'mobile'
          ? `${world.baseUrl}/api/mobile/${who.phone}/recordings`
          : `${world.baseUrl}/api/room/${who.token}/recordings`;
      for (const [index, bytes] of chunks.entries()) {
        await post(url, { sequence: String(first + index), source }, bytes);
      }
    }

    /** When a recorder's chunks arrive (s): 150 ms after each 4 s, the short last one right after. */
    const arrivals = (count: number, startSeconds: number): number[] =>
      Array.from(
        { length: count },
        (_, index) => startSeconds + Math.min(4 * (index + 1), 4 * (count - 1) + 0.5) + 0.15,
      );

    /**
     * Puts a recorded session on a clock of its own, as if it had lasted ENDS_AT seconds: the room's
     * recorders from 0 and RELOAD_AT, the phone's (when `phone`) from PHONE_STARTS_AT and PHONE_BACK_AT.
     */
    async function spreadOverTime(sessionId: number, phone: boolean): Promise<void> {
      const db = world.server.app.database.db;
      const row = await db
        .selectFrom('student_sessions')
        .select('start_time')
        .where('id', '=', sessionId)
        .executeTakeFirstOrThrow();
      const start = Number(row.start_time);
      const plan: [string, number[]][] = [
        ['recording', [...arrivals(CAMERA_A.length, 0), ...arrivals(CAMERA_B.length, RELOAD_AT)]],
        ['screen_recording', [...arrivals(SCREEN_A.length, 0), ...arrivals(SCREEN_B.length, RELOAD_AT)]],
      ];
      if (phone) {
        plan.push([
          'mobile_recording',
          [...arrivals(PHONE_A.length, PHONE_STARTS_AT), ...arrivals(PHONE_B.length, PHONE_BACK_AT)],
        ]);
      }
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

    async function room(token: string, action: string): Promise<void> {
      await post(`${world.baseUrl}/api/room/${token}/${action}`);
    }

    async function incident(sessionId: number, comment: string, offset: number): Promise<void> {
      const answer = await teacher.client.v3('POST', '/student_sessions/:id/incidents', {
        id: sessionId,
        comment,
        offset_time: offset,
      });
      assert.equal(answer.status, 201, answer.text);
    }

    /** Every video's source, time, state, speed and sound. */
    function videos(target: Page) {
      return target.evaluate(() =>
        [...document.querySelectorAll('video')].map((video) => ({
          source: video.dataset.source,
          time: video.currentTime,
          paused: video.paused,
          rate: video.playbackRate,
          muted: video.muted,
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
        name: 'Physics final',
        type: 'record_review',
        duration_minutes: 60,
        web_cam: true,
        screen_share: true,
        mobile_cam: true,
      });
      assert.equal(exam.status, 201, exam.text);
      examId = (exam.json as { exam: { id: number } }).exam.id;

      // Ada: webcam and screen reloaded at 40 s, the phone from 3 s, lost, back at 39.5 s.
      recorded = await candidate('Ada Lovelace');
      await pairPhone(recorded);
      await room(recorded.token, 'start');
      await record(recorded, 'webcam', 0, CAMERA_A);
      await record(recorded, 'screen', 0, SCREEN_A);
      await record(recorded, 'mobile', 0, PHONE_A);
      await record(recorded, 'mobile', PHONE_A.length, PHONE_B);
      await record(recorded, 'webcam', CAMERA_A.length, CAMERA_B);
      await record(recorded, 'screen', SCREEN_A.length, SCREEN_B);
      await incident(recorded.id, 'Looked down at the desk', 10);
      await room(recorded.token, 'finish');
      await spreadOverTime(recorded.id, true);

      // Bob: his phone never paired, so no phone recording.
      noPhone = await candidate('Bob Nophone');
      await room(noPhone.token, 'start');
      await record(noPhone, 'webcam', 0, CAMERA_A);
      await record(noPhone, 'screen', 0, SCREEN_A);
      await room(noPhone.token, 'finish');
      await spreadOverTime(noPhone.id, false);
      await runJobs();

      // Dan: still in the exam, all three streams arriving.
      running = await candidate('Dan Running');
      await pairPhone(running);
      await room(running.token, 'start');
      await record(running, 'webcam', 0, CAMERA_A);
      await record(running, 'screen', 0, SCREEN_A);
      await record(running, 'mobile', 0, PHONE_A);

      page = await signedInPage(world, reviewer);
    });

    after(async () => {
      await world.close();
    });

    it('the three recordings were finalised, the phone last', async () => {
      const answer = await reviewer.client.v3('GET', '/student_sessions/:id/recordings', { id: recorded.id });
      assert.equal(answer.status, 200, answer.text);
      const list = (answer.json as { recordings: Json[] }).recordings;
      assert.deepEqual(
        list.map((entry) => [entry.source, entry.status]),
        [
          ['webcam', 'completed'],
          ['screen', 'completed'],
          ['mobile', 'completed'],
        ],
      );
    });

    it('shows three players, the phone labelled "Phone", and the phone in the session facts', async () => {
      await page.goto(`${world.baseUrl}/console/sessions/${recorded.id}/review`);
      await page.waitForFunction(() => {
        const list = [...document.querySelectorAll('video')];
        return list.length === 3 && list.every((video) => video.readyState >= 1);
      });
      assert.deepEqual(
        (await videos(page)).map((video) => video.source),
        ['webcam', 'screen', 'mobile'],
      );
      const phone = page.locator('figure[data-source="mobile"]');
      assert.equal((await phone.locator('figcaption').textContent())?.trim(), 'Phone');
      await phone.getByLabel('Phone recording').waitFor();
      // The timeline is the longest recording's; the phone's gap made an incident on it.
      const slider = page.getByRole('slider', { name: 'Playhead' });
      assert.match((await slider.getAttribute('aria-valuetext')) ?? '', /^00:00 of 00:5[23]$/);
      await page.getByRole('button', { name: /^Incident at 00:1\d: Phone recording gap: / }).waitFor();
      // The session's facts: the phone's check passed, and its recording with its gap.
      const facts = page.getByRole('region', { name: 'Session' });
      await facts.getByText('Phone: passed').waitFor({ state: 'attached' });
      const phoneFact = facts.locator('dd.phone');
      await phoneFact.getByText(/^Recording of 00:5\d, one gap$/).waitFor();
      await assertNoHorizontalScroll(page, 'review with the phone at 1280 px');
      await checkScreen(page, 'review-mobile');
    });

    it("seeks all three to an incident, and into the phone's second recorder", async () => {
      await page.getByRole('button', { name: 'Incident at 00:10: Looked down at the desk' }).click();
      await waitForTime(page, 10);
      // Into the phone's second recorder (after it came back): all three follow.
      await page.getByRole('slider', { name: 'Playhead' }).focus();
      for (let press = 0; press < 6; press += 1) await page.keyboard.press('ArrowRight');
      await waitForTime(page, 40);
    });

    it('plays and pauses the three together at the chosen speed, with the webcam heard', async () => {
      await page.getByRole('button', { name: 'Incident at 00:10: Looked down at the desk' }).click();
      await waitForTime(page, 10);
      await page.getByLabel('Speed').selectOption('2');
      await page.locator('h1').focus();
      await page.keyboard.press('k');
      await page.waitForFunction(() =>
        [...document.querySelectorAll('video')].every((video) => !video.paused),
      );
      await page.waitForTimeout(1500);
      await page.keyboard.press('k');
      await page.waitForFunction(() =>
        [...document.querySelectorAll('video')].every((video) => video.paused),
      );
      const states = await videos(page);
      const [webcam, screen, mobile] = states;
      assert.ok(webcam !== undefined && screen !== undefined && mobile !== undefined);
      for (const video of states) assert.equal(video.rate, 2, `${video.source} at ${video.rate}×`);
      assert.ok(webcam.time > 11, `played to ${webcam.time}`);
      for (const video of [screen, mobile]) {
        assert.ok(
          Math.abs(video.time - webcam.time) < 0.5,
          `${video.source} at ${video.time}, webcam at ${webcam.time}`,
        );
      }
      // One sound track: the webcam's, whichever recording leads.
      assert.equal(webcam.muted, false);
      await page.getByLabel('Speed').selectOption('1');
    });

    it('shows two players for a session whose phone sent nothing', async () => {
      await page.goto(`${world.baseUrl}/console/sessions/${noPhone.id}/review`);
      await page.waitForFunction(() => document.querySelectorAll('video').length === 2);
      await page.getByRole('slider', { name: 'Playhead' }).waitFor();
      assert.deepEqual(
        (await videos(page)).map((video) => video.source),
        ['webcam', 'screen'],
      );
      assert.equal(await page.locator('[data-source="mobile"]').count(), 0);
      await page
        .getByRole('region', { name: 'Session' })
        .locator('dd.phone')
        .getByText('No recording from the phone.')
        .waitFor();
    });

    it('plays a running session near-live with its phone', async () => {
      await page.goto(`${world.baseUrl}/console/sessions/${running.id}/review`);
      await page.getByRole('heading', { name: 'Live', exact: true }).waitFor();
      await page.waitForFunction(
        () => {
          const list = [...document.querySelectorAll<HTMLVideoElement>('video[data-live]')];
          return (
            list.length === 3 && list.every((video) => video.buffered.length > 0 && video.readyState >= 2)
          );
        },
        undefined,
        { timeout: 60_000 },
      );
      assert.equal(
        (await page.locator('figure[data-source="mobile"] figcaption').textContent())?.startsWith('Phone'),
        true,
      );
      await checkScreen(page, 'review-mobile-live');
    });

    it('reads at 390 px without horizontal scrolling, the three players one above the other', async () => {
      const narrow = await newPage(world, { width: 390, height: 844 });
      await signIn(narrow, world.baseUrl, reviewer.email);
      await narrow.goto(`${world.baseUrl}/console/sessions/${recorded.id}/review`);
      await narrow.waitForFunction(() => document.querySelectorAll('video').length === 3);
      await narrow.getByRole('slider', { name: 'Playhead' }).waitFor();
      await assertNoHorizontalScroll(narrow, 'review with the phone at 390 px');
      const lefts = await narrow.evaluate(() =>
        [...document.querySelectorAll('figure[data-source]')].map((figure) =>
          Math.round(figure.getBoundingClientRect().left),
        ),
      );
      assert.equal(new Set(lefts).size, 1, `one column: ${lefts.join(', ')}`);
      await checkScreen(narrow, 'review-mobile-narrow');
      await narrow.context().close();
    });
  });
}
