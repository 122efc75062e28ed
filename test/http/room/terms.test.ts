/**
 * The exam's terms in the candidate room (docs/room.md "Terms"): the room view carries them, an
 * exam with terms starts only with `terms_accepted: true`, and the acceptance is kept with its time
 * and the SHA-256 of the text accepted, shown to staff as `terms_accepted_at`.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { addCandidate } from '../../helpers/candidates.ts';
import { type HttpAnswer, httpRequest } from '../../helpers/http.ts';
import { pdfPages } from '../../helpers/pdf.ts';
import { object } from '../../helpers/json.ts';
import { DIALECTS, startTestServer, TestClock, type TestServer } from '../../helpers/server.ts';
import type { Scalar } from '../../helpers/signing.ts';

type Json = Record<string, unknown>;
type TestUser = Awaited<ReturnType<TestServer['user']>>;

/** Plain text with a line break, markup-like characters and a non-ASCII letter: kept as typed. */
const TERMS = 'I work alone & keep my camera on.\n<b>No</b> phones — für alle.';
const NOT_ACCEPTED = { error: "Param is missing or the value is empty: 'terms_accepted'" };

function sha256(text: string): string {
  return crypto.createHash('sha256').update(text, 'utf8').digest('hex');
}

for (const dialect of DIALECTS) {
  describe(`terms in the candidate room [${dialect}]`, () => {
    const clock = new TestClock(Math.floor(Date.now() / 1000) * 1000);
    let server: TestServer;
    let owner: TestUser;
    let students = 0;

    before(async () => {
      server = await startTestServer(dialect, { clock });
      owner = await server.user(await server.institute(), 'teacher');
    });

    after(async () => {
      await server.close();
    });

    async function createExam(params: Record<string, Scalar>): Promise<number> {
      const answer = await owner.client.v3('POST', '/exams', {
        name: 'Terms exam',
        type: 'classroom',
        duration_minutes: 30,
        ...params,
      });
      assert.equal(answer.status, 201, answer.text);
      return object(object(answer.json, 'body').exam, 'exam').id as number;
    }

    async function createStudent(examId: number): Promise<{ id: number; token: string }> {
      students += 1;
      const { id, token } = await addCandidate(owner.client, examId, students);
      return { id, token };
    }

    function room(token: string, method: string, action = '', body?: Json | string): Promise<HttpAnswer> {
      const form = typeof body === 'string';
      return httpRequest({
        url: `${server.baseUrl}/api/room/${token}${action === '' ? '' : `/${action}`}`,
        method,
        ...(body === undefined
          ? {}
          : {
              headers: { 'content-type': form ? 'application/x-www-form-urlencoded' : 'application/json' },
              body: form ? body : JSON.stringify(body),
            }),
      });
    }

    async function record(id: number): Promise<Json> {
      const answer = await owner.client.v3('GET', '/student_sessions/:id', { id });
      assert.equal(answer.status, 200, answer.text);
      return object(object(answer.json, 'body').student, 'student');
    }

    /** The session's PDF report as text. */
    async function reportText(id: number): Promise<string> {
      const answer = await owner.client.v3('GET', '/student_sessions/:id/report.pdf', { id });
      assert.equal(answer.status, 200, answer.text);
      return pdfPages(answer.bytes).join('\n');
    }

    async function storedAcceptance(id: number): Promise<{ at: number | null; sha256: string | null }> {
      const row = await server.app.database.db
        .selectFrom('student_sessions')
        .select(['terms_accepted_at', 'terms_sha256'])
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      return {
        at: row.terms_accepted_at === null ? null : Number(row.terms_accepted_at),
        sha256: row.terms_sha256,
      };
    }

    function statusOf(answer: HttpAnswer): unknown {
      assert.equal(answer.status, 200, answer.text);
      return object(object(answer.json, 'body').session, 'session').status;
    }

    it('shows the terms as typed and refuses a start without their acceptance, with the exact 422', async () => {
      const exam = await createExam({ terms: TERMS });
      const student = await createStudent(exam);
      const view = await room(student.token, 'GET');
      assert.equal(view.status, 200, view.text);
      assert.equal(object(object(view.json, 'body').exam, 'exam').terms, TERMS);

      for (const body of [
        undefined,
        {},
        { terms_accepted: false },
        { terms_accepted: null },
        'terms_accepted=',
      ]) {
        const answer = await room(student.token, 'POST', 'start', body);
        assert.equal(answer.status, 422, `${JSON.stringify(body)}: ${answer.text}`);
        assert.deepEqual(answer.json, NOT_ACCEPTED, JSON.stringify(body));
      }
      const bad = await room(student.token, 'POST', 'start', { terms_accepted: 'maybe' });
      assert.equal(bad.status, 422, bad.text);
      assert.deepEqual(bad.json, {
        error: "'terms_accepted':['must be one of true, false, 1, 0']",
        errors: { terms_accepted: ['must be one of true, false, 1, 0'] },
      });

      assert.equal(statusOf(await room(student.token, 'GET')), 'registered', 'not started');
      assert.deepEqual(await storedAcceptance(student.id), { at: null, sha256: null });
      assert.equal((await record(student.id)).terms_accepted_at, null);
    });

    it('starts with terms_accepted true and keeps the time and the SHA-256 of the text accepted', async () => {
      const exam = await createExam({ terms: TERMS });
      const student = await createStudent(exam);
      clock.current += 1000;
      const acceptedAt = clock.current;
      assert.equal(
        statusOf(await room(student.token, 'POST', 'start', { terms_accepted: true })),
        'exam_started',
      );
      assert.deepEqual(await storedAcceptance(student.id), { at: acceptedAt, sha256: sha256(TERMS) });
      const shown = await record(student.id);
      assert.equal(shown.terms_accepted_at, new Date(acceptedAt).toISOString());
      assert.equal(shown.start_time, new Date(acceptedAt).toISOString());
      // The PDF report has a line for it, the same time as the start's.
      const report = await reportText(student.id);
      const fact = (label: string) => new RegExp(`^\\s*${label}\\s{2,}(\\S.*?)\\s*$`, 'm').exec(report)?.[1];
      assert.ok(fact('Started') !== undefined, report);
      assert.equal(fact('Terms accepted'), fact('Started'), report);

      // A later edit of the exam's terms leaves what this candidate accepted as it was.
      const patched = await owner.client.v3('PATCH', '/exams/:id', { id: exam, terms: 'New terms' });
      assert.equal(patched.status, 200, patched.text);
      assert.deepEqual(await storedAcceptance(student.id), { at: acceptedAt, sha256: sha256(TERMS) });

      // A form body says the same as JSON.
      const other = await createStudent(exam);
      assert.equal(statusOf(await room(other.token, 'POST', 'start', 'terms_accepted=true')), 'exam_started');
      assert.equal((await storedAcceptance(other.id)).sha256, sha256('New terms'));
    });

    it('needs nothing for an exam without terms (none, or blank) and records no acceptance', async () => {
      const none = await createExam({});
      const blank = await createExam({ terms: '  \n ' });
      for (const exam of [none, blank]) {
        const student = await createStudent(exam);
        const view = await room(student.token, 'GET');
        assert.equal(object(object(view.json, 'body').exam, 'exam').terms, null);
        assert.equal(statusOf(await room(student.token, 'POST', 'start')), 'exam_started');
        assert.deepEqual(await storedAcceptance(student.id), { at: null, sha256: null });
        assert.equal((await record(student.id)).terms_accepted_at, null);
        assert.doesNotMatch(await reportText(student.id), /Terms accepted/);
      }
      // Sent anyway, the acceptance of terms that do not exist is not recorded either.
      const student = await createStudent(none);
      assert.equal(
        statusOf(await room(student.token, 'POST', 'start', { terms_accepted: true })),
        'exam_started',
      );
      assert.deepEqual(await storedAcceptance(student.id), { at: null, sha256: null });
    });

    it('judges the state first: a finished session answers 409 whether or not the terms were sent', async () => {
      const exam = await createExam({ terms: TERMS });
      const student = await createStudent(exam);
      assert.equal(
        statusOf(await room(student.token, 'POST', 'start', { terms_accepted: true })),
        'exam_started',
      );
      assert.equal(statusOf(await room(student.token, 'POST', 'finish')), 'exam_finished');
      const again = await room(student.token, 'POST', 'start');
      assert.equal(again.status, 409, again.text);
    });
  });
}
