/**
 * Contesting a verdict (docs/appeals.md), through real HTTP: the candidate's verdict notice over a
 * real SMTP server in their language, the appeal through the room token (multipart, statement and
 * files), the second reviewer's decision over signed V3, the history keeping both verdicts, the
 * webhooks at a real receiver, the audit events, and the refusals (409, 404, 422, 403).
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { Actor } from '../../../src/domain/access.ts';
import { invalid, missing, NOT_AUTHORIZED, notFound } from '../../helpers/answers.ts';
import { type HttpAnswer, httpRequest } from '../../helpers/http.ts';
import { object, type Json } from '../../helpers/json.ts';
import { deleteStudentSession } from '../../../src/domain/student-sessions/student-sessions.repository.ts';
import { multipartBody, SAMPLE } from '../../helpers/multipart.ts';
import { pdfPages } from '../../helpers/pdf.ts';
import { DIALECTS, startTestServer, TestClock, type TestServer } from '../../helpers/server.ts';
import { runDueJobs, startSmtpServer, type TestSmtpServer } from '../../mail/support.ts';
import { consoleV3, signIn, staffUser } from '../staff/support.ts';

const DAY = 86_400_000;
const PUBLIC_URL = 'https://invigil.example.org';
const APPEAL = '/student_sessions/:id/appeal';
const REVIEW = '/student_sessions/:id/review';

type TestUser = Awaited<ReturnType<TestServer['user']>>;

/** A webhook receiver on 127.0.0.1 that records every body. */
class Receiver {
  readonly bodies: Json[] = [];
  #server: http.Server | undefined;
  url = '';
  async start(): Promise<void> {
    const server = http.createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      request.on('end', () => {
        this.bodies.push(object(JSON.parse(body), 'webhook body'));
        response.writeHead(200).end('ok');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
    this.#server = server;
  }
  async stop(): Promise<void> {
    const server = this.#server;
    if (server === undefined) return;
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
  of(type: string): Json[] {
    return this.bodies.filter((body) => body.type === type);
  }
}

function appealIn(answer: HttpAnswer, status = 200): Json {
  assert.equal(answer.status, status, answer.text);
  return object(object(answer.json, 'body').appeal, 'appeal');
}

for (const dialect of DIALECTS) {
  describe(`appeals [${dialect}]`, () => {
    const clock = new TestClock(Date.UTC(2026, 10, 21, 9, 0, 0));
    const receiver = new Receiver();
    let smtp: TestSmtpServer;
    let server: TestServer;
    let instituteId: number;
    let owner: TestUser;
    let first: TestUser;
    let second: TestUser;
    let proctor: TestUser;
    let outsider: TestUser;
    let exam: number;

    const actor = (user: TestUser, role: Actor['role']): Actor => ({ id: user.id, instituteId, role });

    /** A finished session of the exam, its candidate's language `language`. Returns id and token. */
    async function finishedSession(language: string | null = null): Promise<{ id: number; token: string }> {
      const { studentSessions, mail } = server.app.services;
      const session = await studentSessions.create(actor(owner, 'teacher'), exam, {
        name: 'Amal Candidate',
        email: `candidate-${crypto.randomUUID()}@example.org`,
      });
      await server.app.database.db
        .updateTable('student_sessions')
        .set({ language })
        .where('id', '=', session.id)
        .execute();
      await mail.endExam(actor(owner, 'teacher'), session.id);
      return { id: session.id, token: session.token };
    }

    const verdict = (user: TestUser, id: number, value: string, comment?: string) =>
      user.client.v3('PUT', REVIEW, { id, verdict: value, ...(comment === undefined ? {} : { comment }) });

    function postAppeal(
      token: string,
      fields: Record<string, string>,
      files: { field: string; fileName: string; contentType: string; bytes: Buffer }[] = [],
    ): Promise<HttpAnswer> {
      const { body, contentType } = multipartBody(fields, files);
      return httpRequest({
        url: `${server.baseUrl}/api/room/${token}/appeal`,
        method: 'POST',
        headers: { 'content-type': contentType },
        body,
      });
    }

    const roomState = async (token: string) =>
      appealIn(await httpRequest({ url: `${server.baseUrl}/api/room/${token}/appeal`, method: 'GET' }));

    before(async () => {
      await receiver.start();
      smtp = await startSmtpServer();
      server = await startTestServer(dialect, {
        clock,
        env: { SMTP_URL: smtp.url, PUBLIC_URL, OUTBOUND_ALLOWLIST: '127.0.0.1' },
      });
      instituteId = await server.institute();
      const administrator = await server.user(instituteId, 'administrator');
      owner = await server.user(instituteId, 'teacher');
      first = await server.user(instituteId, 'reviewer');
      second = await server.user(instituteId, 'reviewer');
      proctor = await server.user(instituteId, 'proctor');
      outsider = await server.user(await server.institute(), 'reviewer');
      const patched = await administrator.client.v3('PATCH', '/institutes/:id', {
        id: instituteId,
        callback_url: receiver.url,
        exam_finalized_emails_enabled: false,
      });
      assert.equal(patched.status, 200, patched.text);
      const created = await owner.client.v3('POST', '/exams', {
        name: 'Öffentliches Recht',
        type: 'record_review',
        duration_minutes: 60,
        timezone: 'Europe/Berlin',
      });
      assert.equal(created.status, 201, created.text);
      exam = Number(object(object(created.json, 'body').exam, 'exam').id);
    });

    after(async () => {
      await server.close();
      await smtp.close();
      await receiver.stop();
    });

    beforeEach(async () => {
      await runDueJobs(server, dialect, clock);
      smtp.messages.length = 0;
      receiver.bodies.length = 0;
    });

    it('tells the candidate of a violation in their language, and a second reviewer overturns the appeal', async () => {
      const session = await finishedSession('de');
      assert.equal((await roomState(session.token)).open, false, 'nothing to appeal before a verdict');
      assert.equal((await postAppeal(session.token, { statement: 'Too early' })).status, 409);

      assert.equal((await verdict(first, session.id, 'violation', 'Second person in view')).status, 200);
      await runDueJobs(server, dialect, clock);
      const [notice, ...more] = smtp.messages;
      assert.equal(more.length, 0, 'one notice');
      assert.ok(notice !== undefined);
      assert.equal(notice.subject, 'Die Prüfung Ihrer Aufzeichnung: Öffentliches Recht');
      assert.ok(notice.text?.includes('Verstoß gegen die Prüfungsregeln'), notice.text);
      assert.ok(notice.text?.includes('5. Dezember 2026'), notice.text);
      assert.ok(notice.text?.includes(`${PUBLIC_URL}/room/${session.token}`), notice.text);
      // A comment added to the settled violation sends no second notice.
      assert.equal((await verdict(first, session.id, 'violation', 'Seen twice')).status, 200);
      await runDueJobs(server, dialect, clock);
      assert.equal(smtp.messages.length, 1);

      const state = await roomState(session.token);
      assert.equal(state.open, true);
      assert.equal(state.verdict, 'violation');
      assert.equal(state.deadline, new Date(clock.now() + 14 * DAY).toISOString());
      assert.equal(state.appeal, null);

      clock.current += DAY;
      const posted = await postAppeal(session.token, { statement: '  My sister walked in by mistake.  ' }, [
        { field: 'files', fileName: 'note.pdf', contentType: 'application/pdf', bytes: SAMPLE.pdf },
      ]);
      const mine = object(appealIn(posted, 201).appeal, 'appeal');
      assert.equal(mine.status, 'open');
      assert.equal(mine.statement, 'My sister walked in by mistake.');
      assert.deepEqual(mine.files, [{ file_name: 'note.pdf', size: SAMPLE.pdf.length }]);
      assert.equal((await postAppeal(session.token, { statement: 'Again' })).status, 409);

      const open = appealIn(await proctor.client.v3('GET', APPEAL, { id: session.id }));
      assert.equal(open.status, 'open');
      assert.equal(open.appealed_verdict, 'violation');
      assert.equal(open.decided_by, null);
      const [file] = open.files as Json[];
      assert.equal(file?.file_name, 'note.pdf');
      const address = new URL(String(file?.url));
      const download = await httpRequest({
        url: `${server.baseUrl}${address.pathname}${address.search}`,
        method: 'GET',
      });
      assert.equal(download.status, 200);

      // The reviewer whose verdict is final may not decide: 422 naming decision.
      const own = await first.client.v3('PUT', APPEAL, { id: session.id, decision: 'overturned' });
      assert.equal(own.status, 422, own.text);
      assert.deepEqual(object(own.json, 'body').errors, {
        decision: ['may not be given by the reviewer who gave the appealed verdict'],
      });
      const denied = await proctor.client.v3('PUT', APPEAL, { id: session.id, decision: 'overturned' });
      assert.equal(denied.status, 403);
      assert.deepEqual(denied.json, NOT_AUTHORIZED);
      const hidden = await outsider.client.v3('PUT', APPEAL, { id: session.id, decision: 'overturned' });
      assert.equal(hidden.status, 404);
      assert.deepEqual(hidden.json, notFound('Student Session', session.id));
      const none = await second.client.v3('PUT', APPEAL, { id: session.id, comment: 'x' });
      assert.equal(none.status, 422);
      assert.deepEqual(none.json, missing('decision'));
      const wrong = await second.client.v3('PUT', APPEAL, { id: session.id, decision: 'maybe' });
      assert.equal(wrong.status, 422);
      assert.deepEqual(wrong.json, invalid('decision', 'is not included in the list'));

      const decided = appealIn(
        await second.client.v3('PUT', APPEAL, {
          id: session.id,
          decision: 'overturned',
          comment: 'A family member, not help.',
        }),
      );
      assert.equal(decided.status, 'overturned');
      assert.equal(object(decided.decided_by, 'decided_by').id, second.id);
      assert.equal(decided.decided_at, new Date(clock.now()).toISOString());
      assert.equal(decided.comment, 'A family member, not help.');
      const again = await second.client.v3('PUT', APPEAL, { id: session.id, decision: 'upheld' });
      assert.equal(again.status, 409);

      const review = object(
        object((await proctor.client.v3('GET', REVIEW, { id: session.id })).json, 'body').review,
        'review',
      );
      assert.equal(review.verdict, 'passed');
      assert.deepEqual(
        (review.history as Json[]).map((entry) => entry.verdict),
        ['violation', 'violation', 'passed'],
      );
      const after = object((await roomState(session.token)).appeal, 'appeal');
      assert.equal(after.status, 'overturned');
      assert.equal(after.comment, 'A family member, not help.');

      await runDueJobs(server, dialect, clock);
      const decisionMail = smtp.messages.find((message) =>
        message.subject?.startsWith('Die Entscheidung über Ihren Einspruch'),
      );
      assert.ok(decisionMail !== undefined, 'the candidate is told of the decision, in German');
      assert.ok(decisionMail.text?.includes('das Urteil aufgehoben'), decisionMail.text);
      assert.ok(decisionMail.text?.includes('A family member, not help.'), decisionMail.text);
      assert.ok(decisionMail.text?.includes(`${PUBLIC_URL}/room/${session.token}`), decisionMail.text);
      const [appealed] = receiver.of('student_session.appealed');
      assert.deepEqual(object(appealed?.data, 'data'), {
        student_session_id: session.id,
        exam_id: exam,
        token: session.token,
        verdict: 'violation',
        appeal_status: 'open',
        submitted_at: new Date(clock.now()).toISOString(),
        files_count: 1,
      });
      const [decidedHook] = receiver.of('student_session.appeal_decided');
      assert.deepEqual(object(decidedHook?.data, 'data'), {
        student_session_id: session.id,
        exam_id: exam,
        token: session.token,
        appeal_status: 'overturned',
        appealed_verdict: 'violation',
        verdict: 'passed',
        decided_by: second.id,
        decided_at: new Date(clock.now()).toISOString(),
      });
      assert.ok(
        receiver
          .of('student_session.reviewed')
          .some((body) => object(body.data, 'data').verdict === 'passed'),
      );

      // The report carries the appeal, in English and in Arabic.
      const english = await proctor.client.v3('GET', '/student_sessions/:id/report.pdf', { id: session.id });
      assert.equal(english.status, 200, english.text);
      const text = pdfPages(english.bytes).join('\n');
      for (const expected of [
        'Appeal',
        'Overturned: the verdict became Passed',
        'My sister walked in by mistake.',
        'note.pdf',
        'A family member, not help.',
      ]) {
        assert.ok(text.includes(expected), `the report shows "${expected}":\n${text}`);
      }
      const arabic = await proctor.client.v3('GET', '/student_sessions/:id/report.pdf', {
        id: session.id,
        language: 'ar',
      });
      assert.equal(arabic.status, 200, arabic.text);
      const arabicText = pdfPages(arabic.bytes)
        .join('\n')
        .replace(/[\u200e\u200f\u202a-\u202e\u2066-\u2069]/gu, '');
      for (const expected of ['الطعن', 'بيان المرشح', 'My sister walked in by mistake.']) {
        assert.ok(arabicText.includes(expected), `the Arabic report shows "${expected}":\n${arabicText}`);
      }

      const audit = await server.app.database.db
        .selectFrom('audit_events')
        .select(['action', 'user_id', 'status'])
        .where('target_id', '=', session.id)
        .where('action', 'in', ['appeal_submitted', 'appeal_decided'])
        .orderBy('id')
        .execute();
      assert.deepEqual(
        audit.map((row) => ({ ...row })),
        [
          { action: 'appeal_submitted', user_id: null, status: 201 },
          { action: 'appeal_decided', user_id: second.id, status: 200 },
        ],
      );
    });

    it('keeps the verdict when the appeal is upheld, in the candidate’s Arabic notice too', async () => {
      const session = await finishedSession('ar');
      assert.equal((await verdict(first, session.id, 'suspicious')).status, 200);
      await runDueJobs(server, dialect, clock);
      assert.equal(smtp.messages[0]?.subject, 'نتيجة مراجعة امتحانك: Öffentliches Recht');
      assert.ok(smtp.messages[0]?.html?.includes('dir="rtl"'));
      appealIn(await postAppeal(session.token, { statement: 'I looked away to think.' }), 201);
      const upheld = appealIn(await owner.client.v3('PUT', APPEAL, { id: session.id, decision: 'upheld' }));
      assert.equal(upheld.status, 'upheld');
      assert.equal(upheld.decision_review_id, null);
      await runDueJobs(server, dialect, clock);
      const decisionMail = smtp.messages.at(-1);
      assert.equal(decisionMail?.subject, 'القرار بشأن اعتراضكم: Öffentliches Recht');
      assert.ok(decisionMail.text?.includes('وأيّد الحكم'), decisionMail.text);
      assert.ok(decisionMail.html?.includes('dir="rtl"'));
      // A verdict changed after the appeal offers no second appeal, so no second notice goes out.
      const sent = smtp.messages.length;
      assert.equal((await verdict(first, session.id, 'passed')).status, 200);
      assert.equal((await verdict(first, session.id, 'suspicious')).status, 200);
      await runDueJobs(server, dialect, clock);
      assert.equal(smtp.messages.length, sent, 'no notice after the appeal');
      const review = object(
        object((await owner.client.v3('GET', REVIEW, { id: session.id })).json, 'body').review,
        'review',
      );
      assert.equal(review.verdict, 'suspicious');
    });

    it('answers 409 once the appeal period is over, and 201 on its last day', async () => {
      const late = await finishedSession();
      const onTime = await finishedSession();
      assert.equal((await verdict(first, late.id, 'suspicious')).status, 200);
      assert.equal((await verdict(first, onTime.id, 'suspicious')).status, 200);
      clock.current += 14 * DAY;
      appealIn(await postAppeal(onTime.token, { statement: 'Just in time' }), 201);
      clock.current += 1;
      const closed = await postAppeal(late.token, { statement: 'Too late' });
      assert.equal(closed.status, 409, closed.text);
      assert.equal((await roomState(late.token)).open, false);
    });

    it('answers 409 for a passed verdict and a violation still waiting for its second reviewer', async () => {
      const passed = await finishedSession();
      assert.equal((await verdict(first, passed.id, 'passed')).status, 200);
      assert.equal((await postAppeal(passed.token, { statement: 'Why not' })).status, 409);
      await server.app.database.db
        .updateTable('institutes')
        .set({ second_review_required: true })
        .where('id', '=', instituteId)
        .execute();
      try {
        const pending = await finishedSession();
        assert.equal((await verdict(first, pending.id, 'violation')).status, 200);
        assert.equal((await postAppeal(pending.token, { statement: 'Wait' })).status, 409);
        // Confirmed by the second reviewer: final, so appealable, and the confirmer may not decide.
        assert.equal((await verdict(second, pending.id, 'violation')).status, 200);
        appealIn(await postAppeal(pending.token, { statement: 'Now' }), 201);
        const own = await second.client.v3('PUT', APPEAL, { id: pending.id, decision: 'upheld' });
        assert.equal(own.status, 422, own.text);
        appealIn(await first.client.v3('PUT', APPEAL, { id: pending.id, decision: 'upheld' }));
      } finally {
        await server.app.database.db
          .updateTable('institutes')
          .set({ second_review_required: false })
          .where('id', '=', instituteId)
          .execute();
      }
    });

    it('refuses a missing or too long statement, too many files and a file type not accepted', async () => {
      const session = await finishedSession();
      assert.equal((await verdict(first, session.id, 'suspicious')).status, 200);
      const empty = await postAppeal(session.token, { statement: '   ' });
      assert.equal(empty.status, 422, empty.text);
      assert.deepEqual(empty.json, missing('statement'));
      const long = await postAppeal(session.token, { statement: 'x'.repeat(10_001) });
      assert.equal(long.status, 422, long.text);
      const exe = await postAppeal(session.token, { statement: 'File' }, [
        {
          field: 'files',
          fileName: 'x.exe',
          contentType: 'application/octet-stream',
          bytes: Buffer.from('MZ\x90\x00binary'),
        },
      ]);
      assert.equal(exe.status, 415, exe.text);
      // Nothing was kept by the refusals: the appeal is still open to the candidate.
      assert.equal((await roomState(session.token)).open, true);
    });

    it('answers 404 for an unknown room token, and for a session without an appeal', async () => {
      const unknown = await postAppeal('0'.repeat(32), { statement: 'Hello' });
      assert.equal(unknown.status, 404);
      assert.deepEqual(unknown.json, { error: "Couldn't find the exam room" });
      const session = await finishedSession();
      const none = await owner.client.v3('GET', APPEAL, { id: session.id });
      assert.equal(none.status, 404);
      assert.deepEqual(none.json, {
        error: `Couldn't find Appeal for Student Session with 'id'=${session.id}`,
      });
      const put = await second.client.v3('PUT', APPEAL, { id: session.id, decision: 'upheld' });
      assert.equal(put.status, 404);
      const hidden = await outsider.client.v3('GET', APPEAL, { id: session.id });
      assert.deepEqual(hidden.json, notFound('Student Session', session.id));
    });

    it('lists sessions with an open appeal first in the review queue', async () => {
      const answer = await second.client.v3('GET', '/exams/:exam_id/review_queue', { exam_id: exam });
      assert.equal(answer.status, 200, answer.text);
      const queue = object(answer.json, 'body').review_queue as Json[];
      const statuses = queue.map((entry) => entry.appeal_status);
      assert.equal(statuses[0], 'open');
      const firstOther = statuses.findIndex((status) => status !== 'open');
      assert.ok(
        firstOther > 0 && statuses.slice(firstOther).every((status) => status !== 'open'),
        String(statuses),
      );
      assert.ok(statuses.includes('overturned') && statuses.includes('upheld'));
    });

    it('takes a console decision only with the session cookie and its CSRF token', async () => {
      const session = await finishedSession();
      assert.equal((await verdict(first, session.id, 'suspicious')).status, 200);
      appealIn(await postAppeal(session.token, { statement: 'From the console' }), 201);
      const third = await staffUser(server, instituteId, 'reviewer');
      const browser = await signIn(server, third.email);
      const path = `/student_sessions/${session.id}/appeal`;
      const body = { decision: 'overturned' };
      const noCsrf = await consoleV3(server, browser, 'PUT', path, { body });
      assert.equal(noCsrf.status, 403);
      const wrongCsrf = await consoleV3(server, browser, 'PUT', path, { body, csrf: 'x'.repeat(43) });
      assert.equal(wrongCsrf.status, 403);
      assert.equal(appealIn(await consoleV3(server, browser, 'GET', path)).status, 'open');
      const decided = appealIn(await consoleV3(server, browser, 'PUT', path, { body, csrf: browser.csrf }));
      assert.equal(decided.status, 'overturned');
      assert.equal(object(decided.decided_by, 'decided_by').id, third.id);
    });

    it('hands the appeal files back for removal when the session record is deleted', async () => {
      const session = await finishedSession();
      assert.equal((await verdict(first, session.id, 'suspicious')).status, 200);
      appealIn(
        await postAppeal(session.token, { statement: 'With a file' }, [
          { field: 'files', fileName: 'proof.png', contentType: 'image/png', bytes: SAMPLE.png },
        ]),
        201,
      );
      const { db } = server.app.database;
      const [file] = await db
        .selectFrom('appeal_files')
        .innerJoin('appeals', 'appeals.id', 'appeal_files.appeal_id')
        .select('appeal_files.file_id')
        .where('appeals.student_session_id', '=', session.id)
        .execute();
      assert.ok(file !== undefined);
      // A finished session is archived through the API; its record goes only on a purge, so the
      // repository's deletion is exercised directly.
      const freed = await db.transaction().execute((trx) => deleteStudentSession(trx, session.id));
      assert.ok(freed.includes(file.file_id), String(freed));
      await server.app.services.files.remove(freed);
      assert.deepEqual(
        await db.selectFrom('appeals').select('id').where('student_session_id', '=', session.id).execute(),
        [],
      );
      assert.deepEqual(
        await db.selectFrom('files').select('id').where('id', '=', file.file_id).execute(),
        [],
      );
    });

    it('answers 403 to unsigned and wrongly signed V3 requests', async () => {
      const session = await finishedSession();
      const unsigned = await owner.client.v3('GET', APPEAL, { id: session.id }, { unsigned: true });
      assert.equal(unsigned.status, 403);
      assert.deepEqual(unsigned.json, NOT_AUTHORIZED);
      const forged = await second.client.v3(
        'PUT',
        APPEAL,
        { id: session.id, decision: 'upheld' },
        { signature: 'f'.repeat(64) },
      );
      assert.equal(forged.status, 403);
    });
  });
}
