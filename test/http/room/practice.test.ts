import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { createS3Client } from '../../../src/storage/s3.ts';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { practiceExamKey } from '../../../src/domain/practice/practice-link.ts';
import { loadServerKeys } from '../../../src/security/keys.ts';
import { addCandidate } from '../../helpers/candidates.ts';
import type { ApiClient } from '../../helpers/client.ts';
import { type HttpAnswer, httpRequest } from '../../helpers/http.ts';
import { object } from '../../helpers/json.ts';
import { type FilePart, multipartBody, SAMPLE } from '../../helpers/multipart.ts';
import { DIALECTS, startTestServer, TestClock, type TestServer } from '../../helpers/server.ts';
import { runDueJobs, startSmtpServer, type TestSmtpServer } from '../../mail/support.ts';
import { consoleV3, signIn, staffUser } from '../staff/support.ts';

/**
 * The practice run (docs/practice.md): a run passes with real recording chunks and leaves no file
 * and an unchanged status, fails naming the check, may not run once the exam started; the office's
 * reminders go only to students who have not passed; a demo exam's public link practises without a
 * registered student and keeps nothing.
 */

type Json = Record<string, unknown>;

const FIXTURES = path.join(import.meta.dirname, '../../fixtures/recordings');
const PUBLIC_URL = 'https://exams.example.org';

function fixture(name: string): Buffer {
  return fs.readFileSync(path.join(FIXTURES, name));
}

function runOf(answer: HttpAnswer): Json {
  return object(object(answer.json, 'body').practice_run, 'practice_run');
}

