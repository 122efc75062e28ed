/**
 * The candidate's side of live proctoring in a real browser: Debian's Chromium with a fake camera,
 * microphone and screen, the real service with the embedded media engine. The room publishes from
 * the setup on; a second page, signed in as the exam's manager, watches the candidate through the
 * browser live client (/live/assets/live-client.js) and counts the frames it is shown
 * (requestVideoFrameCallback). A message of the proctor appears in the room and the candidate's
 * answer reaches V3; the candidate waits for admission, the proctor admits, pauses and resumes the
 * clock, a dropped connection and a reload come back by themselves, and the proctor ends the exam.
 * The recording's chunks keep arriving throughout. Screenshots land in test-output/screenshots/.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { SCREENSHOT_DIR } from '../helpers/browser.ts';
import { httpRequest } from '../helpers/http.ts';
import { object } from '../helpers/json.ts';
import { browserDialects } from '../helpers/server.ts';
import type { Scalar } from '../helpers/signing.ts';
import { assertNoSeriousAxeViolations } from './axe.ts';
import {
  type ConsoleWorld,
  newPage,
  signedInPage,
  type StaffUser,
  startConsoleWorld,
} from './console/support.ts';
import { acceptPrivacy } from './privacy-support.ts';

type Json = Record<string, unknown>;

/** What the proctor page keeps on `window.proctor` (set up by watchFromProctorPage). */
interface ProctorProbe {
  frames: { camera: number; screen: number };
  states: string[];
  sockets: string[];
  stats: { fps: number | null; lossPercent: number | null; rttMs: number | null } | null;
}

