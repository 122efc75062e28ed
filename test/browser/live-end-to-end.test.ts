/**
 * Live proctoring end to end (issue 14), on SQLite and PostgreSQL: the real service with the
 * embedded media engine, Debian's Chromium with a fake camera and microphone, one browser with a
 * context per person. Four candidates of one live-proctored exam with a live ID check sit in the exam
 * room, all assigned to one proctor, who opens the proctor wall from My sessions. The wall shows
 * advancing frames from every candidate (requestVideoFrameCallback); the proctor chats with one
 * through the enlarged view, admits another (who then starts), ends a third's exam (the room shows
 * the finished page); the fourth candidate's network drops for 10 s and the wall shows them not live,
 * then live again with advancing frames, with no one acting. Screenshots in test-output/screenshots/.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { object } from '../helpers/json.ts';
import { browserDialects } from '../helpers/server.ts';
import type { Scalar } from '../helpers/signing.ts';
import {
  checkScreen,
  newPage,
  signedInPage,
  startConsoleWorld,
  type ConsoleWorld,
  type StaffUser,
} from './console/support.ts';
import { framesAdvance, MEDIA_TIMEOUT, tileSays } from './live-support.ts';
import { acceptPrivacy } from './privacy-support.ts';

type Json = Record<string, unknown>;

interface Candidate {
  readonly id: number;
  readonly token: string;
  readonly name: string;
  room: Page;
}

/** Who does what: Ada waits for the ID check, Bob chats, Cleo is ended, Dan's network drops. */
const NAMES = ['Ada Lovelace', 'Bob Babbage', 'Cleo Curie', 'Dan Darwin'] as const;
type Name = (typeof NAMES)[number];

/** How long the candidate's network is gone. */
const DROP_MS = 10_000;

