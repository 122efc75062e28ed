/**
 * A candidate's access to their own data and the "who looked" record (docs/candidate-data.md),
 * over real HTTP on both databases: the one-time code by email (finished page and the public request
 * page), its limits, the zip's contents against what was stored, what the manifest leaves out, the
 * staff views as audit events (each kind, one per 10 minutes), the console's list, and the answers
 * once the data was purged.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import yauzl from 'yauzl';
import {
  DATA_PURGED,
  DOWNLOAD_EXPIRED,
  STAFF_VIEW_ACTIONS,
} from '../../../src/domain/candidate-data/candidate-data.ts';
import type { PhotoKind } from '../../../src/domain/student-sessions/photos.service.ts';
import { createWorker } from '../../../src/jobs/worker.ts';
import { type HttpAnswer, httpRequest } from '../../helpers/http.ts';
import { object } from '../../helpers/json.ts';
import { multipartBody, SAMPLE } from '../../helpers/multipart.ts';
import { DIALECTS, startTestServer, TestClock, type TestServer } from '../../helpers/server.ts';
import type { Scalar } from '../../helpers/signing.ts';

const PUBLIC_URL = 'https://invigil.example.test';
const MINUTE = 60_000;
const silent = pino({ level: 'silent' });
const sha256 = (bytes: Buffer) => crypto.createHash('sha256').update(bytes).digest('hex');

/** A frame header pdf-lib embeds as a 1×1 JPEG (see test/http/v3/reports.test.ts). */
const JPEG = Buffer.from([
  0xff, 0xd8, 0xff, 0xc0, 0x00, 0x11, 0x08, 0x00, 0x01, 0x00, 0x01, 0x03, 0x01, 0x11, 0x00, 0x02, 0x11, 0x01,
  0x03, 0x11, 0x01, 0xff, 0xd9,
]);

/** Every entry of a zip, read with yauzl (CRC and sizes checked), by name in archive order. */
async function unzip(bytes: Buffer): Promise<Map<string, Buffer>> {
  const zip = await yauzl.fromBufferPromise(bytes, { lazyEntries: true, validateEntrySizes: true });
  const entries = new Map<string, Buffer>();
  try {
    for await (const entry of zip.eachEntry()) {
      assert.equal(yauzl.validateFileName(entry.fileName), null, `a safe entry name: ${entry.fileName}`);
      const chunks: Buffer[] = [];
      for await (const chunk of await zip.openReadStreamPromise(entry)) chunks.push(chunk as Buffer);
      entries.set(entry.fileName, Buffer.concat(chunks));
    }
  } finally {
    zip.close();
  }
  return entries;
}

interface ManifestJson {
  student_session: { id: number; email: string };
  files: { path: string; kind: string; size: number; sha256: string }[];
  incidents: { time: string; comment: string; offset_seconds: number | null }[];
  verdict: { verdict: string; comment: string | null } | null;
  viewed_by: { name: string | null; role: string | null; what: string; at: string }[];
}

