import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { canonicalMessage } from '../../../src/http/auth/canonical.ts';
import { mergeParams, parseJsonParams, stringParams } from '../../../src/http/request-params.ts';
import { missing, NOT_AUTHORIZED, notFound } from '../../helpers/answers.ts';
import { V3_ACCEPT } from '../../helpers/client.ts';
import { type HttpAnswer, httpRequest } from '../../helpers/http.ts';
import { object } from '../../helpers/json.ts';
import { DIALECTS, startTestServer, type TestServer } from '../../helpers/server.ts';
import { hmac, nextNonce, type Scalar } from '../../helpers/signing.ts';
import { type Browser, consoleV3, signIn, staffUser } from '../staff/support.ts';

type Json = Record<string, unknown>;
type TestUser = Awaited<ReturnType<TestServer['user']>>;

const PATH = '/exams/:exam_id/student_sessions/import';
const START = '2026-11-21T09:00:00.000Z';
const END = '2026-11-21T12:00:00.000Z';

let sequence = 0;

/** `count` rows with fresh emails, written with capitals (they are stored in lower case). */
function rows(count: number, prefix = 'student'): Json[] {
  sequence += 1;
  return Array.from({ length: count }, (_, index) => ({
    name: `Student ${index + 1}`,
    email: `${prefix}${sequence}.${index + 1}@Example.ORG`,
  }));
}

