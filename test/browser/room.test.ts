/**
 * The candidate exam room in a real browser: Debian's Chromium, driven by playwright-core, with a
 * fake camera, microphone and screen. A student follows the link from the real exam-link email
 * through the checks, the photos, the start, the recording, an answer upload and the finish; the
 * test then reads what the staff see through the signed V3 API, and the exam's documents zip.
 * Screenshots of each step land in test-output/screenshots/.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { fetchAddress } from '../helpers/files.ts';
import { httpRequest } from '../helpers/http.ts';
import { object } from '../helpers/json.ts';
import { SAMPLE, v3Multipart } from '../helpers/multipart.ts';
import { launchChromium, SCREENSHOT_DIR, type TestBrowser } from '../helpers/browser.ts';
import { assertNoSeriousAxeViolations } from './axe.ts';
import { browserDialects, startTestServer, type TestServer } from '../helpers/server.ts';
import type { Scalar } from '../helpers/signing.ts';
import { digestZip, manifestOf } from '../helpers/zip-archive.ts';
import { freePort, runDueJobs, startSmtpServer, type TestSmtpServer } from '../mail/support.ts';

type Json = Record<string, unknown>;
type TestUser = Awaited<ReturnType<TestServer['user']>>;

/** The first bytes of every WebM (Matroska) file: the EBML magic number. */
const EBML_MAGIC = Buffer.from([0x1a, 0x45, 0xdf, 0xa3]);
const JPEG_MAGIC = Buffer.from([0xff, 0xd8, 0xff]);

/** The exam's terms: plain text whose markup-like part must show as typed, never as markup. */
const TERMS = 'I work alone & keep my camera on.\n<b>No</b> phones on the desk.';

/** An answer file of about 3 MB, so the upload takes long enough to show progress. */
const ANSWER_PDF = Buffer.concat([SAMPLE.pdf, crypto.randomBytes(3 * 1024 * 1024)]);