for (const dialect of DIALECTS) {
  describe(`candidate data access [${dialect}]`, () => {
    const start = Math.floor(Date.now() / 1000) * 1000;
    const clock = new TestClock(start);
    let server: TestServer;
    let institute: number;
    let owner: Awaited<ReturnType<TestServer['user']>>;
    let proctor: Awaited<ReturnType<TestServer['user']>>;
    let stranger: Awaited<ReturnType<TestServer['user']>>;
    let uploadDir: string;
    let examId: number;
    let ada: { id: number; token: string; email: string };
    const stored = new Map<string, Buffer>();

    function room(token: string, action: string, body?: Record<string, unknown>): Promise<HttpAnswer> {
      return httpRequest({
        url: `${server.baseUrl}/api/room/${token}/${action}`,
        method: 'POST',
        ...(body === undefined
          ? {}
          : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
      });
    }

    function requestPage(email: string): Promise<HttpAnswer> {
      return httpRequest({
        url: `${server.baseUrl}/my-data`,
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: `email=${encodeURIComponent(email)}`,
      });
    }

    /** The codes emailed to `email` so far, oldest first, read from the outbox. */
    async function codesSentTo(email: string): Promise<string[]> {
      const rows = await server.app.database.db
        .selectFrom('outbox')
        .select(['text_body', 'kind'])
        .where('to_address', '=', email)
        .where('kind', '=', 'candidate_data_code')
        .orderBy('id')
        .execute();
      return rows.map((row) => /(\d{8})/.exec(row.text_body)?.[1] ?? '');
    }

    async function newCode(token: string, email: string): Promise<string> {
      const sent = await room(token, 'data/code');
      assert.equal(sent.status, 202, sent.text);
      const code = (await codesSentTo(email)).at(-1);
      assert.ok(code !== undefined && /^\d{8}$/.test(code));
      return code;
    }

    async function download(token: string, email: string): Promise<HttpAnswer> {
      const code = await newCode(token, email);
      const granted = await room(token, 'data/access', { code });
      assert.equal(granted.status, 200, granted.text);
      const url = object(granted.json, 'grant').url as string;
      assert.match(url, /^\/candidate-data\/[A-Za-z0-9_-]{43}$/);
      return httpRequest({ url: `${server.baseUrl}${url}` });
    }

    async function createStudent(email: string, extra: Record<string, Scalar> = {}) {
      const answer = await owner.client.v3('POST', '/exams/:exam_id/student_sessions', {
        exam_id: examId,
        name: 'Ada Lovelace',
        email,
        ...extra,
      });
      assert.equal(answer.status, 201, answer.text);
      const student = object(object(answer.json, 'body').student, 'student');
      return { id: student.id as number, token: student.token as string, email };
    }

    async function end(sessionId: number): Promise<void> {
      await server.app.database.db
        .updateTable('student_sessions')
        .set({
          status: 'exam_finished',
          start_time: start,
          end_time: start + 30 * MINUTE,
          end_reason: 'finished',
        })
        .where('id', '=', sessionId)
        .execute();
    }

    async function keep(bytes: Buffer, originalName: string, contentType: string) {
      return server.app.services.files.keepStream(Readable.from([bytes]), {
        originalName,
        contentType,
        instituteId: institute,
      });
    }

    async function attach(sessionId: number, kind: PhotoKind, bytes: Buffer, fileName: string) {
      const file = path.join(uploadDir, crypto.randomBytes(8).toString('hex'));
      fs.writeFileSync(file, bytes);
      await server.app.services.photos.attachPhoto(sessionId, kind, {
        field: 'photo',
        fileName,
        declaredType: 'application/octet-stream',
        path: file,
        size: bytes.length,
        head: bytes.subarray(0, 64),
      });
    }

    async function staffEvents(action: string, targetId: number) {
      return server.app.database.db
        .selectFrom('audit_events')
        .selectAll()
        .where('action', '=', action)
        .where('target_id', '=', targetId)
        .execute();
    }

    before(async () => {
      server = await startTestServer(dialect, { clock, env: { PUBLIC_URL } });
      uploadDir = fs.mkdtempSync(path.join(server.database.dataDir, 'uploads-'));
      institute = await server.institute();
      owner = await server.user(institute, 'teacher');
      proctor = await server.user(institute, 'proctor');
      stranger = await server.user(await server.institute(), 'administrator');
      const exam = await owner.client.v3('POST', '/exams', {
        name: 'Data exam',
        type: 'record_review',
        duration_minutes: 60,
        web_cam: true,
        screen_share: true,
        upload_answers: true,
      });
      assert.equal(exam.status, 201, exam.text);
      examId = object(object(exam.json, 'body').exam, 'exam').id as number;
      ada = await createStudent('ada.data@example.org');

      // What the room would have stored: a finalised webcam recording, two screen chunks (no
      // finalised screen recording), the two photos, a handed-in file.
      const webcam = crypto.randomBytes(40_000);
      const webcamFile = await keep(webcam, 'webcam.webm', 'video/webm');
      stored.set('recordings/recording-webcam.webm', webcam);
      await server.app.database.db
        .insertInto('recordings')
        .values({
          student_session_id: ada.id,
          source: 'webcam',
          status: 'completed',
          started_at: start,
          duration_seconds: 60,
          file_id: webcamFile.id,
          storage_key: webcamFile.storageKey,
          size: webcamFile.size,
          created_at: start,
          updated_at: start,
        })
        .execute();
      for (const sequence of [0, 1]) {
        const chunk = crypto.randomBytes(5_000 + sequence);
        const file = await keep(chunk, `chunk-${sequence}.webm`, 'video/webm');
        stored.set(`recordings/screen-chunk-0000${sequence}.webm`, chunk);
        await server.app.database.db
          .insertInto('session_files')
          .values({
            student_session_id: ada.id,
            kind: 'screen_recording',
            file_id: file.id,
            sequence,
            created_at: start,
          })
          .execute();
      }
      await attach(ada.id, 'id_card', SAMPLE.png, 'scan.png');
      stored.set('photos/id-card.png', SAMPLE.png);
      await attach(ada.id, 'face_photo', JPEG, 'me.jpg');
      stored.set('photos/face-photo.jpg', JPEG);
      const answers = await keep(SAMPLE.pdf, '../../answers.pdf', 'application/pdf');
      stored.set('uploads/answers.pdf', SAMPLE.pdf);
      await server.app.database.db
        .insertInto('session_files')
        .values({
          student_session_id: ada.id,
          kind: 'upload',
          file_id: answers.id,
          sequence: 0,
          created_at: start,
        })
        .execute();
      const incident = await owner.client.v3('POST', '/student_sessions/:id/incidents', {
        id: ada.id,
        comment: 'Left the room',
        offset_time: 12,
      });
      assert.equal(incident.status, 201, incident.text);
    });
    after(() => server.close());

    it('answers 409 before the session ended, and sends no code', async () => {
      const early = await room(ada.token, 'data/code');
      assert.equal(early.status, 409, early.text);
      assert.deepEqual(early.json, {
        error: 'Your data can be downloaded once your exam session has ended.',
      });
      assert.deepEqual(await codesSentTo(ada.email), []);
    });

    it('emails a code to the session’s own address and answers it masked', async () => {
      await end(ada.id);
      const sent = await room(ada.token, 'data/code');
      assert.equal(sent.status, 202, sent.text);
      const body = object(sent.json, 'sent');
      assert.equal(body.sent_to, 'a•••@example.org');
      assert.equal(Date.parse(body.expires_at as string), clock.now() + 15 * MINUTE);
      const mail = await server.app.database.db
        .selectFrom('outbox')
        .selectAll()
        .where('kind', '=', 'candidate_data_code')
        .executeTakeFirstOrThrow();
      assert.equal(mail.to_address, ada.email);
      assert.ok(mail.text_body.includes(`${PUBLIC_URL}/room/${ada.token}`), 'the email links the exam page');
      // Only the code's hash is kept.
      const code = (await codesSentTo(ada.email))[0] ?? '';
      const rows = await server.app.database.db.selectFrom('candidate_data_codes').selectAll().execute();
      assert.equal(rows.length, 1);
      assert.ok(!JSON.stringify(rows).includes(code));
      const requested = await staffEvents('candidate_data_requested', ada.id);
      assert.equal(requested.length, 1);
      assert.equal(requested[0]?.user_id, null);
    });

    it('refuses a wrong, malformed, missing or used code with 422, and a code after 5 wrong tries', async () => {
      const code = await newCode(ada.token, ada.email);
      const wrong = code === '00000000' ? '11111111' : '00000000';
      for (const typed of [wrong, 'abc', '1234']) {
        const answer = await room(ada.token, 'data/access', { code: typed });
        assert.equal(answer.status, 422, answer.text);
        assert.deepEqual(answer.json, {
          error: "'code':['is wrong or has expired']",
          errors: { code: ['is wrong or has expired'] },
        });
      }
      const missing = await room(ada.token, 'data/access', {});
      assert.equal(missing.status, 422, missing.text);
      // One wrong try so far (only well-formed codes count); four more exhaust the code.
      for (let attempt = 0; attempt < 4; attempt += 1) {
        assert.equal((await room(ada.token, 'data/access', { code: wrong })).status, 422);
      }
      const exhausted = await room(ada.token, 'data/access', { code });
      assert.equal(exhausted.status, 422, 'a code stops working after 5 wrong tries');
      const fresh = await newCode(ada.token, ada.email);
      assert.equal(
        (await room(ada.token, 'data/access', { code: fresh.replace(/(\d{4})/, '$1 ') })).status,
        200,
      );
      const reused = await room(ada.token, 'data/access', { code: fresh });
      assert.equal(reused.status, 422, 'a code works once');
    });

    it('refuses a code once it expired', async () => {
      const code = await newCode(ada.token, ada.email);
      clock.current += 16 * MINUTE;
      const late = await room(ada.token, 'data/access', { code });
      assert.equal(late.status, 422, late.text);
    });

    it('records each kind of staff view as one audit event per user and 10 minutes', async () => {
      clock.current += 61 * MINUTE; // a new hour of codes for the next tests
      const reads: [string, Record<string, Scalar>, string][] = [
        ['/student_sessions/:id/recordings', { id: ada.id }, STAFF_VIEW_ACTIONS.recordings],
        ['/student_sessions/:id/face_photo', { id: ada.id }, STAFF_VIEW_ACTIONS.photos],
        ['/student_sessions/:id/files', { id: ada.id, kind: 'upload' }, STAFF_VIEW_ACTIONS.uploads],
        ['/student_sessions/:id/report.pdf', { id: ada.id }, STAFF_VIEW_ACTIONS.report],
      ];
      for (const [route, params, action] of reads) {
        const answer = await owner.client.v3('GET', route, params);
        assert.equal(answer.status, 200, `${route}: ${answer.text}`);
        const events = await staffEvents(action, ada.id);
        assert.equal(events.length, 1, `${action} recorded once`);
        assert.equal(events[0]?.user_id, owner.id);
        assert.equal(events[0]?.target_type, 'student_sessions');
        assert.equal(events[0]?.institute_id, institute);
      }
      // A player's range requests and the near-live chunks: no new event within 10 minutes.
      await owner.client.v3('GET', '/student_sessions/:id/recordings', { id: ada.id });
      await owner.client.v3('GET', '/student_sessions/:id/files', { id: ada.id, kind: 'screen_recording' });
      await owner.client.v3('GET', '/student_sessions/:id/id_card', { id: ada.id });
      assert.equal((await staffEvents(STAFF_VIEW_ACTIONS.recordings, ada.id)).length, 1);
      assert.equal((await staffEvents(STAFF_VIEW_ACTIONS.photos, ada.id)).length, 1);
      // Another user, and the same user 10 minutes later, count again.
      await proctor.client.v3('GET', '/student_sessions/:id/recordings', { id: ada.id });
      clock.current += 11 * MINUTE;
      await owner.client.v3('GET', '/student_sessions/:id/files', { id: ada.id, kind: 'screen_recording' });
      assert.equal((await staffEvents(STAFF_VIEW_ACTIONS.recordings, ada.id)).length, 3);
      // A refused read is no look.
      const refused = await stranger.client.v3('GET', '/student_sessions/:id/recordings', { id: ada.id });
      assert.equal(refused.status, 404);
      assert.ok(
        (await staffEvents(STAFF_VIEW_ACTIONS.recordings, ada.id)).every((e) => e.user_id !== stranger.id),
      );
    });

    it('records a download of the exam’s documents zip against the exam', async () => {
      const generated = await owner.client.v3('PUT', '/exams/:id/generate_exam_documents_zip', {
        id: examId,
      });
      assert.equal(generated.status, 202, generated.text);
      const worker = createWorker({
        db: server.app.database.db,
        dialect,
        clock: server.app.clock,
        logger: silent,
        handlers: server.app.jobHandlers,
      });
      while (await worker.runOnce()) {
        // one job at a time
      }
      const zip = await owner.client.v3('GET', '/exams/:id/download_exam_documents_zip', { id: examId });
      assert.equal(zip.status, 200, zip.text);
      const events = await staffEvents(STAFF_VIEW_ACTIONS.exam_zip, examId);
      assert.equal(events.length, 1);
      assert.equal(events[0]?.target_type, 'exams');
    });

    it('lists who looked to staff who may read the session (GET /student_sessions/:id/staff_views)', async () => {
      const answer = await proctor.client.v3('GET', '/student_sessions/:id/staff_views', { id: ada.id });
      assert.equal(answer.status, 200, answer.text);
      const views = object(answer.json, 'body').staff_views as { name: string; role: string; what: string }[];
      assert.deepEqual(
        views.map((view) => view.what),
        ['recordings', 'photos', 'uploads', 'report', 'recordings', 'recordings', 'exam_zip'],
      );
      assert.ok(views.some((view) => view.role === 'proctor'));
      const hidden = await stranger.client.v3('GET', '/student_sessions/:id/staff_views', { id: ada.id });
      assert.equal(hidden.status, 404, hidden.text);
      const unsigned = await httpRequest({
        url: `${server.baseUrl}/api/v3/student_sessions/${ada.id}/staff_views`,
        headers: { accept: 'application/vnd.procwise.v3' },
      });
      assert.equal(unsigned.status, 403, unsigned.text);
      assert.deepEqual(unsigned.json, { error: 'You are not authorized to access this page.' });
    });

    it('streams a zip whose files are the stored bytes, with the manifest, the summary and who looked', async () => {
      // A verdict in review with a working note: not final, so neither it nor its note is shown.
      const review = await owner.client.v3('PUT', '/student_sessions/:id/review', {
        id: ada.id,
        verdict: 'in_review',
        comment: 'Internal working note: check the hallway camera',
      });
      assert.equal(review.status, 200, review.text);
      const answer = await download(ada.token, ada.email);
      assert.equal(answer.status, 200, answer.text);
      assert.equal(answer.headers['content-type'], 'application/zip');
      assert.match(
        String(answer.headers['content-disposition']),
        /attachment; filename="exam-session-\d+-my-data\.zip"/,
      );
      assert.equal(answer.headers['cache-control'], 'private, no-store');
      const entries = await unzip(answer.bytes);
      assert.deepEqual(
        [...entries.keys()],
        [
          'recordings/recording-webcam.webm',
          'recordings/screen-chunk-00000.webm',
          'recordings/screen-chunk-00001.webm',
          'photos/id-card.png',
          'photos/face-photo.jpg',
          'uploads/answers.pdf',
          'summary.txt',
          'manifest.json',
        ],
      );
      for (const [name, bytes] of stored) {
        assert.equal(
          sha256(entries.get(name) ?? Buffer.alloc(0)),
          sha256(bytes),
          `${name} is the stored file`,
        );
      }
      const manifest = JSON.parse(
        (entries.get('manifest.json') ?? Buffer.alloc(0)).toString('utf8'),
      ) as ManifestJson;
      assert.equal(manifest.student_session.id, ada.id);
      for (const file of manifest.files) {
        const bytes = stored.get(file.path);
        assert.ok(bytes !== undefined, `${file.path} is listed`);
        assert.equal(file.sha256, sha256(bytes));
        assert.equal(file.size, bytes.length);
      }
      assert.equal(manifest.incidents.length, 1);
      assert.equal(manifest.incidents[0]?.comment, 'Left the room');
      assert.equal(manifest.incidents[0]?.time, new Date(start + 12_000).toISOString());
      assert.equal(manifest.verdict, null, 'a verdict in review is not shown');
      assert.deepEqual(
        manifest.viewed_by.map((view) => view.what),
        ['recordings', 'photos', 'uploads', 'report', 'recordings', 'recordings', 'exam_zip'],
      );
      const summary = (entries.get('summary.txt') ?? Buffer.alloc(0)).toString('utf8');
      assert.ok(summary.includes('Left the room'));
      for (const text of [summary, JSON.stringify(manifest)]) {
        assert.ok(!text.includes('Internal working note'), 'staff-only notes are left out');
      }
      assert.equal((await staffEvents('candidate_data_downloaded', ada.id)).length, 1);
    });

    it('shows the verdict and its comment once final', async () => {
      const review = await owner.client.v3('PUT', '/student_sessions/:id/review', {
        id: ada.id,
        verdict: 'passed',
        comment: 'Nothing irregular.',
      });
      assert.equal(review.status, 200, review.text);
      const answer = await download(ada.token, ada.email);
      const manifest = JSON.parse(
        ((await unzip(answer.bytes)).get('manifest.json') ?? Buffer.alloc(0)).toString('utf8'),
      ) as ManifestJson;
      assert.deepEqual(
        { verdict: manifest.verdict?.verdict, comment: manifest.verdict?.comment },
        { verdict: 'passed', comment: 'Nothing irregular.' },
      );
      assert.ok(!JSON.stringify(manifest).includes('Internal working note'));
    });

    it('carries the candidate’s appeal, its files and its outcome', async () => {
      const bea = await createStudent(`bea-${crypto.randomBytes(4).toString('hex')}@example.org`);
      await end(bea.id);
      const review = await owner.client.v3('PUT', '/student_sessions/:id/review', {
        id: bea.id,
        verdict: 'suspicious',
        comment: 'Looked away often.',
      });
      assert.equal(review.status, 200, review.text);
      const { body, contentType } = multipartBody({ statement: 'I was reading the formula sheet.' }, [
        { field: 'files', fileName: 'note.pdf', contentType: 'application/pdf', bytes: SAMPLE.pdf },
      ]);
      const appealed = await httpRequest({
        url: `${server.baseUrl}/api/room/${bea.token}/appeal`,
        method: 'POST',
        headers: { 'content-type': contentType },
        body,
      });
      assert.equal(appealed.status, 201, appealed.text);
      const files = await unzip((await download(bea.token, bea.email)).bytes);
      const manifest = JSON.parse((files.get('manifest.json') ?? Buffer.alloc(0)).toString('utf8')) as {
        appeal: { status: string; statement: string } | null;
        files: { path: string; kind: string }[];
      };
      assert.deepEqual(
        { status: manifest.appeal?.status, statement: manifest.appeal?.statement },
        { status: 'open', statement: 'I was reading the formula sheet.' },
      );
      const appealFile = manifest.files.find((file) => file.kind === 'appeal_file');
      assert.ok(appealFile !== undefined, 'the appeal’s file is listed');
      assert.deepEqual(files.get(appealFile.path), SAMPLE.pdf);
    });

    it('limits codes to 5 an hour per session (429)', async () => {
      clock.current += 61 * MINUTE;
      for (let sent = 0; sent < 5; sent += 1) assert.equal((await room(ada.token, 'data/code')).status, 202);
      const over = await room(ada.token, 'data/code');
      assert.equal(over.status, 429, over.text);
    });

    it('refuses unknown tokens, unknown or expired download addresses', async () => {
      assert.equal((await room('f'.repeat(32), 'data/code')).status, 404);
      assert.equal((await room('f'.repeat(32), 'data/access', { code: '12345678' })).status, 404);
      const made = 'A'.repeat(43);
      for (const key of [made, 'short', '..%2F..%2Fetc']) {
        const answer = await httpRequest({ url: `${server.baseUrl}/candidate-data/${key}` });
        assert.equal(answer.status, 404, answer.text);
        assert.deepEqual(answer.json, { error: DOWNLOAD_EXPIRED });
      }
      clock.current += 61 * MINUTE;
      const code = await newCode(ada.token, ada.email);
      const granted = await room(ada.token, 'data/access', { code });
      const url = object(granted.json, 'grant').url as string;
      clock.current += 16 * MINUTE;
      const late = await httpRequest({ url: `${server.baseUrl}${url}` });
      assert.equal(late.status, 404, late.text);
      assert.deepEqual(late.json, { error: DOWNLOAD_EXPIRED });
    });

    it('sends a code from the public page to the address’s ended sessions, answering alike for an unknown one', async () => {
      const page = await httpRequest({ url: `${server.baseUrl}/my-data` });
      assert.equal(page.status, 200);
      assert.match(String(page.headers['content-security-policy']), /form-action 'self'/);
      assert.ok(page.text.includes('<form method="post" action="/my-data"'));
      clock.current += 61 * MINUTE;
      const before = (await codesSentTo(ada.email)).length;
      const known = await requestPage('ada.data@EXAMPLE.org');
      const unknown = await requestPage('nobody@example.org');
      assert.equal(known.status, 200, known.text);
      assert.equal(unknown.status, known.status);
      assert.equal(unknown.text, known.text, 'the same page whether or not the address has a session');
      assert.equal((await codesSentTo(ada.email)).length, before + 1);
      assert.deepEqual(await codesSentTo('nobody@example.org'), []);
      const invalid = await requestPage('not an address');
      assert.equal(invalid.status, 422);
    });

    it('limits the public page per address (3 a minute) and per client address (10 a minute)', async () => {
      const address = 'limits@example.org';
      const answers: number[] = [];
      for (let attempt = 0; attempt < 4; attempt += 1) answers.push((await requestPage(address)).status);
      assert.deepEqual(answers, [200, 200, 200, 429]);
      const limited = await requestPage(address);
      assert.ok(limited.text.includes('Too many requests'));
      // Fresh addresses from the same client: refused once the client's ten are spent.
      const more: number[] = [];
      for (let attempt = 0; attempt < 11; attempt += 1)
        more.push((await requestPage(`ip${attempt}@example.org`)).status);
      assert.ok(more.includes(429), `the client address is limited: ${more.join(',')}`);
      assert.ok(more.slice(more.indexOf(429)).every((status) => status === 429));
    });

    it('answers 404 with a clear sentence once the session’s data was purged', async () => {
      clock.current += 61 * MINUTE;
      const code = await newCode(ada.token, ada.email);
      const granted = await room(ada.token, 'data/access', { code });
      const url = object(granted.json, 'grant').url as string;
      await server.app.database.db
        .updateTable('student_sessions')
        .set({ media_purged_at: clock.now() })
        .where('id', '=', ada.id)
        .execute();
      const purged = await httpRequest({ url: `${server.baseUrl}${url}` });
      assert.equal(purged.status, 404, purged.text);
      assert.deepEqual(purged.json, { error: DATA_PURGED });
      const again = await room(ada.token, 'data/code');
      assert.equal(again.status, 404);
      assert.deepEqual(again.json, { error: DATA_PURGED });
    });
  });
}