for (const dialect of browserDialects(import.meta.url)) {
  describe(`live proctoring end to end: four candidates and their proctor [${dialect}]`, () => {
    let world: ConsoleWorld;
    let teacher: StaffUser;
    let proctor: StaffUser;
    let examId: number;
    let wall: Page;
    const candidates = new Map<Name, Candidate>();

    async function v3(
      method: string,
      route: string,
      params: Record<string, Scalar>,
      status = 200,
    ): Promise<Json> {
      const answer = await teacher.client.v3(method, route, params);
      assert.equal(answer.status, status, `${method} ${route}: ${answer.text}`);
      return object(answer.json, 'body');
    }

    function candidate(name: Name): Candidate {
      const found = candidates.get(name);
      assert.ok(found, name);
      return found;
    }

    async function record(name: Name): Promise<Json> {
      return object(
        (await v3('GET', '/student_sessions/:id', { id: candidate(name).id })).student,
        'student',
      );
    }

    /**
     * Creates the candidate's session, assigns it to the proctor and opens the room in its own
     * context; the camera check turns the camera on, and the room publishes it to the proctor.
     */
    async function enter(name: Name): Promise<void> {
      const created = object(
        (
          await v3(
            'POST',
            '/exams/:exam_id/student_sessions',
            {
              exam_id: examId,
              name,
              email: `${name.split(' ')[0]?.toLowerCase()}@example.org`,
              skip_requirements: true,
            },
            201,
          )
        ).student,
        'student',
      );
      const id = Number(created.id);
      await v3('POST', '/student_sessions/:id/assign_proctor', { id, proctor_id: proctor.id });
      const room = await newPage(world, { width: 1024, height: 768 });
      candidates.set(name, { id, token: String(created.token), name, room });
      await room.goto(`${world.baseUrl}/room/${String(created.token)}`);
      await room.getByRole('heading', { name: 'Before you start' }).waitFor();
      await acceptPrivacy(room);
      await room.getByRole('button', { name: 'Test camera and microphone' }).click();
      await room.getByText('Camera: passed').waitFor({ timeout: MEDIA_TIMEOUT });
      await room
        .locator('#live-state', { hasText: 'Your proctor can see you' })
        .waitFor({ timeout: MEDIA_TIMEOUT });
    }

    /** Waits until V3 says the candidate's live status is `status` (the hub stores it a moment later). */
    async function liveStatusBecomes(name: Name, status: string): Promise<void> {
      const until = Date.now() + MEDIA_TIMEOUT;
      let held: unknown;
      while (Date.now() < until) {
        held = (await record(name)).live_status;
        if (held === status) return;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      assert.fail(`${name}: live_status ${String(held)}, not ${status}`);
    }

    const tile = (name: Name) => wall.locator(`button.live-tile[data-session="${candidate(name).id}"]`);
    const tileVideo = (name: Name) => wall.locator(`video[data-session="${candidate(name).id}"]`);
    const enlarged = () => wall.locator('dialog.live-focus');

    /** Opens the candidate's enlarged view on the wall. */
    async function enlarge(name: Name): Promise<void> {
      await tile(name).click();
      await enlarged().getByRole('heading', { name }).waitFor();
    }

    async function closeEnlarged(): Promise<void> {
      await wall.keyboard.press('Escape');
      await enlarged().waitFor({ state: 'detached' });
    }

    before(async () => {
      world = await startConsoleWorld(dialect);
      teacher = await world.staff('teacher');
      proctor = await world.staff('proctor');
      const exam = await v3(
        'POST',
        '/exams',
        {
          name: 'Live chemistry',
          type: 'live_proctoring',
          duration_minutes: 60,
          web_cam: true,
          live_id_check: true,
        },
        201,
      );
      examId = Number(object(exam.exam, 'exam').id);
      // The four rooms open side by side, as candidates arrive at once.
      await Promise.all(NAMES.map((name) => enter(name)));
      // Ada waits for the proctor's ID check; the others were checked already.
      for (const name of NAMES.slice(1)) {
        await v3('POST', '/student_sessions/:id/admit', { id: candidate(name).id });
      }
      wall = await signedInPage(world, proctor);
    });

    after(async () => {
      await world?.close();
    });

    it('opens the wall from My sessions and shows advancing frames from all four candidates', async () => {
      // The proctor lands on My sessions; the live-proctored exam's name leads to the wall.
      await wall.getByRole('heading', { name: 'My sessions', level: 1 }).waitFor();
      await wall.getByText('Dan Darwin').waitFor();
      // The wall's streams keep the network busy for good: the page reaches network idle here, before
      // the wall (checkScreen waits for idle).
      await wall.waitForLoadState('networkidle');
      // The link names the exam at once; where it leads follows once the exam's type is read.
      const link = wall
        .locator(`a[href="/console/exams/${examId}/live"]`, { hasText: 'Live chemistry' })
        .first();
      await link.waitFor({ timeout: 20_000 });
      await link.click();
      await wall.waitForURL(`**/console/exams/${examId}/live`);
      await wall.getByLabel('Candidates per page').selectOption('4');
      await wall.getByText('Video and chat: connected.').waitFor({ timeout: MEDIA_TIMEOUT });
      await wall.waitForFunction(
        () => document.querySelectorAll('button.live-tile').length === 4,
        undefined,
        {
          timeout: MEDIA_TIMEOUT,
        },
      );
      for (const name of NAMES) await tileSays(wall, candidate(name).id, 'live');
      const presented = await Promise.all(NAMES.map((name) => framesAdvance(tileVideo(name))));
      for (const [at, name] of NAMES.entries()) {
        assert.ok((presented[at] ?? 0) >= 4, `${name}: ${presented[at]} frames`);
      }
      await checkScreen(wall, `live-e2e-wall-${dialect}`);
    });

    it('chats with a candidate through the enlarged view, both ways', async () => {
      await enlarge('Bob Babbage');
      const dialog = enlarged();
      await framesAdvance(dialog.locator('video[data-source="camera"]'));
      await dialog.getByLabel('Message to Bob Babbage').fill('Please turn your camera to your desk.');
      await wall.keyboard.press('Enter');
      const conversation = dialog.getByRole('list', { name: 'Messages with Bob Babbage' });
      await conversation.getByText('Please turn your camera to your desk.').waitFor();
      const room = candidate('Bob Babbage').room;
      await room.locator('#chat-messages').getByText('Please turn your camera to your desk.').waitFor();
      await room.getByLabel('Your message to the proctor').fill('Done — can you see it?');
      await room.getByRole('button', { name: 'Send', exact: true }).click();
      await conversation.getByText('Done — can you see it?').waitFor();
      await checkScreen(wall, `live-e2e-chat-${dialect}`);
      await closeEnlarged();
    });

    it('admits the candidate waiting for the ID check, who can then start', async () => {
      const room = candidate('Ada Lovelace').room;
      await room.getByText('Waiting for your proctor to check your ID').waitFor();
      await enlarge('Ada Lovelace');
      const dialog = enlarged();
      await dialog.getByRole('button', { name: 'Admit after ID check' }).click();
      const confirm = wall.getByRole('dialog', { name: 'Admit Ada Lovelace?' });
      await confirm.getByRole('button', { name: 'Admit', exact: true }).click();
      await dialog.getByText('Ada Lovelace is admitted: they can start the exam now.').waitFor();
      const start = room.getByRole('button', { name: 'Start the exam' });
      await start.click({ timeout: 30_000 });
      await room.getByRole('heading', { name: 'Exam in progress' }).waitFor();
      await dialog.locator('.focus-facts', { hasText: 'Exam started' }).waitFor({ timeout: 30_000 });
      assert.equal((await record('Ada Lovelace')).status, 'exam_started');
      await closeEnlarged();
    });

    it('ends a candidate’s exam after confirming, and the room shows the finished page', async () => {
      await enlarge('Cleo Curie');
      const dialog = enlarged();
      await dialog.getByRole('button', { name: 'End exam' }).click();
      const confirm = wall.getByRole('dialog', { name: 'End the exam of Cleo Curie?' });
      await confirm.getByRole('button', { name: 'End exam now' }).click();
      await dialog.getByText('The exam of Cleo Curie has ended.').waitFor();
      await candidate('Cleo Curie')
        .room.getByRole('heading', { name: 'Your exam is finished' })
        .waitFor({ timeout: 30_000 });
      assert.equal((await record('Cleo Curie')).status, 'exam_finished');
      await closeEnlarged();
      // Finished exams leave the wall (unless asked for).
      await tile('Cleo Curie').waitFor({ state: 'detached' });
    });

    it('shows a candidate whose network dropped for 10 s offline, then live again by itself', async () => {
      const dan = candidate('Dan Darwin');
      const danTile = wall.locator(`button.live-tile[data-session="${dan.id}"]`);
      // Chromium's offline emulation holds an open WebSocket's frames (both ways) without closing it,
      // and lets WebRTC media flow on; it fires `offline`, on which the live client drops its socket
      // and its publication at once. So the service sees the socket close and the proctor sees the
      // candidate offline, until the network is back and the client reconnects by itself.
      const dropped = Date.now();
      await dan.room.context().setOffline(true);
      await tileSays(wall, dan.id, 'offline', DROP_MS - 1000);
      // Drawn on the picture as generated content (LiveTile.svelte), so found by its attribute.
      await danTile.locator('.tile-placeholder[data-words="Not in the exam room"]').waitFor();
      await liveStatusBecomes('Dan Darwin', 'offline');
      await dan.room.locator('#live-state', { hasText: 'Connecting to your proctor…' }).waitFor();
      await checkScreen(wall, `live-e2e-dropped-${dialect}`);
      // The others stay live meanwhile.
      for (const name of ['Ada Lovelace', 'Bob Babbage'] as const)
        await tileSays(wall, candidate(name).id, 'live', 1000);
      // Offline for the whole drop: no reconnect gets through a dead network.
      while (Date.now() < dropped + DROP_MS) {
        assert.match(String(await danTile.locator('.tile-live').getAttribute('class')), /\blive-offline\b/);
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      await dan.room.context().setOffline(false);
      // No one acts: the room reconnects and publishes again, the wall watches again.
      await tileSays(wall, dan.id, 'live');
      const presented = await framesAdvance(tileVideo('Dan Darwin'));
      assert.ok(presented >= 4, `Dan Darwin after the drop: ${presented} frames`);
      await dan.room
        .locator('#live-state', { hasText: 'Your proctor can see you' })
        .waitFor({ timeout: MEDIA_TIMEOUT });
      await liveStatusBecomes('Dan Darwin', 'live');
      await checkScreen(wall, `live-e2e-reconnected-${dialect}`);
    });
  });
}