for (const dialect of DIALECTS) {
  describe(`practice run [${dialect}]`, () => {
    const clock = new TestClock(Date.now());
    let server: TestServer;
    let smtp: TestSmtpServer;
    let owner: ApiClient;
    let ownerEmail: string;
    let instituteId: number;
    let examId: number;
    let students = 0;

    before(async () => {
      smtp = await startSmtpServer();
      server = await startTestServer(dialect, {
        clock,
        env: { SMTP_URL: smtp.url, PUBLIC_URL, MAIL_FROM: 'Exams <exams@example.org>' },
      });
      instituteId = await server.institute();
      const user = await staffUser(server, instituteId, 'teacher');
      owner = user.client;
      ownerEmail = user.email;
      const created = await owner.v3('POST', '/exams', {
        name: 'Practised exam',
        type: 'record_review',
        duration_minutes: 30,
        web_cam: true,
        screen_share: true,
      });
      assert.equal(created.status, 201, created.text);
      examId = object(object(created.json, 'body').exam, 'exam').id as number;
    });

    after(async () => {
      await server.close();
      await smtp.close();
    });

    async function student(): Promise<{ id: number; token: string }> {
      students += 1;
      return addCandidate(owner, examId, students);
    }

    const call = (method: string, url: string, body?: unknown) =>
      httpRequest({
        url: `${server.baseUrl}${url}`,
        method,
        ...(body === undefined
          ? {}
          : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
      });

    function upload(url: string, fields: Record<string, string>, files: readonly FilePart[]) {
      const { body, contentType } = multipartBody(fields, files);
      return httpRequest({
        url: `${server.baseUrl}${url}`,
        method: 'POST',
        headers: { 'content-type': contentType },
        body,
      });
    }

    async function sessionRow(id: number) {
      return server.app.database.db
        .selectFrom('student_sessions')
        .select(['status', 'practice_status', 'practice_failed_check', 'practice_at', 'practice_reminded_at'])
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
    }

    /** Every stored object: the local storage's files (temporary ones included), or the S3 bucket's keys. */
    async function storedFiles(): Promise<string[]> {
      const storage = server.app.config.storage;
      if (storage.kind === 's3') {
        const listed = await createS3Client(storage).send(
          new ListObjectsV2Command({ Bucket: storage.bucket }),
        );
        return (listed.Contents ?? []).map((entry) => entry.Key ?? '');
      }
      const root = path.join(server.app.config.dataDir, 'files');
      if (!fs.existsSync(root)) return [];
      return fs
        .readdirSync(root, { recursive: true, encoding: 'utf8' })
        .filter((name) => fs.statSync(path.join(root, name)).isFile());
    }

    async function sendStream(token: string, run: number, source: string, files: readonly string[]) {
      for (const [sequence, name] of files.entries()) {
        const answer = await upload(
          `/api/room/${token}/practice/${run}/recording`,
          { sequence: String(sequence), source },
          [{ field: 'file', fileName: name, contentType: 'video/webm', bytes: fixture(name) }],
        );
        assert.equal(answer.status, 201, answer.text);
        assert.deepEqual(answer.json, { next_sequence: sequence + 1 });
      }
    }

    const PHOTO: FilePart = {
      field: 'file',
      fileName: 'photo.png',
      contentType: 'image/png',
      bytes: SAMPLE.png,
    };

    it('passes with every check and real recordings, keeps no file, and leaves the status alone', async () => {
      const { id, token } = await student();
      const before = await sessionRow(id);
      const filesBefore = await storedFiles();
      const begun = await call('POST', `/api/room/${token}/practice`);
      assert.equal(begun.status, 201, begun.text);
      const run = runOf(begun);
      assert.equal(run.status, 'running');
      assert.deepEqual(run.required_checks, [
        'webcam',
        'microphone',
        'screen_share',
        'bandwidth',
        'id_photo',
        'face_photo',
        'webcam_recording',
        'screen_recording',
      ]);
      assert.deepEqual(run.sources, ['webcam', 'screen']);
      assert.equal(run.recording_seconds, 30);
      assert.equal((await sessionRow(id)).practice_status, 'running');
      const runId = run.id as number;

      const checked = await call('PUT', `/api/room/${token}/practice/${runId}/checks`, {
        webcam: 'succeeded',
        microphone: 'succeeded',
        screen_share: 'succeeded',
        bandwidth: 'succeeded',
      });
      assert.equal(checked.status, 200, checked.text);
      assert.equal(object(runOf(checked).checks, 'checks').webcam, 'succeeded');

      const photo = await upload(`/api/room/${token}/practice/${runId}/photo`, {}, [PHOTO]);
      assert.equal(photo.status, 200, photo.text);
      const notImage = await upload(`/api/room/${token}/practice/${runId}/photo`, {}, [
        { ...PHOTO, bytes: SAMPLE.pdf },
      ]);
      assert.equal(notImage.status, 415, notImage.text);
      await call('PUT', `/api/room/${token}/practice/${runId}/checks`, {
        id_photo: 'succeeded',
        face_photo: 'succeeded',
      });

      await sendStream(
        token,
        runId,
        'webcam',
        [0, 1, 2, 3, 4].map((n) => `camera-a-${n}.webm`),
      );
      await sendStream(
        token,
        runId,
        'screen',
        [0, 1, 2, 3].map((n) => `screen-a-${n}.webm`),
      );
      // A chunk sent twice is acknowledged without storing; a gap is refused.
      const again = await upload(
        `/api/room/${token}/practice/${runId}/recording`,
        { sequence: '0', source: 'webcam' },
        [
          {
            field: 'file',
            fileName: 'again.webm',
            contentType: 'video/webm',
            bytes: fixture('camera-a-0.webm'),
          },
        ],
      );
      assert.equal(again.status, 200, again.text);
      const gap = await upload(
        `/api/room/${token}/practice/${runId}/recording`,
        { sequence: '9', source: 'webcam' },
        [
          {
            field: 'file',
            fileName: 'gap.webm',
            contentType: 'video/webm',
            bytes: fixture('camera-a-1.webm'),
          },
        ],
      );
      assert.equal(gap.status, 409, gap.text);
      assert.ok((await storedFiles()).length > filesBefore.length, 'the chunks wait in the storage');

      const finished = await call('POST', `/api/room/${token}/practice/${runId}/finish`);
      assert.equal(finished.status, 200, finished.text);
      const verdict = runOf(finished);
      assert.equal(verdict.status, 'passed', finished.text);
      assert.equal(verdict.failed_check, null);
      const recorded = object(verdict.recorded_seconds, 'recorded_seconds');
      assert.ok((recorded.webcam as number) >= 5, `webcam played ${String(recorded.webcam)} s`);
      assert.ok((recorded.screen as number) >= 5, `screen played ${String(recorded.screen)} s`);

      assert.deepEqual(await storedFiles(), filesBefore, 'nothing of the run is left in the storage');
      const after = await sessionRow(id);
      assert.equal(after.status, before.status);
      assert.equal(after.practice_status, 'passed');
      assert.equal(after.practice_failed_check, null);
      assert.equal(Number(after.practice_at), clock.now());
      const sessionFiles = await server.app.database.db
        .selectFrom('session_files')
        .select('id')
        .where('student_session_id', '=', id)
        .execute();
      assert.deepEqual(sessionFiles, [], 'no recording of the session');

      // The run has ended: nothing more is taken.
      const late = await call('PUT', `/api/room/${token}/practice/${runId}/checks`, { webcam: 'failed' });
      assert.equal(late.status, 409, late.text);
      assert.equal((await call('POST', `/api/room/${token}/practice/${runId}/finish`)).status, 409);

      // The V3 record shows it.
      const record = await owner.v3('GET', '/exams/:exam_id/student_sessions', {
        exam_id: examId,
        practice_status: 'passed',
      });
      assert.equal(record.status, 200, record.text);
      assert.ok(record.text.includes(`"id":${id}`), record.text);
    });

    it('fails naming the first check that did not succeed, and removes the chunks it had', async () => {
      const { id, token } = await student();
      const filesBefore = await storedFiles();
      const runId = runOf(await call('POST', `/api/room/${token}/practice`)).id as number;
      await call('PUT', `/api/room/${token}/practice/${runId}/checks`, {
        webcam: 'failed',
        microphone: 'succeeded',
      });
      await sendStream(token, runId, 'screen', ['screen-a-0.webm']);
      const finished = await call('POST', `/api/room/${token}/practice/${runId}/finish`);
      assert.equal(finished.status, 200, finished.text);
      const verdict = runOf(finished);
      assert.equal(verdict.status, 'failed');
      assert.equal(verdict.failed_check, 'webcam');
      const row = await sessionRow(id);
      assert.equal(row.practice_status, 'failed');
      assert.equal(row.practice_failed_check, 'webcam');
      assert.equal(row.status, 'registered');
      assert.deepEqual(await storedFiles(), filesBefore);
      const stored = await server.app.database.db
        .selectFrom('practice_runs')
        .select(['status', 'failed_check'])
        .where('id', '=', runId)
        .executeTakeFirstOrThrow();
      assert.deepEqual({ ...stored }, { status: 'failed', failed_check: 'webcam' });
    });

    it('ends an abandoned run at the next start and in the sweep, removing its chunks', async () => {
      const { id, token } = await student();
      const filesBefore = await storedFiles();
      const first = runOf(await call('POST', `/api/room/${token}/practice`)).id as number;
      await sendStream(token, first, 'webcam', ['camera-a-0.webm']);
      assert.equal((await storedFiles()).length, filesBefore.length + 1);
      const second = runOf(await call('POST', `/api/room/${token}/practice`)).id as number;
      assert.deepEqual(await storedFiles(), filesBefore, 'the abandoned run’s chunk is gone');
      const firstRow = await server.app.database.db
        .selectFrom('practice_runs')
        .select(['status', 'failed_check'])
        .where('id', '=', first)
        .executeTakeFirstOrThrow();
      assert.deepEqual({ ...firstRow }, { status: 'failed', failed_check: 'unfinished' });
      assert.equal((await sessionRow(id)).practice_status, 'running');

      await sendStream(token, second, 'webcam', ['camera-a-0.webm']);
      clock.current += 3 * 60 * 60 * 1000;
      // A begin of anyone's run sweeps now and then; the sweep itself runs here directly.
      const other = await student();
      await call('POST', `/api/room/${other.token}/practice`);
      for (let round = 0; round < 50 && (await sessionRow(id)).practice_status === 'running'; round += 1) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const row = await sessionRow(id);
      assert.equal(row.practice_status, 'failed');
      assert.equal(row.practice_failed_check, 'unfinished');
      assert.equal((await storedFiles()).length, filesBefore.length, 'the swept run’s chunk is gone');
    });

    it('refuses a practice once the exam started, an unknown token and a foreign run', async () => {
      const { token } = await student();
      const other = await student();
      const otherRun = runOf(await call('POST', `/api/room/${other.token}/practice`)).id as number;
      const foreign = await call('GET', `/api/room/${token}/practice/${otherRun}`);
      assert.equal(foreign.status, 404, foreign.text);
      const unknown = await call('POST', `/api/room/${'0'.repeat(32)}/practice`);
      assert.equal(unknown.status, 404, unknown.text);
      const bad = await call('PUT', `/api/room/${other.token}/practice/${otherRun}/checks`, {
        webcam: 'maybe',
      });
      assert.equal(bad.status, 422, bad.text);
      assert.deepEqual(bad.json, {
        error: "'webcam':['is not included in the list']",
        errors: { webcam: ['is not included in the list'] },
      });
      const started = await call('POST', `/api/room/${token}/start`);
      assert.equal(started.status, 409, 'a record_review exam needs its checks first');
      await server.app.database.db
        .updateTable('student_sessions')
        .set({ status: 'exam_started', start_time: clock.now() })
        .where('token', '=', token)
        .execute();
      const refused = await call('POST', `/api/room/${token}/practice`);
      assert.equal(refused.status, 409, refused.text);
    });

    it('emails a reminder only to students who have not passed, audited, and the exam email links the practice', async () => {
      const created = await owner.v3('POST', '/exams', {
        name: 'Reminded exam',
        type: 'record_review',
        duration_minutes: 30,
        web_cam: true,
      });
      const reminded = object(object(created.json, 'body').exam, 'exam').id as number;
      const passed = await addCandidate(owner, reminded, 901);
      const failed = await addCandidate(owner, reminded, 902);
      const never = await addCandidate(owner, reminded, 903);
      const running = await addCandidate(owner, reminded, 904);
      await server.app.database.db
        .updateTable('student_sessions')
        .set({ practice_status: 'passed' })
        .where('id', '=', passed.id)
        .execute();
      await server.app.database.db
        .updateTable('student_sessions')
        .set({ practice_status: 'failed', practice_failed_check: 'webcam' })
        .where('id', '=', failed.id)
        .execute();
      await server.app.database.db
        .updateTable('student_sessions')
        .set({ status: 'exam_started', start_time: clock.now() })
        .where('id', '=', running.id)
        .execute();
      smtp.messages.length = 0;
      const answer = await owner.v3('POST', '/exams/:id/practice_reminders', { id: reminded });
      assert.equal(answer.status, 200, answer.text);
      assert.deepEqual(object(answer.json, 'body'), { sent: 2 });
      await runDueJobs(server, dialect, clock);
      const to = smtp.messages.map((message) => message.envelopeTo[0]).sort();
      assert.deepEqual(to, ['candidate902@example.org', 'candidate903@example.org']);
      const mail = smtp.messages.find((message) => message.envelopeTo[0] === 'candidate903@example.org');
      assert.ok(mail?.text?.includes(`${PUBLIC_URL}/room/${never.token}/practice`), mail?.text);
      assert.match(mail?.subject ?? '', /Reminded exam/);
      assert.equal((await sessionRow(never.id)).practice_reminded_at, clock.now());
      assert.equal((await sessionRow(passed.id)).practice_reminded_at, null);
      const audit = await server.app.database.db
        .selectFrom('audit_events')
        .select(['action', 'target_id'])
        .where('action', '=', 'POST /api/v3/exams/:id/practice_reminders')
        .execute();
      assert.deepEqual(
        audit.map((event) => Number(event.target_id)),
        [reminded],
      );

      // The exam email carries the practice link.
      smtp.messages.length = 0;
      const sent = await owner.v3('POST', '/exams/:id/send_emails', { id: reminded });
      assert.equal(sent.status, 200, sent.text);
      await runDueJobs(server, dialect, clock);
      const invitation = smtp.messages.find(
        (message) => message.envelopeTo[0] === 'candidate901@example.org',
      );
      assert.ok(invitation?.text?.includes(`${PUBLIC_URL}/room/${passed.token}/practice`), invitation?.text);
    });

    it('takes the console’s session with X-CSRF-Token only, and keeps other institutes out', async () => {
      const browser = await signIn(server, ownerEmail);
      const refused = await consoleV3(server, browser, 'POST', `/exams/${examId}/practice_reminders`);
      assert.equal(refused.status, 403, refused.text);
      const accepted = await consoleV3(server, browser, 'POST', `/exams/${examId}/practice_reminders`, {
        csrf: browser.csrf,
      });
      assert.equal(accepted.status, 200, accepted.text);
      const otherInstitute = await server.institute();
      const stranger = await server.user(otherInstitute, 'administrator');
      const hidden = await stranger.client.v3('POST', '/exams/:id/practice_reminders', { id: examId });
      assert.equal(hidden.status, 404, hidden.text);
      const unsigned = await httpRequest({
        url: `${server.baseUrl}/api/v3/exams/${examId}/practice_reminders`,
        method: 'POST',
        headers: { accept: 'application/vnd.procwise.v3', 'content-type': 'application/json' },
        body: '{}',
      });
      assert.equal(unsigned.status, 403, unsigned.text);
    });

    it('lets a visitor practise a demo exam from its public link, and keeps nothing of the visitor', async () => {
      const created = await owner.v3('POST', '/exams', {
        name: 'Try it out',
        type: 'demo',
        duration_minutes: 30,
        web_cam: true,
      });
      assert.equal(created.status, 201, created.text);
      const demo = object(object(created.json, 'body').exam, 'exam');
      const demoId = demo.id as number;
      await owner.v3('PUT', '/exams/:id', { id: demoId, status: 'open' });
      const secret = loadServerKeys(server.app.config.serverSecret, server.app.config.dataDir).urlSigning;
      const key = practiceExamKey(secret, demoId);
      const page = await call('GET', `/practice/exam/${key}`);
      assert.equal(page.status, 200, page.text);
      assert.equal((await call('GET', `/practice/exam/${demoId}.${'0'.repeat(32)}`)).status, 404);
      assert.equal((await call('POST', `/api/room/practice/exam/${demoId}.${'0'.repeat(32)}`)).status, 404);
      const visitor = await call('POST', `/api/room/practice/exam/${key}`);
      assert.equal(visitor.status, 201, visitor.text);
      const token = object(visitor.json, 'body').token as string;
      const listed = await owner.v3('GET', '/exams/:exam_id/student_sessions', { exam_id: demoId });
      assert.ok(!listed.text.includes(token), 'the visitor is in no list');
      // The visitor's token serves the practice only: it never enters or starts the exam.
      assert.equal((await call('POST', `/api/room/${token}/enter`)).status, 404);
      assert.equal((await call('POST', `/api/room/${token}/start`)).status, 404);
      // The V3 record names the public link; other exam types have none.
      const shown = await owner.v3('GET', '/exams/:id', { id: demoId });
      const practiceUrl = object(object(shown.json, 'body').exam, 'exam').practice_url;
      assert.ok(
        typeof practiceUrl === 'string' && practiceUrl.endsWith(`/practice/exam/${key}`),
        String(practiceUrl),
      );
      const runId = runOf(await call('POST', `/api/room/${token}/practice`)).id as number;
      await call('PUT', `/api/room/${token}/practice/${runId}/checks`, {
        webcam: 'succeeded',
        microphone: 'succeeded',
        bandwidth: 'succeeded',
        id_photo: 'succeeded',
        face_photo: 'succeeded',
      });
      await sendStream(
        token,
        runId,
        'webcam',
        [0, 1, 2, 3, 4].map((n) => `camera-a-${n}.webm`),
      );
      const finished = await call('POST', `/api/room/${token}/practice/${runId}/finish`);
      assert.equal(runOf(finished).status, 'passed', finished.text);
      const left = await server.app.database.db
        .selectFrom('student_sessions')
        .select('id')
        .where('token', '=', token)
        .execute();
      assert.deepEqual(left, [], 'the visitor’s session is gone');
      // Only a demo exam has a public link.
      const notDemo = await call('POST', `/api/room/practice/exam/${practiceExamKey(secret, examId)}`);
      assert.equal(notDemo.status, 404, notDemo.text);
    });
  });
}
