/**
 * The proctor wall (web/console/src/screens/LiveWall.svelte) in Chromium with a real service, on SQLite
 * and PostgreSQL: a live-proctored exam with a live ID check, two candidates in the exam room with
 * Chromium's fake camera and screen, more candidates who never open the room, and a proctor assigned
 * to five of them. The wall shows the proctor's candidates with advancing camera frames
 * (requestVideoFrameCallback), pages them, enlarges one with sound and the screen, chats with a
 * candidate both ways, admits one after the ID check, pauses and resumes the clock, files an
 * incident at the exam clock and ends an exam; the badges show new incidents and unread messages; a
 * manager sees every candidate with "Only mine". Keyboard path; axe and screenshots at 1280 and 800.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { object } from '../helpers/json.ts';
import { browserDialects } from '../helpers/server.ts';
import type { Scalar } from '../helpers/signing.ts';
import {
  assertNoHorizontalScroll,
  checkScreen,
  newPage,
  signedInPage,
  startConsoleWorld,
  type ConsoleWorld,
  type StaffUser,
} from './console/support.ts';
import { framesAdvance, MEDIA_TIMEOUT } from './live-support.ts';
import { acceptPrivacy } from './privacy-support.ts';

type Json = Record<string, unknown>;

interface Candidate {
  readonly id: number;
  readonly token: string;
  readonly name: string;
}

for (const dialect of browserDialects(import.meta.url)) {
  describe(`console proctor wall in Chromium [${dialect}]`, () => {
    let world: ConsoleWorld;
    let teacher: StaffUser;
    let proctor: StaffUser;
    let examId: number;
    let page: Page;
    const candidates: Record<string, Candidate> = {};
    const rooms: Record<string, Page> = {};

    async function v3(
      user: StaffUser,
      method: string,
      route: string,
      params: Record<string, Scalar>,
      status = 200,
    ): Promise<Json> {
      const answer = await user.client.v3(method, route, params);
      assert.equal(answer.status, status, `${method} ${route}: ${answer.text}`);
      return object(answer.json, 'body');
    }

    async function addCandidate(name: string, assigned: boolean): Promise<Candidate> {
      const email = `${name.split(' ')[0]?.toLowerCase()}@example.org`;
      const created = object(
        (
          await v3(
            teacher,
            'POST',
            '/exams/:exam_id/student_sessions',
            { exam_id: examId, name, email, skip_requirements: true },
            201,
          )
        ).student,
        'student',
      );
      const candidate = { id: Number(created.id), token: String(created.token), name };
      if (assigned) {
        await v3(teacher, 'POST', '/student_sessions/:id/assign_proctor', {
          id: candidate.id,
          proctor_id: proctor.id,
        });
      }
      candidates[name] = candidate;
      return candidate;
    }

    async function record(name: string): Promise<Json> {
      const id = candidates[name]?.id ?? 0;
      return object((await v3(teacher, 'GET', '/student_sessions/:id', { id })).student, 'student');
    }

    /** The candidate's room, its camera and screen checked: it publishes both to the proctor. */
    async function openRoom(name: string): Promise<Page> {
      const room = await newPage(world);
      await room.goto(`${world.baseUrl}/room/${candidates[name]?.token ?? ''}`);
      await room.getByRole('heading', { name: 'Before you start' }).waitFor();
      await acceptPrivacy(room);
      await room.getByRole('button', { name: 'Test camera and microphone' }).click();
      await room.getByText('Camera: passed').waitFor();
      await room.getByRole('button', { name: 'Share your screen' }).click();
      await room.getByText('Screen sharing: passed').waitFor();
      rooms[name] = room;
      return room;
    }

    /** A candidate's tile: a button named by all it says, the name first, the facts after commas. */
    const tile = (name: string) => page.getByRole('button', { name: new RegExp(`^${name}, `) });
    const tileVideo = (name: string) => page.locator(`video[data-session="${candidates[name]?.id ?? 0}"]`);
    const enlarged = () => page.locator('dialog.live-focus');

    /**
     * Opens the wall through the exam's tabs: the page reaches network idle on the students list
     * first, as the wall's monitor stream then keeps the network busy for good (checkScreen waits
     * for idle).
     */
    async function openWall(target: Page): Promise<void> {
      await target.goto(`${world.baseUrl}/console/exams/${examId}/students`);
      await target.waitForLoadState('networkidle');
      await target.getByRole('link', { name: 'Live', exact: true }).click();
      await target.waitForURL(`**/console/exams/${examId}/live`);
    }

    before(async () => {
      world = await startConsoleWorld(dialect);
      teacher = await world.staff('teacher');
      proctor = await world.staff('proctor');
      examId = Number(
        object(
          (
            await v3(
              teacher,
              'POST',
              '/exams',
              {
                name: 'Live chemistry',
                type: 'live_proctoring',
                duration_minutes: 60,
                web_cam: true,
                screen_share: true,
                live_id_check: true,
              },
              201,
            )
          ).exam,
          'exam',
        ).id,
      );
      for (const name of ['Ada Lovelace', 'Bob Babbage', 'Cleo Curie', 'Dan Darwin', 'Eve Euler']) {
        await addCandidate(name, true);
      }
      await addCandidate('Zed Zuse', false);
      await openRoom('Ada Lovelace');
      await openRoom('Bob Babbage');
      page = await signedInPage(world, proctor);
      // Counts the wall's peer connections (one per watched candidate), to see what it watches.
      await page.addInitScript(() => {
        const made: RTCPeerConnection[] = [];
        (window as unknown as { peers: RTCPeerConnection[] }).peers = made;
        const Original = window.RTCPeerConnection;
        window.RTCPeerConnection = class extends Original {
          constructor(...args: ConstructorParameters<typeof RTCPeerConnection>) {
            super(...args);
            made.push(this);
          }
        };
      });
    });

    /** Waits until the page holds `count` peer connections that are not closed. */
    async function openPeers(count: number): Promise<void> {
      await page.waitForFunction(
        (wanted) =>
          (window as unknown as { peers: RTCPeerConnection[] }).peers.filter(
            (peer) => peer.connectionState !== 'closed',
          ).length === wanted,
        count,
        { timeout: MEDIA_TIMEOUT },
      );
    }

    after(async () => {
      await world.close();
    });

    it('shows the proctor’s candidates, with advancing camera frames from those in the room', async () => {
      await openWall(page);
      await page.getByRole('heading', { name: /Live chemistry/ }).waitFor();
      await tile('Ada Lovelace').waitFor();
      // The names as shown and as read out carry no stray punctuation.
      const names = await page.locator('button.live-tile .tile-name').allTextContents();
      assert.deepEqual(names, ['Ada Lovelace', 'Bob Babbage', 'Cleo Curie', 'Dan Darwin', 'Eve Euler']);
      const label = (await page.locator('button.live-tile').first().getAttribute('aria-label')) ?? '';
      assert.match(label, /^Ada Lovelace, [A-Z]/);
      assert.doesNotMatch(label, /\s,|,,|,\s*$/);
      assert.equal(await page.locator('button.live-tile .visually-hidden').count(), 0);
      assert.equal(await page.getByLabel('Only mine').count(), 0, 'a proctor sees only their own anyway');
      await page.getByText('Video and chat: connected.').waitFor({ timeout: MEDIA_TIMEOUT });
      for (const name of ['Ada Lovelace', 'Bob Babbage']) {
        await tile(name).locator('.tile-live', { hasText: 'Live' }).waitFor({ timeout: MEDIA_TIMEOUT });
        const presented = await framesAdvance(tileVideo(name));
        assert.ok(presented >= 4, `${name}: ${presented} frames`);
        assert.equal(await tileVideo(name).evaluate((video) => (video as HTMLVideoElement).muted), true);
      }
      await tile('Cleo Curie').getByText('Offline').waitFor();
      await openPeers(2);
      await tile('Ada Lovelace')
        .getByText(/^Connection (good|fair|poor) \(\d+ fps/)
        .waitFor({ timeout: MEDIA_TIMEOUT });
      await checkScreen(page, `live-wall-${dialect}`);
      await assertNoHorizontalScroll(page, 'wall at 1280 px');
    });

    it('pages the grid, remembers the page size and watches only the page in view', async () => {
      await page.getByLabel('Candidates per page').selectOption('4');
      await page.getByText('Page 1 of 2 · 5 in all').waitFor();
      assert.equal(await page.locator('button.live-tile').count(), 4);
      await page.getByRole('button', { name: 'Next page' }).click();
      await tile('Eve Euler').waitFor();
      assert.equal(await page.locator('button.live-tile').count(), 1);
      assert.equal(await tileVideo('Ada Lovelace').count(), 0, 'a candidate off the page is not shown');
      // Nor watched: Ada's and Bob's connections closed; Eve has not opened her room.
      await openPeers(0);
      await openWall(page);
      await page.getByText('Page 1 of 2 · 5 in all').waitFor();
      assert.equal(await page.getByLabel('Candidates per page').inputValue(), '4');
      // Back on the page in view: watched again, frames flow.
      await framesAdvance(tileVideo('Ada Lovelace'));
      await openPeers(2);
      await page.getByLabel('Candidates per page').selectOption('9');
      await tile('Eve Euler').waitFor();
    });

    it('enlarges a candidate with sound and the screen, and chats with them both ways', async () => {
      await tile('Ada Lovelace').click();
      const dialog = enlarged();
      await dialog.getByRole('heading', { name: 'Ada Lovelace' }).waitFor();
      assert.equal(
        await page.evaluate(() => document.activeElement?.textContent),
        'Ada Lovelace',
        'the focus is on the candidate’s name',
      );
      const camera = dialog.locator('video[data-source="camera"]');
      await framesAdvance(camera);
      assert.equal(await camera.evaluate((video) => (video as HTMLVideoElement).muted), false, 'with sound');
      await framesAdvance(dialog.locator('video[data-source="screen"]'), 2);
      await dialog.getByRole('button', { name: 'Mute sound' }).click();
      assert.equal(await camera.evaluate((video) => (video as HTMLVideoElement).muted), true);
      await dialog.getByRole('button', { name: 'Unmute sound' }).click();

      await dialog.getByText('No messages yet.').waitFor();
      await dialog.getByLabel('Message to Ada Lovelace').fill('Please show me your desk.');
      await page.keyboard.press('Enter');
      await dialog
        .getByRole('list', { name: 'Messages with Ada Lovelace' })
        .getByText('Please show me your desk.')
        .waitFor();
      const room = rooms['Ada Lovelace'] as Page;
      await room.locator('#chat-messages').getByText('Please show me your desk.').waitFor();
      await room.getByLabel('Your message to the proctor').fill('Here it is.');
      await room.getByRole('button', { name: 'Send', exact: true }).click();
      await dialog
        .getByRole('list', { name: 'Messages with Ada Lovelace' })
        .getByText('Here it is.')
        .waitFor();
      await checkScreen(page, `live-wall-enlarged-${dialect}`);
      await assertNoHorizontalScroll(page, 'enlarged view at 1280 px');
    });

    it('admits a candidate after the ID check, who can then start', async () => {
      const dialog = enlarged();
      const room = rooms['Ada Lovelace'] as Page;
      await room.getByText('Waiting for your proctor to check your ID').waitFor();
      await dialog.getByRole('button', { name: 'Admit after ID check' }).click();
      const confirm = page.getByRole('dialog', { name: 'Admit Ada Lovelace?' });
      await confirm.waitFor();
      await confirm.getByRole('button', { name: 'Admit', exact: true }).click();
      await dialog.getByText('Ada Lovelace is admitted: they can start the exam now.').waitFor();
      assert.equal((await record('Ada Lovelace')).status, 'exam_not_started');
      const start = room.getByRole('button', { name: 'Start the exam' });
      await start.waitFor();
      await start.click();
      await room.getByRole('heading', { name: 'Exam in progress' }).waitFor();
      await dialog.locator('.focus-facts', { hasText: 'Exam started' }).waitFor();
    });

    it('pauses and resumes the candidate’s clock', async () => {
      const dialog = enlarged();
      const room = rooms['Ada Lovelace'] as Page;
      // A refusal is said, with the service's reason.
      await page.route('**/api/v3/student_sessions/*/pause', (route) =>
        route.fulfill({
          status: 409,
          contentType: 'application/json',
          body: JSON.stringify({ error: 'The session is not running' }),
        }),
      );
      await dialog.getByRole('button', { name: 'Pause clock' }).click();
      await dialog
        .getByRole('alert')
        .getByText('The clock was not paused. The session is not running')
        .waitFor();
      await page.unroute('**/api/v3/student_sessions/*/pause');
      await dialog.getByRole('button', { name: 'Pause clock' }).click();
      await dialog.getByText(/^The clock of Ada Lovelace is paused\./).waitFor();
      assert.equal(await dialog.getByRole('alert').count(), 0, 'the refusal is gone');
      assert.equal((await record('Ada Lovelace')).clock_paused, true);
      await room.locator('#clock-paused').waitFor();
      // The tile behind the dialog says it too (the monitor's stream carries the pause).
      await page
        .locator(`button.live-tile[data-session="${candidates['Ada Lovelace']?.id ?? 0}"] .flag-paused`)
        .waitFor({ state: 'attached' });
      await dialog.getByRole('button', { name: 'Resume clock' }).click();
      await dialog.getByText('The clock of Ada Lovelace runs again.').waitFor();
      assert.equal((await record('Ada Lovelace')).clock_paused, false);
      await room.locator('#clock-paused').waitFor({ state: 'hidden' });
    });

    it('files an incident at the exam clock, the comment required', async () => {
      const dialog = enlarged();
      await dialog.getByRole('button', { name: 'Add incident now' }).click();
      await dialog.getByText('Write what you saw, then add the incident.').waitFor();
      await dialog.getByLabel('What you saw').fill('Someone speaks off camera');
      const before = Date.now();
      await dialog.getByRole('button', { name: 'Add incident now' }).click();
      await dialog.getByText(/^Incident added at \d\d:\d\d on the exam clock\.$/).waitFor();
      const after = Date.now();
      const student = await record('Ada Lovelace');
      const filed = (student.incidents as Json[]).find(
        (incident) => incident.comment === 'Someone speaks off camera',
      );
      assert.ok(filed, JSON.stringify(student.incidents));
      // Whole seconds since the session started, at the moment of the click.
      const start = Date.parse(String(student.start_time));
      const offset = Number(filed.offset_time);
      assert.ok(
        offset >= Math.floor((before - start) / 1000) - 1 && offset <= Math.ceil((after - start) / 1000),
        `offset ${offset} s for a start ${(before - start) / 1000} s ago`,
      );
    });

    it('closes with Escape, the focus back on the tile', async () => {
      await page.keyboard.press('Escape');
      await enlarged().waitFor({ state: 'detached' });
      assert.equal(
        await page.evaluate(() => document.activeElement?.getAttribute('data-session')),
        String(candidates['Ada Lovelace']?.id),
      );
    });

    it('marks unread messages and new incidents on the tiles until the candidate is opened', async () => {
      const room = rooms['Bob Babbage'] as Page;
      await room.getByLabel('Your message to the proctor').fill('My camera light blinks.');
      await room.getByRole('button', { name: 'Send', exact: true }).click();
      await tile('Bob Babbage').getByText('1 unread message').waitFor();
      await v3(
        teacher,
        'POST',
        '/student_sessions/:id/incidents',
        {
          id: candidates['Cleo Curie']?.id ?? 0,
          comment: 'Left the room',
          offset_time: 0,
        },
        201,
      );
      await tile('Cleo Curie').getByText('1 new incident').waitFor();
      await checkScreen(page, `live-wall-badges-${dialect}`);
      await tile('Cleo Curie').click();
      await enlarged().getByRole('heading', { name: 'Cleo Curie' }).waitFor();
      await enlarged().getByRole('button', { name: 'Close' }).click();
      await enlarged().waitFor({ state: 'detached' });
      assert.equal(await tile('Cleo Curie').getByText('new incident').count(), 0);
    });

    it('ends a candidate’s exam after confirming', async () => {
      await tile('Bob Babbage').click();
      const dialog = enlarged();
      await dialog.getByRole('heading', { name: 'Bob Babbage' }).waitFor();
      await dialog.getByText('My camera light blinks.').waitFor();
      assert.equal(await tile('Bob Babbage').getByText('unread').count(), 0);
      await dialog.getByRole('button', { name: 'End exam' }).click();
      const confirm = page.getByRole('dialog', { name: 'End the exam of Bob Babbage?' });
      await confirm.waitFor();
      await checkScreen(page, `live-wall-end-confirm-${dialect}`);
      await confirm.getByRole('button', { name: 'End exam now' }).click();
      await dialog.getByText('The exam of Bob Babbage has ended.').waitFor();
      assert.equal((await record('Bob Babbage')).status, 'exam_finished');
      await (rooms['Bob Babbage'] as Page).getByRole('heading', { name: 'Your exam is finished' }).waitFor({
        timeout: 30_000,
      });
      await dialog.getByText('The exam has ended: no more messages can be sent.').waitFor();
      await page.keyboard.press('Escape');
      // Finished candidates leave the wall unless asked for.
      await tile('Bob Babbage').waitFor({ state: 'detached' });
      await page.getByLabel('Hide finished exams').uncheck();
      await tile('Bob Babbage').locator('.tile-status', { hasText: 'Finished' }).waitFor();
      await page.getByLabel('Hide finished exams').check();
    });

    it('works from the keyboard: arrows between tiles, Enter to enlarge, Escape to close', async () => {
      await tile('Ada Lovelace').focus();
      await page.keyboard.press('ArrowRight');
      assert.equal(
        await page.evaluate(() => document.activeElement?.getAttribute('data-session')),
        String(candidates['Cleo Curie']?.id),
      );
      await page.keyboard.press('ArrowLeft');
      await page.keyboard.press('Enter');
      const dialog = enlarged();
      await dialog.getByRole('heading', { name: 'Ada Lovelace' }).waitFor();
      await page.keyboard.press('Tab');
      assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Close');
      await page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'detached' });
      assert.equal(
        await page.evaluate(() => document.activeElement?.getAttribute('data-session')),
        String(candidates['Ada Lovelace']?.id),
      );
    });

    it('reads at 800 px without horizontal scrolling, the wall and the enlarged view', async () => {
      await page.setViewportSize({ width: 800, height: 900 });
      await tile('Ada Lovelace').waitFor();
      await assertNoHorizontalScroll(page, 'wall at 800 px');
      await checkScreen(page, `live-wall-800-${dialect}`);
      await tile('Ada Lovelace').click();
      await enlarged().getByRole('heading', { name: 'Ada Lovelace' }).waitFor();
      await framesAdvance(enlarged().locator('video[data-source="camera"]'));
      await assertNoHorizontalScroll(page, 'enlarged view at 800 px');
      await checkScreen(page, `live-wall-enlarged-800-${dialect}`);
      await page.keyboard.press('Escape');
      await page.setViewportSize({ width: 1280, height: 900 });
    });

    it('shows a manager every candidate, with “Only mine” to narrow it', async () => {
      const manager = await signedInPage(world, teacher);
      await openWall(manager);
      await manager.getByRole('button', { name: /^Zed Zuse, / }).waitFor();
      assert.equal(await manager.locator('button.live-tile').count(), 5, 'Bob has finished');
      await framesAdvance(manager.locator(`video[data-session="${candidates['Ada Lovelace']?.id ?? 0}"]`));
      await manager.getByLabel('Only mine').check();
      await manager.getByText('No candidates of this exam are assigned to you.').waitFor();
      await manager.context().close();
    });
  });
}