for (const dialect of DIALECTS) {
  describe(`POST /api/v3/exams/:exam_id/student_sessions/import [${dialect}]`, () => {
    let server: TestServer;
    let instituteId: number;
    let owner: TestUser & { email: string };
    let browser: Browser;
    let proctor: TestUser;
    let otherTeacher: TestUser;
    let outsider: TestUser;

    before(async () => {
      server = await startTestServer(dialect);
      instituteId = await server.institute();
      owner = await staffUser(server, instituteId, 'teacher');
      browser = await signIn(server, owner.email);
      proctor = await server.user(instituteId, 'proctor');
      otherTeacher = await server.user(instituteId, 'teacher');
      outsider = await server.user(await server.institute(), 'administrator');
    });

    after(() => server.close());

    async function createExam(): Promise<number> {
      const answer = await owner.client.v3('POST', '/exams', {
        name: 'Import exam',
        type: 'classroom',
        duration_minutes: 60,
        start_time: START,
        end_time: END,
      });
      assert.equal(answer.status, 201, answer.text);
      return Number(object(object(answer.json, 'body').exam, 'exam').id);
    }

    /** The import as the console sends it: the staff cookie, the CSRF header, `students` as a JSON array. */
    function importAsConsole(examId: number, body: Json, csrf: string | null = browser.csrf) {
      return consoleV3(server, browser, 'POST', `/exams/${examId}/student_sessions/import`, {
        body,
        csrf: csrf ?? undefined,
      });
    }

    /** A signed JSON import whose `students` is a JSON array (signed as Ruby writes it). */
    function importSigned(user: TestUser, examId: number, body: Json): Promise<HttpAnswer> {
      const fields = { ...body, timestamp: String(Date.now()), nonce: nextNonce() };
      const unsigned = JSON.stringify(fields);
      const signature = hmac(
        user.credentials.secretKey,
        canonicalMessage(
          mergeParams(parseJsonParams(unsigned), stringParams({ exam_id: String(examId) })).signing,
        ),
      );
      return httpRequest({
        url: `${server.baseUrl}/api/v3/exams/${examId}/student_sessions/import`,
        method: 'POST',
        headers: {
          accept: V3_ACCEPT,
          authorization: `Token token=${user.credentials.apiToken}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify({ ...fields, signature }),
      });
    }

    async function sessionCount(examId: number): Promise<number> {
      const row = await server.app.database.db
        .selectFrom('student_sessions')
        .select((eb) => eb.fn.countAll<number>().as('count'))
        .where('exam_id', '=', examId)
        .executeTakeFirstOrThrow();
      return Number(row.count);
    }

    it('creates 500 rows in one request and answers 201 with the count and the records in row order', async () => {
      const exam = await createExam();
      const sent = rows(500);
      const started = performance.now();
      const answer = await importAsConsole(exam, { students: sent });
      const elapsed = performance.now() - started;
      assert.equal(answer.status, 201, answer.text.slice(0, 500));
      const body = object(answer.json, 'body');
      assert.deepEqual(Object.keys(body), ['dry_run', 'count', 'students', 'ignored_fields']);
      assert.equal(body.dry_run, false);
      assert.equal(body.count, 500);
      assert.deepEqual(body.ignored_fields, []);
      const students = body.students as Json[];
      assert.deepEqual(
        students.map((student) => student.email),
        sent.map((row) => String(row.email).toLowerCase()),
      );
      const first = object(students[0], 'first');
      assert.equal(first.status, 'registered');
      assert.equal(first.exam_id, exam);
      assert.equal(first.attempt, 0);
      assert.match(String(first.token), /^[0-9a-f]{32}$/);
      assert.equal('is_email_sent' in first, false, 'the created records are those of the single create');
      assert.equal(new Set(students.map((student) => student.token)).size, 500);
      assert.equal(await sessionCount(exam), 500);
      const listed = await owner.client.v3('GET', '/exams/:exam_id/student_sessions', {
        exam_id: exam,
        limit: 1,
      });
      assert.equal(listed.headers['x-pagination-item-count'], '500');
      assert.ok(elapsed < 1500, `500 rows took ${Math.round(elapsed)} ms`);
    });

    it('answers 422 with every bad row (1-based) and its first problem, and creates nothing', async () => {
      const exam = await createExam();
      const taken = rows(1, 'taken');
      assert.equal((await importAsConsole(exam, { students: taken })).status, 201);
      const good = rows(3);
      const answer = await importAsConsole(exam, {
        students: [
          good[0],
          { email: 'no-name@example.org' },
          { name: 'No email' },
          { name: 'Bad email', email: 'not an email' },
          'a text, not a row',
          { name: 'Early', email: 'early@example.org', open_time: '2026-11-21T08:00:00Z' },
          { name: 'Second first', email: 'gap@example.org', attempt: 1 },
          { ...taken[0], name: 'Again' },
          good[1],
          { ...good[1], name: 'Twice in the file' },
          { name: 'Bad flag', email: 'flag@example.org', skip_requirements: 'maybe' },
          { name: 'No resource', email: 'lti@example.org', lti_resource_id: 987654321 },
          good[2],
        ],
      });
      assert.equal(answer.status, 422, answer.text);
      assert.equal(answer.headers['content-type'], 'application/json; charset=utf-8');
      assert.deepEqual(answer.json, {
        error: '10 of 13 rows are invalid: nothing was imported',
        row_errors: [
          { row: 2, field: 'name', message: 'is missing or empty' },
          { row: 3, field: 'email', message: 'is missing or empty' },
          { row: 4, field: 'email', message: 'is invalid' },
          { row: 5, field: null, message: 'must be an object' },
          { row: 6, field: 'open_time', message: 'must be on or after the exam start_time' },
          { row: 7, field: 'attempt', message: 'must be 0 for the first attempt of this email' },
          { row: 8, field: 'email', message: 'has already been taken' },
          { row: 10, field: 'email', message: 'has already been taken by row 9' },
          { row: 11, field: 'skip_requirements', message: 'must be one of true, false, 1, 0' },
          { row: 12, field: 'lti_resource_id', message: "is not an LTI resource of the exam's institute" },
        ],
      });
      assert.equal(await sessionCount(exam), 1, 'only the session that was there before');
    });

    it('checks only with dry_run: 200 with the values each row would get, nothing created', async () => {
      const exam = await createExam();
      const answer = await importAsConsole(exam, {
        dry_run: true,
        students: [
          {
            first_name: ' Ada ',
            last_name: 'Lovelace',
            email: ' Ada@Example.org ',
            student_id: 'S-1',
            nickname: 'Ada',
          },
          { name: 'Ada again', email: 'ada@example.org', attempt: 1 },
          { name: 'Named', first_name: 'Not', last_name: 'Used', email: 'named@example.org' },
        ],
      });
      assert.equal(answer.status, 200, answer.text);
      assert.deepEqual(answer.json, {
        dry_run: true,
        count: 3,
        rows: [
          { row: 1, name: 'Ada Lovelace', email: 'ada@example.org', attempt: 0 },
          { row: 2, name: 'Ada again', email: 'ada@example.org', attempt: 1 },
          { row: 3, name: 'Named', email: 'named@example.org', attempt: 0 },
        ],
        ignored_fields: ['first_name', 'last_name', 'nickname', 'student_id'],
      });
      assert.equal(await sessionCount(exam), 0);

      const refused = await importAsConsole(exam, { dry_run: true, students: [{ name: 'x', email: 'bad' }] });
      assert.equal(refused.status, 422);
      assert.deepEqual(object(refused.json, 'body').row_errors, [
        { row: 1, field: 'email', message: 'is invalid' },
      ]);
    });

    it('follows the attempt rule: a second attempt may follow the first in the file or in the exam', async () => {
      const exam = await createExam();
      const first = await importAsConsole(exam, { students: [{ name: 'Bo', email: 'bo@example.org' }] });
      assert.equal(first.status, 201, first.text);
      const answer = await importAsConsole(exam, {
        students: [
          { name: 'Bo', email: 'BO@example.org', attempt: 1 },
          { name: 'Bo', email: 'bo@example.org', attempt: 2 },
          { name: 'Cy', email: 'cy@example.org' },
          { name: 'Cy', email: 'cy@example.org', attempt: 1 },
        ],
      });
      assert.equal(answer.status, 201, answer.text);
      const students = object(answer.json, 'body').students as Json[];
      assert.deepEqual(
        students.map((student) => [student.email, student.attempt]),
        [
          ['bo@example.org', 1],
          ['bo@example.org', 2],
          ['cy@example.org', 0],
          ['cy@example.org', 1],
        ],
      );
      const again = await importAsConsole(exam, {
        students: [{ name: 'Cy', email: 'cy@example.org', attempt: 1 }],
      });
      assert.deepEqual(object(again.json, 'body').row_errors, [
        { row: 1, field: 'email', message: 'has already been taken' },
      ]);
    });

    it('skips or updates students already registered when `existing` says so, listing each row’s action', async () => {
      const exam = await createExam();
      const first = await importAsConsole(exam, {
        students: [
          { name: 'Ann Old', email: 'ann@example.org', external_id: 'A-1' },
          { name: 'Ben', email: 'ben@example.org' },
        ],
      });
      assert.equal(first.status, 201, first.text);
      const [ann] = object(first.json, 'body').students as Json[];
      const file = [
        { name: 'Ann New', email: 'ANN@example.org', external_id: 'A-2' },
        { name: 'Cleo', email: 'cleo@example.org' },
        { name: 'Ben', email: 'ben@example.org' },
      ];

      // By default the file is refused whole, as before (no new fields in the answer).
      const refused = await importAsConsole(exam, { students: file });
      assert.equal(refused.status, 422, refused.text);
      assert.deepEqual(object(refused.json, 'body').row_errors, [
        { row: 1, field: 'email', message: 'has already been taken' },
        { row: 3, field: 'email', message: 'has already been taken' },
      ]);

      // The dry run lists what each row will do.
      const preview = await importAsConsole(exam, { students: file, existing: 'skip', dry_run: true });
      assert.equal(preview.status, 200, preview.text);
      assert.deepEqual(preview.json, {
        dry_run: true,
        count: 1,
        updated: 0,
        skipped: 2,
        rows: [
          { row: 1, name: 'Ann New', email: 'ann@example.org', attempt: 0, action: 'skip' },
          { row: 2, name: 'Cleo', email: 'cleo@example.org', attempt: 0, action: 'create' },
          { row: 3, name: 'Ben', email: 'ben@example.org', attempt: 0, action: 'skip' },
        ],
        ignored_fields: [],
      });
      const updating = await importAsConsole(exam, { students: file, existing: 'update', dry_run: true });
      assert.deepEqual(
        (object(updating.json, 'body').rows as Json[]).map((row) => row.action),
        ['update', 'create', 'update'],
      );
      assert.equal(await sessionCount(exam), 2);

      // Skip: only the new student is created; the registered one keeps her name.
      const skipped = await importAsConsole(exam, { students: file, existing: 'skip' });
      assert.equal(skipped.status, 201, skipped.text);
      const skippedBody = object(skipped.json, 'body');
      assert.equal(skippedBody.count, 1);
      assert.equal(skippedBody.updated, 0);
      assert.equal(skippedBody.skipped, 2);
      assert.deepEqual(
        (skippedBody.students as Json[]).map((student) => student.email),
        ['cleo@example.org'],
      );
      const stored = async () =>
        object(
          object(
            (await owner.client.v3('GET', '/student_sessions/:id', { id: Number(ann?.id) })).json,
            'body',
          ).student,
          'student',
        );
      assert.equal((await stored()).name, 'Ann Old');

      // Update: the registered sessions take the file's fields; Cleo is now registered too.
      const updated = await importAsConsole(exam, { students: file, existing: 'update' });
      assert.equal(updated.status, 201, updated.text);
      const updatedBody = object(updated.json, 'body');
      assert.equal(updatedBody.count, 0);
      assert.equal(updatedBody.updated, 3);
      assert.equal(updatedBody.skipped, 0);
      const ann2 = await stored();
      assert.equal(ann2.name, 'Ann New');
      assert.equal(ann2.external_id, 'A-2');
      assert.equal(ann2.token, ann?.token, 'the same session, its room link unchanged');
      assert.equal(await sessionCount(exam), 3);

      // A row twice in the file is still refused, and an unknown choice is named.
      const twice = await importAsConsole(exam, { students: [file[0], file[0]], existing: 'skip' });
      assert.deepEqual(object(twice.json, 'body').row_errors, [
        { row: 2, field: 'email', message: 'has already been taken by row 1' },
      ]);
      const unknown = await importAsConsole(exam, { students: file, existing: 'overwrite' });
      assert.equal(unknown.status, 422, unknown.text);
      assert.deepEqual(object(unknown.json, 'body').errors, {
        existing: ['must be one of refuse, skip, update'],
      });
    });

    it('never imports half a file when a single create races it for one of its emails', async () => {
      for (let round = 0; round < 4; round += 1) {
        const exam = await createExam();
        const sent = rows(300);
        const contested = sent[150 + round * 40] as Json;
        const [imported, single] = await Promise.all([
          importAsConsole(exam, { students: sent }),
          owner.client.v3('POST', '/exams/:exam_id/student_sessions', {
            exam_id: exam,
            name: 'First come',
            email: String(contested.email),
          }),
        ]);
        const count = await sessionCount(exam);
        if (imported.status === 201) {
          assert.equal(single.status, 422, single.text);
          assert.equal(count, 300);
        } else {
          assert.equal(imported.status, 422, imported.text.slice(0, 300));
          assert.equal(single.status, 201, single.text);
          assert.deepEqual(object(imported.json, 'body').row_errors, [
            { row: 151 + round * 40, field: 'email', message: 'has already been taken' },
          ]);
          assert.equal(count, 1);
        }
      }
    });

    it('takes `students` as a JSON string in a signed form body, and as a signed JSON array', async () => {
      const exam = await createExam();
      const asForm = await owner.client.v3(
        'POST',
        PATH,
        { exam_id: exam, students: JSON.stringify(rows(2)), dry_run: '0' },
        { as: 'form' },
      );
      assert.equal(asForm.status, 201, asForm.text);
      assert.equal(object(asForm.json, 'body').count, 2);
      const asArray = await importSigned(owner, exam, { students: rows(3) });
      assert.equal(asArray.status, 201, asArray.text);
      assert.equal(object(asArray.json, 'body').count, 3);
      assert.equal(await sessionCount(exam), 5);
    });

    it('refuses a missing, empty, unreadable or oversized `students` with 422 naming it', async () => {
      const exam = await createExam();
      const call = (params: Record<string, Scalar>) =>
        owner.client.v3('POST', PATH, { exam_id: exam, ...params });
      assert.deepEqual((await call({})).json, missing('students'));
      assert.deepEqual((await call({ students: '[]' })).json, missing('students'));
      assert.deepEqual((await call({ students: '{"a":' })).json, {
        error: "'students':['is not valid JSON']",
        errors: { students: ['is not valid JSON'] },
      });
      assert.deepEqual((await call({ students: '{"name":"x"}' })).json, {
        error: "'students':['must be an array of student rows']",
        errors: { students: ['must be an array of student rows'] },
      });
      const tooMany = Array.from({ length: 5001 }, (_, index) => ({ email: `${index}@x.org` }));
      const answer = await call({ students: JSON.stringify(tooMany) });
      assert.deepEqual(answer.json, {
        error: "'students':['must hold at most 5000 rows']",
        errors: { students: ['must hold at most 5000 rows'] },
      });
      assert.equal(await sessionCount(exam), 0);
    });

    it('imports 5 000 short rows sent as one JSON string within the 1 MB body limit', async () => {
      const exam = await createExam();
      const text = JSON.stringify(rows(5000, 'x'));
      assert.ok(Buffer.byteLength(text) < 512 * 1024, `${Buffer.byteLength(text)} bytes`);
      const answer = await owner.client.v3('POST', PATH, { exam_id: exam, students: text, dry_run: true });
      assert.equal(answer.status, 200, answer.text.slice(0, 300));
      assert.equal(object(answer.json, 'body').count, 5000);
    });

    it('records one audit event for the import', async () => {
      const exam = await createExam();
      assert.equal((await importAsConsole(exam, { students: rows(20) })).status, 201);
      const events = await server.app.database.db
        .selectFrom('audit_events')
        .select(['action', 'target_type', 'target_id', 'status'])
        .where('user_id', '=', owner.id)
        .where('target_id', '=', exam)
        .where('action', 'like', '%/import')
        .execute();
      assert.deepEqual(
        events.map((event) => ({ ...event })),
        [
          {
            action: 'POST /api/v3/exams/:exam_id/student_sessions/import',
            target_type: 'exams',
            target_id: exam,
            status: 201,
          },
        ],
      );
    });

    it('lets only managers import: 403 for a proctor, 404 for a teacher not on the exam and another institute', async () => {
      const exam = await createExam();
      const students = JSON.stringify(rows(2));
      const proctorAnswer = await proctor.client.v3('POST', PATH, { exam_id: exam, students });
      assert.equal(proctorAnswer.status, 403);
      assert.deepEqual(proctorAnswer.json, NOT_AUTHORIZED);
      for (const user of [otherTeacher, outsider]) {
        const answer = await user.client.v3('POST', PATH, { exam_id: exam, students });
        assert.equal(answer.status, 404);
        assert.deepEqual(answer.json, notFound('Exam', exam));
      }
      const missingExam = await owner.client.v3('POST', PATH, { exam_id: 987654321, students });
      assert.deepEqual(missingExam.json, notFound('Exam', 987654321));
      assert.equal(await sessionCount(exam), 0);
    });

    it('refuses unsigned, wrongly signed and cookie requests without the CSRF header (403)', async () => {
      const exam = await createExam();
      const students = JSON.stringify(rows(2));
      const unsigned = await owner.client.v3('POST', PATH, { exam_id: exam, students }, { unsigned: true });
      const wrong = await owner.client.v3(
        'POST',
        PATH,
        { exam_id: exam, students },
        { signature: 'a'.repeat(64) },
      );
      const noCsrf = await importAsConsole(exam, { students: rows(2) }, null);
      const badCsrf = await importAsConsole(exam, { students: rows(2) }, 'not-the-token');
      for (const answer of [unsigned, wrong, noCsrf, badCsrf]) {
        assert.equal(answer.status, 403, answer.text);
        assert.deepEqual(answer.json, NOT_AUTHORIZED);
      }
      assert.equal(await sessionCount(exam), 0);
    });
  });
}