for (const dialect of browserDialects(import.meta.url)) {
  describe(`live proctoring, the candidate's room in Chromium [${dialect}]`, () => {
    let world: ConsoleWorld;
    let owner: StaffUser;
    let room: Page;
    let proctor: Page;
    let examId: number;
    let sessionId: number;
    let token: string;
    let step = 0;

    before(async () => {
      world = await startConsoleWorld(dialect);
      owner = await world.staff('teacher');
      const exam = await v3(
        'POST',
        '/exams',
        {
          name: 'Live chemistry',
          type: 'live_proctoring',
          duration_minutes: 30,
          web_cam: true,
          screen_share: true,
          live_id_check: true,
        },
        201,
      );
      examId = object(exam.exam, 'exam').id as number;
      await v3(
        'POST',
        '/exams/:exam_id/documents',
        { exam_id: examId, exam_content: '<p>Answer both questions.</p>' },
        201,
      );
      const student = object(
        (
          await v3(
            'POST',
            '/exams/:exam_id/student_sessions',
            {
              exam_id: examId,
              name: 'Rosalind Franklin',
              email: 'rosalind@example.org',
              skip_requirements: true,
            },
            201,
          )
        ).student,
        'student',
      );
      sessionId = student.id as number;
      token = student.token as string;
      room = await newPage(world);
      proctor = await signedInPage(world, owner);
    });

    after(async () => {
      await world?.close();
    });

    async function v3(
      method: string,
      route: string,
      params: Record<string, Scalar>,
      status = 200,
    ): Promise<Json> {
      const answer = await owner.client.v3(method, route, params);
      assert.equal(answer.status, status, `${method} ${route}: ${answer.text}`);
      return object(answer.json, 'body');
    }

    async function student(): Promise<Json> {
      return object((await v3('GET', '/student_sessions/:id', { id: sessionId })).student, 'student');
    }

    /** Waits until `check` holds, asking every 200 ms for `ms`; fails with `what`. */
    async function eventually(what: string, check: () => Promise<boolean>, ms = 20_000): Promise<void> {
      const until = Date.now() + ms;
      while (Date.now() < until) {
        if (await check()) return;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      assert.fail(`not within ${ms / 1000} s: ${what}`);
    }

    /** The camera recording chunks the server holds (V3 files of kind recording). */
    async function recordingChunks(): Promise<number> {
      const files = await v3('GET', '/student_sessions/:id/files', { id: sessionId, kind: 'recording' });
      return (files.files as Json[]).length;
    }

    /** Waits until the server holds more than `count` recording chunks; returns how many it holds. */
    async function moreChunksThan(count: number): Promise<number> {
      let now = count;
      await eventually(
        `a recording chunk after the ${count} held`,
        async () => {
          now = await recordingChunks();
          return now > count;
        },
        30_000,
      );
      return now;
    }

    async function screenshot(name: string, target: Page = room): Promise<void> {
      step += 1;
      await target.evaluate(() => window.scrollTo(0, 0));
      await target.screenshot({
        path: path.join(SCREENSHOT_DIR, `room-live-${dialect}-${String(step).padStart(2, '0')}-${name}.png`),
        fullPage: true,
      });
    }

    async function assertNoAlert(): Promise<void> {
      const alert = room.locator('#alert');
      if (await alert.isVisible()) assert.fail(`the room shows an error: ${await alert.textContent()}`);
    }

    function probe(): Promise<ProctorProbe> {
      return proctor.evaluate(() => {
        const found = (window as unknown as { proctor: ProctorProbe }).proctor;
        return JSON.parse(JSON.stringify(found)) as ProctorProbe;
      });
    }

    /** Fails unless the proctor page is shown at least `least` new camera frames within 3 s. */
    async function assertFramesAdvance(least: number, what: string): Promise<void> {
      const first = (await probe()).frames.camera;
      let last = first;
      await eventually(
        `${what}: ${least} new camera frames on the proctor's page`,
        async () => {
          last = (await probe()).frames.camera;
          return last - first >= least;
        },
        10_000,
      );
    }

    const indicator = () => room.locator('#live-state');

    it('answers the room page with a policy that lets it reach the live socket', async () => {
      const answer = await httpRequest({ url: `${world.baseUrl}/room/${token}` });
      assert.equal(answer.status, 200);
      const policy = String(answer.headers['content-security-policy']);
      const connect = policy.split(';').find((directive) => directive.trim().startsWith('connect-src'));
      assert.equal(connect?.trim(), `connect-src 'self' ${world.baseUrl.replace('http:', 'ws:')}`);
    });

    it('publishes the camera and the screen from the setup on, and waits for the proctor to admit', async () => {
      await room.goto(`${world.baseUrl}/room/${token}`);
      await room.getByRole('heading', { name: 'Before you start' }).waitFor();
      await acceptPrivacy(room);
      await room.getByText('Waiting for your proctor to check your ID').waitFor();
      assert.equal(
        await room.getByRole('button', { name: 'Start the exam' }).count(),
        0,
        'no start button yet',
      );
      assert.equal(await indicator().getAttribute('role'), 'status');
      // Opened for the first time: connected, but nothing is shown to the proctor before the camera check.
      await indicator()
        .getByText('Connected to your proctor. They can see you once your camera is on.')
        .waitFor();
      await room.getByRole('button', { name: 'Test camera and microphone' }).click();
      await room.getByText('Camera: passed').waitFor();
      await room.getByRole('button', { name: 'Share your screen' }).click();
      await room.getByText('Screen sharing: passed').waitFor();
      await indicator().getByText('Your proctor can see you').waitFor();
      await assertNoAlert();
      await eventually('live_status live in V3', async () => (await student()).live_status === 'live');
      assert.equal((await student()).status, 'in_setup');
      await assertNoSeriousAxeViolations(room, 'live setup, awaiting admission');
      await screenshot('awaiting-admission');
    });

    it('shows the proctor the candidate, with advancing frames', async () => {
      await proctor.evaluate(
        async ({ client, examId: exam, sessionId: session }) => {
          interface Handlers {
            onStream(kind: 'camera' | 'screen', stream: MediaStream): void;
            onState(state: string): void;
          }
          interface Client {
            connectLive(options: { url: string; onStatus(status: string): void }): {
              watch(sessionId: number, handlers: Handlers): { stats(): Promise<ProctorProbe['stats']> };
            };
          }
          const live = (await import(client)) as Client;
          const found: ProctorProbe = {
            frames: { camera: 0, screen: 0 },
            states: [],
            sockets: [],
            stats: null,
          };
          (window as unknown as { proctor: ProctorProbe }).proctor = found;
          const connection = live.connectLive({
            url: `/live/exams/${exam}`,
            onStatus: (status) => found.sockets.push(status),
          });
          const watch = connection.watch(session, {
            onStream(kind, stream) {
              let video = document.getElementById(`proctor-${kind}`);
              if (!(video instanceof HTMLVideoElement)) {
                video = document.createElement('video');
                video.id = `proctor-${kind}`;
                document.body.prepend(video);
                const shown = video as HTMLVideoElement;
                shown.muted = true;
                shown.width = 320;
                const count = () =>
                  shown.requestVideoFrameCallback(() => {
                    found.frames[kind] += 1;
                    count();
                  });
                count();
              }
              const player = video as HTMLVideoElement;
              player.srcObject = stream;
              void player.play();
            },
            onState: (state) => found.states.push(state),
          });
          window.setInterval(() => {
            void watch.stats().then((stats) => (found.stats = stats));
          }, 1000);
        },
        { client: '/live/assets/live-client.js', examId, sessionId },
      );
      await eventually('the watch goes live', async () => (await probe()).states.includes('live'));
      await assertFramesAdvance(15, 'first watch');
      await eventually('a frame of the screen', async () => (await probe()).frames.screen > 0);
      await eventually('the stats measure the frame rate', async () => ((await probe()).stats?.fps ?? 0) > 0);
      const stats = (await probe()).stats;
      assert.ok(
        stats !== null && stats.fps !== null && stats.fps <= 20,
        `about 15 fps: ${JSON.stringify(stats)}`,
      );
      await screenshot('proctor-watching', proctor);
    });

    it("shows the proctor's message in the room, read out, and takes the candidate's answer", async () => {
      await v3(
        'POST',
        '/student_sessions/:id/messages',
        { id: sessionId, body: 'Please hold your ID card up to the camera.' },
        201,
      );
      const log = room.getByRole('log', { name: 'Messages' });
      await log.getByText('Please hold your ID card up to the camera.').waitFor();
      assert.equal(await log.getAttribute('aria-live'), 'polite');
      assert.match((await room.locator('#status').textContent()) ?? '', /New message from your proctor/);
      // An empty answer is refused in the room, with the reason next to the field.
      await room.getByRole('button', { name: 'Send' }).click();
      await room.locator('#chat-error', { hasText: 'Write a message first.' }).waitFor();
      const field = room.getByLabel('Your message to the proctor');
      await field.fill('Here it is — can you read it?');
      await field.press('Enter');
      await log.getByText('Here it is — can you read it?').waitFor();
      // The socket may show the message a moment before the service's answer empties the field.
      await room.waitForFunction(
        () => (document.getElementById('chat-body') as HTMLInputElement | null)?.value === '',
        undefined,
        { timeout: 10_000 },
      );
      assert.ok(!(await room.locator('#chat-error').isVisible()));
      const messages = (await v3('GET', '/student_sessions/:id/messages', { id: sessionId }))
        .messages as Json[];
      assert.deepEqual(
        messages.map((message) => [message.sender, message.body]),
        [
          ['proctor', 'Please hold your ID card up to the camera.'],
          ['candidate', 'Here it is — can you read it?'],
        ],
      );
      await assertNoSeriousAxeViolations(room, 'live chat');
      await screenshot('chat');
    });

    it('lets the candidate start once the proctor has admitted them, recording while live', async () => {
      await v3('POST', '/student_sessions/:id/admit', { id: sessionId });
      const start = room.getByRole('button', { name: 'Start the exam' });
      await start.waitFor();
      assert.ok(!(await room.getByText('Waiting for your proctor to check your ID').isVisible()));
      assert.match((await room.locator('#status').textContent()) ?? '', /checked your ID/);
      await start.click();
      await room.getByRole('heading', { name: 'Exam in progress' }).waitFor();
      await room.locator('#recording-state', { hasText: 'Recording your camera and screen' }).waitFor();
      await moreChunksThan(0);
      await assertFramesAdvance(15, 'after the start');
      await assertNoAlert();
    });

    it('stops the countdown while the proctor pauses the clock', async () => {
      const timer = room.locator('#time-left');
      await v3('POST', '/student_sessions/:id/pause', { id: sessionId });
      const note = room.locator('#clock-paused', { hasText: 'Your proctor paused the exam clock.' });
      await note.waitFor();
      assert.match((await room.locator('#timer').textContent()) ?? '', /clock paused/);
      const held = await timer.textContent();
      await room.waitForTimeout(2500);
      assert.equal(await timer.textContent(), held, 'the countdown stands still');
      assert.equal((await student()).clock_paused, true);
      const chunks = await recordingChunks();
      await moreChunksThan(chunks);
      await assertNoSeriousAxeViolations(room, 'clock paused');
      await screenshot('clock-paused');
      await v3('POST', '/student_sessions/:id/resume', { id: sessionId });
      await note.waitFor({ state: 'hidden' });
      const resumed = await timer.textContent();
      await room.waitForTimeout(2100);
      assert.notEqual(await timer.textContent(), resumed, 'the countdown runs again');
    });

    it('comes back by itself after the connection dropped, the recording waiting meanwhile', async () => {
      const chunks = await recordingChunks();
      await room.context().setOffline(true);
      await indicator().getByText('Connecting to your proctor…').waitFor();
      await screenshot('connection-dropped');
      await room.waitForTimeout(3000);
      await room.context().setOffline(false);
      await indicator().getByText('Your proctor can see you').waitFor({ timeout: 20_000 });
      await assertFramesAdvance(15, 'after the drop');
      await moreChunksThan(chunks);
    });

    it('reconnects by itself after a reload, and the chat history comes back', async () => {
      const chunks = await recordingChunks();
      // The browser remembers that the candidate allowed the camera and the microphone ("Allow on
      // every visit"), as most do after the first time.
      await room.context().grantPermissions(['camera', 'microphone'], { origin: world.baseUrl });
      await room.reload();
      await room.getByRole('heading', { name: 'Exam in progress' }).waitFor();
      // The camera was allowed before: the proctor sees the candidate again without a click.
      await indicator().getByText('Your proctor can see you').waitFor({ timeout: 20_000 });
      await room
        .getByRole('log', { name: 'Messages' })
        .getByText('Please hold your ID card up to the camera.')
        .waitFor();
      await assertFramesAdvance(15, 'after the reload');
      await eventually('live again in V3', async () => (await student()).live_status === 'live');
      // The camera records again by itself; the screen needs the student's click (a browser rule).
      await room.getByRole('button', { name: 'Share your screen again' }).click();
      await room.locator('#recording-state', { hasText: 'Recording your camera and screen' }).waitFor();
      await moreChunksThan(chunks);
      await v3('POST', '/student_sessions/:id/messages', { id: sessionId, body: 'Welcome back.' }, 201);
      await room.getByRole('log', { name: 'Messages' }).getByText('Welcome back.').waitFor();
      await assertNoSeriousAxeViolations(room, 'live exam after a reload');
      await screenshot('after-reload');
    });

    it('is usable at 200% zoom', async () => {
      await room.setViewportSize({ width: 640, height: 450 });
      const overflow = await room.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert.ok(overflow <= 1, `the page is ${overflow}px wider than the window`);
      await screenshot('200-percent');
      await room.setViewportSize({ width: 1280, height: 900 });
    });

    it('shows the finished page when the proctor ends the exam, and leaves the live connection', async () => {
      await v3('POST', '/student_sessions/:id/end_exam', { id: sessionId });
      await room.getByRole('heading', { name: 'Your exam is finished' }).waitFor({ timeout: 20_000 });
      assert.ok(!(await room.locator('#live-panel').isVisible()), 'the chat is gone');
      assert.ok(!(await indicator().isVisible()), 'the indicator is gone');
      await eventually('offline in V3', async () => (await student()).live_status === 'offline');
      const chunks = await recordingChunks();
      assert.ok(chunks >= 4, `the recording kept its chunks: ${chunks}`);
      // The seconds recorded after the proctor's end are refused by design: no alarm about them.
      await room.waitForFunction(
        () =>
          document.querySelector('#arrival-summary')?.textContent?.includes('ended by the exam staff') ===
          true,
        undefined,
        { timeout: 20_000 },
      );
      assert.equal(await room.locator('#arrival-summary.warning').count(), 0);
      await assertNoSeriousAxeViolations(room, 'finished by the proctor');
      await screenshot('ended');
    });
  });
}