for (const dialect of browserDialects(import.meta.url)) {
  describe(`candidate exam room in Chromium [${dialect}]`, () => {
    let server: TestServer;
    let smtp: TestSmtpServer;
    let chromium: TestBrowser;
    let page: Page;
    let owner: TestUser;
    let examId: number;
    let sessionId: number;
    let roomLink: string;
    let step = 0;

    before(async () => {
      fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
      smtp = await startSmtpServer();
      const port = await freePort();
      server = await startTestServer(dialect, {
        port,
        env: {
          SMTP_URL: smtp.url,
          PUBLIC_URL: `http://127.0.0.1:${port}`,
          MAIL_FROM: 'Exams <exams@example.org>',
        },
      });
      const institute = await server.institute();
      owner = await server.user(institute, 'teacher');
      chromium = await launchChromium();
      page = await chromium.browser.newPage();
    });

    after(async () => {
      await chromium?.close();
      await server?.close();
      await smtp?.close();
    });

    async function v3(
      method: string,
      route: string,
      params: Record<string, Scalar>,
      status = 200,
    ): Promise<Json> {
      const answer = await owner.client.v3(method, route, params);
      assert.equal(answer.status, status, answer.text);
      return object(answer.json, 'body');
    }

    /** Saves a full-page screenshot named after the step. */
    async function screenshot(name: string, target: Page = page): Promise<void> {
      step += 1;
      const file = path.join(SCREENSHOT_DIR, `room-${dialect}-${String(step).padStart(2, '0')}-${name}.png`);
      // From the top, so the sticky header with the countdown sits where it belongs.
      await target.evaluate(() => window.scrollTo(0, 0));
      await target.screenshot({ path: file, fullPage: true });
      assert.ok(fs.statSync(file).size > 0);
    }

    /** Fails with the page's error text when the room shows one. */
    async function assertNoAlert(): Promise<void> {
      const alert = page.locator('#alert');
      if (await alert.isVisible()) assert.fail(`the room shows an error: ${await alert.textContent()}`);
    }

    /** Every control has an accessible name, and nothing is wider than the window (200% zoom). */
    async function assertAccessible(target: Page = page): Promise<void> {
      const problems = await target.evaluate(() => {
        const found: string[] = [];
        for (const control of document.querySelectorAll('button, input, select, textarea, progress, video')) {
          const element = control as HTMLElement;
          if (element.closest('[hidden]') !== null) continue;
          const labelled =
            (element instanceof HTMLInputElement && (element.labels?.length ?? 0) > 0) ||
            element.getAttribute('aria-label') !== null ||
            element.getAttribute('aria-labelledby') !== null ||
            (element.textContent ?? '').trim() !== '';
          if (!labelled) found.push(`unlabelled ${element.tagName.toLowerCase()}#${element.id}`);
        }
        const root = document.documentElement;
        if (root.scrollWidth > root.clientWidth + 1) {
          found.push(`scrolls sideways: ${root.scrollWidth} > ${root.clientWidth}`);
        }
        return found;
      });
      assert.deepEqual(problems, []);
    }

    /** No <img> shows as a broken image: each one has loaded a picture. */
    async function assertNoBrokenImages(): Promise<void> {
      const broken = await page.evaluate(() =>
        [...document.images]
          .filter((image) => image.closest('[hidden]') === null)
          .filter(
            (image) => image.getAttribute('src') === null || !image.complete || image.naturalWidth === 0,
          )
          .map((image) => image.id || image.alt),
      );
      assert.deepEqual(broken, [], 'broken images');
    }

    /** Clicks the button and, once `done` shows, asserts the keyboard focus stayed on it. */
    async function clickKeepingFocus(name: string, done: () => Promise<void>): Promise<void> {
      const button = page.getByRole('button', { name });
      const id = await button.getAttribute('id');
      await button.click();
      await done();
      const focused = await page.evaluate(() => ({
        tag: document.activeElement?.tagName ?? 'none',
        id: document.activeElement?.id ?? '',
      }));
      assert.notEqual(focused.tag, 'BODY', `the focus fell to the body after "${name}"`);
      assert.equal(focused.id, id, `the focus stays on "${name}"`);
    }

    it('sends the exam link by email', async () => {
      examId = object(
        (
          await v3(
            'POST',
            '/exams',
            {
              name: 'Organic chemistry',
              type: 'live_proctoring',
              duration_minutes: 30,
              web_cam: true,
              screen_share: true,
              upload_answers: true,
              allow_calculator: true,
              allowed_calculator_type: 'scientific',
              allow_pen_paper: true,
              terms: TERMS,
            },
            201,
          )
        ).exam,
        'exam',
      ).id as number;
      const document = object(
        (await v3('POST', '/exams/:exam_id/documents', { exam_id: examId, exam_content: 'placeholder' }, 201))
          .document,
        'document',
      );
      const attached = await v3Multipart(
        owner.client,
        'POST',
        '/exams/:exam_id/attachments',
        { exam_id: examId },
        [
          {
            field: 'document',
            fileName: 'periodic-table.pdf',
            contentType: 'application/pdf',
            bytes: SAMPLE.pdf,
          },
        ],
      );
      assert.equal(attached.status, 201, attached.text);
      const placeholder = object(object(attached.json, 'body').attachment, 'attachment')
        .placeholder as string;
      await v3('PATCH', '/exams/:exam_id/documents/:id', {
        exam_id: examId,
        id: document.id as number,
        exam_content:
          `<h2>Instructions</h2><h3>Part 1</h3><p>Answer <strong>all</strong> questions. The table: ${placeholder}</p>` +
          '<script>document.title = "hacked"</script><p onclick="alert(1)">Write your answers in a PDF.</p>',
      });
      sessionId = object(
        (
          await v3(
            'POST',
            '/exams/:exam_id/student_sessions',
            {
              exam_id: examId,
              name: 'Ada Lovelace',
              email: 'ada@example.org',
              individual_info: '<p>Your desk: <b>B12</b></p><img src=x onerror="document.title=1">',
              is_individual_info_html: true,
            },
            201,
          )
        ).student,
        'student',
      ).id as number;
      await v3('POST', '/exams/:id/send_emails', { id: examId });
      await runDueJobs(server, dialect, server.app.clock);
      const mail = smtp.messages.find((message) => message.to.includes('ada@example.org'));
      assert.ok(mail?.text, 'the exam-link email arrived');
      const link = /https?:\/\/\S+\/room\/[0-9a-f]{32}/.exec(mail.text);
      assert.ok(link, `the email holds the room link: ${mail.text}`);
      roomLink = link[0];
      assert.ok(roomLink.startsWith(server.baseUrl), 'the link points at this server');
    });

    it('opens the room from the link and shows the exam, the rules and the sanitised information', async () => {
      await page.goto(roomLink);
      await page.getByRole('heading', { name: 'Before you start' }).waitFor();
      await assertNoAlert();
      // The privacy panel comes first: the checks appear once it is accepted (test/browser/room-privacy.test.ts).
      await page.getByRole('heading', { name: 'Your data in this exam' }).waitFor();
      assert.equal(await page.locator('#checks-heading').count(), 0);
      await page.locator('#privacy-accept').click();
      await page.locator('#checks-heading').waitFor();
      assert.equal(await page.locator('#exam-name').textContent(), 'Organic chemistry');
      assert.equal(await page.locator('#student-name').textContent(), 'Candidate: Ada Lovelace');
      assert.equal(await page.locator('#individual-info').innerHTML(), '<p>Your desk: <b>B12</b></p>');
      assert.ok(await page.getByText('A calculator allowed: scientific').isVisible());
      assert.ok(await page.getByText('Once you start, you have 30 minutes.').isVisible());
      assert.ok(await page.getByRole('button', { name: 'Start the exam' }).isDisabled());
      assert.equal(await page.title(), 'Organic chemistry · exam room');
      await assertAccessible();
      await assertNoBrokenImages();
      // Before any photo: labelled empty frames, no <img> at all, hidden from screen readers.
      assert.equal(await page.locator('#stage-setup img').count(), 0);
      assert.equal(await page.locator('#id_card-frame').getAttribute('aria-hidden'), 'true');
      assert.equal(await page.locator('#id_card-state').textContent(), 'No photo yet.');
      assert.ok(await page.getByText('Your camera picture appears here').isVisible());
      // The camera picture sits in the same row as the two photo buttons.
      assert.equal(
        await page.evaluate(
          () =>
            document
              .getElementById('camera-preview')
              ?.closest('.photo-row')
              ?.querySelectorAll('#take-id_card, #take-face_photo').length,
        ),
        2,
      );
      const timeZone = await page.evaluate(() => Intl.DateTimeFormat().resolvedOptions().timeZone);
      assert.ok(timeZone.length > 0);
      // The terms, as text: the <b> shows as typed and is no element; the box is labelled, required, unticked.
      const terms = page.getByRole('region', { name: 'Terms of this exam' });
      assert.ok(await terms.isVisible());
      assert.equal(await page.locator('#terms-text').textContent(), TERMS);
      assert.equal(await page.locator('#terms-text b').count(), 0);
      const box = page.getByRole('checkbox', { name: 'I have read and accept these terms' });
      assert.equal(await box.isChecked(), false);
      assert.equal(await box.evaluate((input) => (input as HTMLInputElement).required), true);
      // The terms come before the start.
      assert.equal(
        await page.evaluate(() => {
          const shown = document.getElementById('terms');
          const start = document.getElementById('start-exam');
          if (shown === null || start === null) return false;
          return (shown.compareDocumentPosition(start) & Node.DOCUMENT_POSITION_FOLLOWING) !== 0;
        }),
        true,
      );
      await assertNoSeriousAxeViolations(page, 'setup');
      await screenshot('setup');
      const record = object((await v3('GET', '/student_sessions/:id', { id: sessionId })).student, 'student');
      assert.equal(record.status, 'in_setup');
      assert.equal(record.entered_room, true);
    });

    it('runs the checks in the browser: camera, microphone, screen, speakers and bandwidth', async () => {
      await clickKeepingFocus('Test camera and microphone', async () => {
        await page.getByText('Camera: passed').waitFor();
        await page.getByText('Microphone: passed').waitFor();
      });
      assert.ok(await page.locator('#camera-preview').isVisible(), 'the camera picture shows');
      assert.ok(!(await page.locator('#camera-placeholder').isVisible()));
      await clickKeepingFocus('Share your screen', () => page.getByText('Screen sharing: passed').waitFor());
      await page.getByRole('button', { name: 'Play a test sound' }).click();
      // The yes button takes the focus: answered from the keyboard.
      await page.getByRole('button', { name: 'Yes, I heard it' }).waitFor();
      // The question sits in the speaker check it belongs to, not after the last check.
      assert.equal(await page.locator('#check-speakers #sound-question').count(), 1);
      await page.keyboard.press('Enter');
      await page.getByText('Speakers: passed (optional)').waitFor();
      // The measurement reports its progress as the probe arrives.
      await clickKeepingFocus('Measure your connection', () =>
        page.getByText('Connection speed: passed').waitFor(),
      );
      assert.equal(
        await page.locator('#bandwidth-progress').evaluate((bar) => (bar as HTMLProgressElement).value),
        100,
      );
      assert.match(
        (await page.locator('#bandwidth-percent').textContent()) ?? '',
        /^Done: 2\.0 MB in \d+\.\d\d? s$/,
      );
      assert.ok(!(await page.locator('#bandwidth-advice').isVisible()), 'no advice for a fast connection');
      await assertNoAlert();
      await screenshot('checks');
    });

    it('takes the ID card and face photos from the webcam', async () => {
      await clickKeepingFocus('Take a photo of your ID card', () =>
        page.locator('#id_card-state', { hasText: 'Photo saved.' }).waitFor(),
      );
      await clickKeepingFocus('Take a photo of your face', () =>
        page.locator('#face_photo-state', { hasText: 'Photo saved.' }).waitFor(),
      );
      await page.locator('#face_photo-image').waitFor();
      await page.waitForFunction(() => [...document.images].every((image) => image.complete));
      await assertNoAlert();
      await assertNoBrokenImages();
      assert.equal(await page.locator('#stage-setup img').count(), 2);
      assert.equal(await page.locator('#id_card-frame').getAttribute('aria-hidden'), null);
      assert.ok(await page.getByRole('img', { name: 'Your face photo, as saved' }).isVisible());
      // Each photo button now takes the photo again, and says so.
      for (const [kind, which] of [
        ['id_card', 'of your ID card'],
        ['face_photo', 'of your face'],
      ] as const) {
        // What shows: the button's text without the hidden words for screen readers.
        const shown = await page.locator(`#take-${kind}`).evaluate((button) =>
          [...button.childNodes]
            .filter((node) => !(node instanceof Element && node.classList.contains('visually-hidden')))
            .map((node) => node.textContent)
            .join(''),
        );
        assert.equal(shown, 'Retake photo');
        assert.ok(await page.getByRole('button', { name: `Retake photo ${which}`, exact: true }).isVisible());
      }
      assert.equal(await page.getByRole('button', { name: /^Take a photo/ }).count(), 0);
      assert.ok(await page.getByRole('button', { name: 'Start the exam' }).isEnabled());
      await assertNoSeriousAxeViolations(page, 'setup, checks done');
      await screenshot('photos');
    });

    it('is usable at 200% zoom', async () => {
      await page.setViewportSize({ width: 640, height: 450 });
      await assertAccessible();
      await screenshot('setup-200-percent');
      await page.setViewportSize({ width: 1280, height: 900 });
    });

    it('asks for the terms at the start, and takes them from the keyboard', async () => {
      assert.match(await page.locator('#start-help').innerText(), /^Accept the terms above, then start\./);
      await page.getByRole('button', { name: 'Start the exam' }).focus();
      await page.keyboard.press('Enter');
      // Not started: the box says why, is marked invalid, is described by the error, and has the focus.
      const error = page.locator('#terms-error');
      await error.waitFor();
      assert.equal(await error.textContent(), 'Tick the box to accept the terms before you start.');
      const box = page.getByRole('checkbox', { name: 'I have read and accept these terms' });
      assert.equal(await box.getAttribute('aria-invalid'), 'true');
      assert.deepEqual(((await box.getAttribute('aria-describedby')) ?? '').split(' '), [
        'terms-error',
        'terms-help',
      ]);
      assert.equal(await page.evaluate(() => document.activeElement?.id), 'terms-accepted');
      assert.equal(
        object((await v3('GET', '/student_sessions/:id', { id: sessionId })).student, 'student').status,
        'in_setup',
      );
      await assertNoSeriousAxeViolations(page, 'setup, terms not accepted');
      await page.locator('#terms').scrollIntoViewIfNeeded();
      await page
        .locator('#terms')
        .screenshot({ path: path.join(SCREENSHOT_DIR, `room-${dialect}-terms-refused.png`) });
      await screenshot('terms-refused');
      await page.keyboard.press('Space');
      assert.equal(await box.isChecked(), true);
      assert.ok(!(await error.isVisible()), 'the error goes once the box is ticked');
      assert.equal(await box.getAttribute('aria-invalid'), null);
      assert.match(await page.locator('#start-help').innerText(), /^Everything is ready\./);
      await page
        .locator('#terms')
        .screenshot({ path: path.join(SCREENSHOT_DIR, `room-${dialect}-terms-accepted.png`) });
    });

    it('starts from the keyboard, counts down, shows the instructions and records', async () => {
      await page.getByRole('button', { name: 'Start the exam' }).focus();
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { name: 'Exam in progress' }).waitFor();
      await assertNoAlert();
      const timer = page.locator('#time-left');
      assert.match((await timer.textContent()) ?? '', /^(30:00|29:5\d)$/);
      const instructions = page.locator('#instructions-content');
      assert.ok(await instructions.getByRole('heading', { name: 'Part 1' }).isVisible());
      // The document's own "Instructions" heading names the section; the page does not repeat it.
      assert.equal(await page.getByRole('heading', { name: /^instructions$/i }).count(), 1);
      assert.equal(await page.getByRole('region', { name: /^instructions$/i }).count(), 1);
      assert.ok(!(await instructions.innerHTML()).includes('script'), 'no script survives');
      assert.ok(!(await instructions.innerHTML()).includes('onclick'), 'no handler survives');
      const link = instructions.getByRole('link', { name: 'periodic-table.pdf' });
      const download = await fetchAddress(server, (await link.getAttribute('href')) ?? '');
      assert.ok(download.bytes.equals(SAMPLE.pdf), 'the instruction link downloads the attachment');
      await page.locator('#recording-state', { hasText: 'Recording your camera and screen' }).waitFor();
      const before = (await timer.textContent()) ?? '';
      await page.waitForTimeout(2100);
      assert.notEqual(await timer.textContent(), before, 'the countdown moves');
      assert.equal(await page.title(), 'Organic chemistry · exam room', 'the instruction script never ran');
      await assertAccessible();
      await assertNoSeriousAxeViolations(page, 'exam');
      await screenshot('exam');
    });

    it('reports focus and connection losses as incidents', async () => {
      await page.evaluate(() => window.dispatchEvent(new Event('blur')));
      await page.evaluate(() => window.dispatchEvent(new Event('focus')));
      const banner = page.locator('#connection');
      assert.ok(!(await banner.isVisible()), 'no connection line while all is well');
      await page.context().setOffline(true);
      // Chunks pile up while the connection is down, and the line in the header counts them.
      await banner
        .getByText(
          /^Connection lost — [2-9]\d* recording parts waiting; they will be sent when you are back online\.$/,
        )
        .waitFor({ timeout: 20_000 });
      assert.equal(await banner.getAttribute('role'), 'status');
      await screenshot('connection-lost');
      const texts = await page.evaluate(() => {
        const seen: string[] = [];
        (window as unknown as { connectionSeen: string[] }).connectionSeen = seen;
        const line = document.getElementById('connection') as HTMLElement;
        new MutationObserver(() => seen.push(line.hidden ? '' : (line.textContent ?? ''))).observe(line, {
          childList: true,
          characterData: true,
          subtree: true,
          attributes: true,
        });
        return seen;
      });
      assert.deepEqual(texts, []);
      // Each waiting part is held a moment on its way, so the falling count is on screen between
      // two sends however fast the machine sends them (a quick machine could send all at once).
      const slowParts = '**/api/room/*/recordings';
      await page.route(slowParts, async (route) => {
        await new Promise((resolve) => setTimeout(resolve, 300));
        await route.continue();
      });
      await page.context().setOffline(false);
      await banner
        .getByText('Back online — every recording part has been sent.')
        .waitFor({ timeout: 30_000 });
      await page.unroute(slowParts);
      const seen = await page.evaluate(
        () => (window as unknown as { connectionSeen: string[] }).connectionSeen,
      );
      const counts = seen
        .map((text) =>
          /still waiting/.test(text)
            ? Number(/(\d+) recording parts? still waiting/.exec(text)?.[1])
            : undefined,
        )
        .filter((count) => count !== undefined);
      assert.ok(counts.length >= 1, `the queue drained in view: ${JSON.stringify(seen)}`);
      for (let index = 1; index < counts.length; index += 1) {
        assert.ok(
          counts[index]! <= counts[index - 1]!,
          `the waiting count only falls: ${JSON.stringify(counts)}`,
        );
      }
      await screenshot('connection-back');
      await page.waitForFunction(async () => {
        const answer = await fetch(location.pathname.replace('/room/', '/api/room/'));
        return answer.ok;
      });
    });

    it('hands in an answer file with a progress bar', async () => {
      await page.getByLabel('Answer file').setInputFiles({
        name: 'answers.pdf',
        mimeType: 'application/pdf',
        buffer: ANSWER_PDF,
      });
      await clickKeepingFocus('Upload file', () =>
        page.getByText(/answers\.pdf \(3\.0 MB\) handed in/).waitFor(),
      );
      assert.equal(await page.locator('#upload-progress').getAttribute('value'), '100');
      assert.equal(await page.locator('#upload-percent').textContent(), '100%');
      await assertNoAlert();
      await screenshot('answer-uploaded');
    });

    it('finishes after confirming, with the recording saved', async () => {
      // Let the recorders cut a few chunks of each stream first.
      await page.waitForTimeout(9000);
      await page.getByRole('button', { name: 'Finish the exam' }).click();
      await page.getByRole('dialog', { name: 'Finish the exam?' }).waitFor();
      await assertNoSeriousAxeViolations(page, 'finish dialog');
      await screenshot('finish-dialog');
      await page.getByRole('button', { name: 'Yes, finish now' }).click();
      await page.getByRole('heading', { name: 'Your exam is finished' }).waitFor({ timeout: 45_000 });
      assert.ok(await page.getByText('You finished the exam.').isVisible());
      assert.equal(await page.locator('#finished-summary').textContent(), 'You can close this page.');
      // Times with the zone named: the exam's (UTC, as it names no other), and on each time too.
      assert.ok(await page.getByText('Times are in the exam’s time zone (UTC).').isVisible());
      const times = (await page.locator('#finished-times').textContent()) ?? '';
      assert.match(times, /Started: .+\d\d:\d\d\s?(?:[AP]M\s)?\S*(UTC|GMT|[A-Z]{3,5})/);
      assert.match(times, /Ended: .+\d\d:\d\d\s?(?:[AP]M\s)?\S*(UTC|GMT|[A-Z]{3,5})/);
      // The arrival is confirmed with the server's own counts.
      const token = roomLink.split('/').pop() ?? '';
      const room = await httpRequest({ url: `${server.baseUrl}/api/room/${token}` });
      const counts = object(object(room.json, 'body').session, 'session');
      const webcam = Number(counts.recording_chunks_count);
      const screen = Number(counts.screen_recording_chunks_count);
      assert.ok(webcam >= 2 && screen >= 2);
      const arrival = (await page.locator('#arrival-list').textContent()) ?? '';
      assert.ok(arrival.includes(`Camera recording: ${webcam} parts received`), arrival);
      assert.ok(arrival.includes(`Screen recording: ${screen} parts received`), arrival);
      assert.ok(arrival.includes('Answer files: 1 file received'), arrival);
      assert.equal(
        await page.locator('#arrival-summary').textContent(),
        'Everything this page recorded has arrived.',
      );
      await assertNoAlert();
      await assertNoSeriousAxeViolations(page, 'finished');
      await screenshot('finished');
    });

    it('shows the staff the checks, photos, recording times, incidents and the finish in the V3 record', async () => {
      const record = object((await v3('GET', '/student_sessions/:id', { id: sessionId })).student, 'student');
      assert.equal(record.status, 'exam_finished');
      assert.equal(record.end_reason, 'finished');
      for (const check of [
        'webcam_check',
        'microphone_check',
        'screenshare_check',
        'speakers_check',
        'bandwidth_check',
      ]) {
        assert.equal(record[check], 'succeeded', check);
      }
      assert.ok(Number(record.bandwidth_speed) >= 1, 'bandwidth measured');
      assert.equal(record.browser, 'Chrome');
      assert.equal(record.id_card_content_type, 'image/jpeg');
      assert.ok(Number(record.id_card_file_size) > 1000);
      assert.equal(record.face_photo_content_type, 'image/jpeg');
      const started = Date.parse(String(record.recording_started_at));
      const ended = Date.parse(String(record.recording_ended_at));
      assert.ok(started > 0 && ended > started, 'the recording has a start and an end');
      assert.equal(record.start_time, record.recording_started_at);
      // The terms were accepted with the start.
      assert.equal(record.terms_accepted_at, record.start_time);
      const comments = (record.incidents as Json[]).map((incident) => incident.comment);
      for (const comment of [
        'The exam window lost focus',
        'The exam window regained focus',
        'The exam room lost its connection to the server',
        'The exam room reconnected to the server',
      ]) {
        assert.ok(comments.includes(comment), `incident "${comment}" in ${JSON.stringify(comments)}`);
      }
      for (const incident of record.incidents as Json[]) {
        assert.ok(Number.isInteger(incident.offset_time), 'each incident has its offset in the recording');
      }

      const face = await v3('GET', '/student_sessions/:id/face_photo', { id: sessionId });
      const photo = await fetchAddress(server, String(face.url));
      assert.ok(photo.bytes.subarray(0, 3).equals(JPEG_MAGIC), 'the face photo is the JPEG the webcam gave');
    });

    it('lists the recording chunks of both streams and the upload through V3, each downloadable', async () => {
      const listed = (await v3('GET', '/student_sessions/:id/files', { id: sessionId })).files as Json[];
      const of = (kind: string) => listed.filter((file) => file.kind === kind);
      for (const kind of ['recording', 'screen_recording']) {
        const chunks = of(kind);
        assert.ok(chunks.length >= 2, `${kind}: ${chunks.length} chunks`);
        assert.deepEqual(
          chunks.map((chunk) => chunk.sequence),
          chunks.map((_chunk, index) => index),
          `${kind} in order without gaps`,
        );
        const first = await fetchAddress(server, String(chunks[0]?.url));
        assert.ok(first.bytes.subarray(0, 4).equals(EBML_MAGIC), `${kind} starts as a WebM stream`);
        assert.equal(chunks[0]?.content_type, 'video/webm');
      }
      const uploads = of('upload');
      assert.equal(uploads.length, 1);
      assert.equal(uploads[0]?.file_name, 'answers.pdf');
      const answer = await fetchAddress(server, String(uploads[0]?.url));
      assert.ok(answer.bytes.equals(ANSWER_PDF), 'the answer file arrived whole');
    });

    it('puts the handed-in answer into the exam documents zip', async () => {
      const queued = await owner.client.v3('PUT', '/exams/:id/generate_exam_documents_zip', { id: examId });
      assert.equal(queued.status, 202, queued.text);
      await runDueJobs(server, dialect, server.app.clock);
      const answer = await owner.client.v3('GET', '/exams/:id/download_exam_documents_zip', { id: examId });
      assert.equal(answer.status, 200, answer.text);
      const entries = await digestZip(answer.bytes);
      const manifest = manifestOf(entries);
      const handedIn = manifest.files.filter((file) => file.path.endsWith('answers.pdf'));
      assert.equal(handedIn.length, 1, JSON.stringify(manifest.files));
      const entry = entries.get(handedIn[0]?.path ?? '');
      assert.equal(entry?.sha256, crypto.createHash('sha256').update(ANSWER_PDF).digest('hex'));
    });

    it('shows the finished room again after a reload, and refuses more work', async () => {
      await page.reload();
      await page.getByRole('heading', { name: 'Your exam is finished' }).waitFor();
      const token = roomLink.split('/').pop() ?? '';
      const refused = await httpRequest({ url: `${server.baseUrl}/api/room/${token}/start`, method: 'POST' });
      assert.equal(refused.status, 409);
    });

    it('answers an unknown room link with a readable 404 page', async () => {
      const answer = await page.goto(`${server.baseUrl}/room/${'0'.repeat(32)}`);
      assert.equal(answer?.status(), 404);
      await page.getByRole('heading', { name: 'Exam room not found' }).waitFor();
      await assertNoSeriousAxeViolations(page, 'not found');
      await screenshot('not-found');
    });

    it('has a favicon, linked from the page and served at /favicon.ico', async () => {
      await page.goto(roomLink);
      await page.getByRole('heading', { name: 'Your exam is finished' }).waitFor();
      const icon = await page.evaluate(async () => {
        const link = document.querySelector('link[rel="icon"]');
        const answer = await fetch(link?.getAttribute('href') ?? '');
        return {
          href: link?.getAttribute('href'),
          status: answer.status,
          type: answer.headers.get('content-type'),
        };
      });
      assert.deepEqual(icon, { href: '/favicon.ico', status: 200, type: 'image/x-icon' });
    });
  });
}
