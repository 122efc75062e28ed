import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CallOptions } from '../../helpers/client.ts';
import type { HttpAnswer } from '../../helpers/http.ts';
import { DIALECTS, startTestServer, TestClock, type TestServer } from '../../helpers/server.ts';
import type { Scalar } from '../../helpers/signing.ts';
import { object } from '../../helpers/json.ts';
import { missing, NOT_AUTHORIZED, notFound } from '../../helpers/answers.ts';

type Json = Record<string, unknown>;
type TestUser = Awaited<ReturnType<TestServer['user']>>;

const TAKEN = { error: "'email':['has already been taken']", errors: { email: ['has already been taken'] } };

function studentIn(answer: HttpAnswer): Json {
  const body = object(answer.json, 'body');
  assert.deepEqual(Object.keys(body), ['student'], answer.text);
  return object(body.student, 'student');
}

function idsIn(answer: HttpAnswer): unknown[] {
  assert.equal(answer.status, 200, answer.text);
  const body = object(answer.json, 'body');
  assert.deepEqual(Object.keys(body), ['students']);
  assert.ok(Array.isArray(body.students));
  return (body.students as unknown[]).map((item) => object(item, 'student').id);
}

/** Asserts the deprecation headers: `Deprecation: true` and a Link to the successor path. */
function assertDeprecated(answer: HttpAnswer, successor: string): void {
  assert.equal(answer.headers.deprecation, 'true', `Deprecation header on ${answer.status} ${answer.text}`);
  assert.equal(answer.headers.link, `<${successor}>; rel="successor-version"`);
}

async function createExam(user: TestUser, name: string): Promise<Json> {
  const answer = await user.client.v3('POST', '/exams', { name, type: 'classroom', duration_minutes: 60 });
  assert.equal(answer.status, 201, answer.text);
  return object(object(answer.json, 'body').exam, 'exam');
}

let sequence = 0;

async function createStudent(
  user: TestUser,
  examId: Scalar,
  params: Record<string, Scalar> = {},
): Promise<Json> {
  sequence += 1;
  const answer = await user.client.v3('POST', '/exams/:exam_id/student_sessions', {
    exam_id: examId,
    name: `Student ${sequence}`,
    email: `deprecated${sequence}@example.org`,
    ...params,
  });
  assert.equal(answer.status, 201, answer.text);
  return studentIn(answer);
}

for (const dialect of DIALECTS) {
  describe(`V3 deprecated exam endpoints [${dialect}]`, () => {
    const clock = new TestClock(Math.floor(Date.now() / 1000) * 1000);
    let server: TestServer;
    let instituteId: number;
    let teacher: TestUser;
    let proctor: TestUser;
    let outsideAdmin: TestUser;
    let exam: Json;
    let otherExam: Json;
    let first: Json;
    let second: Json;
    let elsewhere: Json;

    before(async () => {
      server = await startTestServer(dialect, { clock });
      instituteId = await server.institute();
      teacher = await server.user(instituteId, 'teacher');
      proctor = await server.user(instituteId, 'proctor');
      outsideAdmin = await server.user(await server.institute(), 'administrator');
      exam = await createExam(teacher, 'Deprecated');
      otherExam = await createExam(teacher, 'Other');
      first = await createStudent(teacher, exam.id as number, { name: 'First' });
      second = await createStudent(teacher, exam.id as number, { name: 'Second' });
      elsewhere = await createStudent(teacher, otherExam.id as number, { name: 'Elsewhere' });
    });

    after(async () => {
      await server.close();
    });

    describe('GET /api/v3/exams/:id/index_students', () => {
      function index(user: TestUser, id: Scalar, params: Record<string, Scalar> = {}) {
        return user.client.v3('GET', '/exams/:id/index_students', { id, ...params });
      }

      it('answers like GET /exams/:exam_id/student_sessions, with the deprecation headers', async () => {
        const id = exam.id as number;
        const answer = await index(teacher, id);
        const successor = await teacher.client.v3('GET', '/exams/:exam_id/student_sessions', { exam_id: id });
        assert.equal(answer.status, 200, answer.text);
        assert.deepEqual(idsIn(answer), [first.id, second.id]);
        assert.deepEqual(answer.json, successor.json);
        for (const header of [
          'x-pagination-item-count',
          'x-pagination-page-count',
          'x-pagination-page',
          'x-pagination-limit',
        ]) {
          assert.equal(answer.headers[header], successor.headers[header], header);
        }
        assert.equal(answer.headers['x-pagination-item-count'], '2');
        assertDeprecated(answer, `/api/v3/exams/${id}/student_sessions`);
        assert.equal(successor.headers.deprecation, undefined, 'the successor is not deprecated');
      });

      it('filters, sorts and pages', async () => {
        const id = exam.id as number;
        const answer = await index(teacher, id, {
          sort: JSON.stringify([{ id: 'desc' }]),
          limit: 1,
          page: 2,
        });
        assert.deepEqual(idsIn(answer), [first.id]);
        assert.equal(answer.headers['x-pagination-page-count'], '2');
        const named = await index(teacher, id, { filter: JSON.stringify({ name: { eq: 'Second' } }) });
        assert.deepEqual(idsIn(named), [second.id]);
      });

      it('answers 404 Exam for an unknown or out-of-scope exam, still marked deprecated', async () => {
        const unknown = await index(teacher, 999999);
        assert.equal(unknown.status, 404, unknown.text);
        assert.deepEqual(unknown.json, notFound('Exam', 999999));
        assertDeprecated(unknown, '/api/v3/exams/999999/student_sessions');
        const hidden = await index(outsideAdmin, exam.id as number);
        assert.equal(hidden.status, 404, hidden.text);
        assert.deepEqual(hidden.json, notFound('Exam', exam.id as number));
      });
    });

    describe('GET /api/v3/exams/:id/show_student', () => {
      function showStudent(user: TestUser, id: Scalar, params: Record<string, Scalar>) {
        return user.client.v3('GET', '/exams/:id/show_student', { id, ...params });
      }

      it('answers like GET /student_sessions/:id, with the deprecation headers', async () => {
        const answer = await showStudent(teacher, exam.id as number, {
          student_session_id: second.id as number,
        });
        assert.equal(answer.status, 200, answer.text);
        const successor = await teacher.client.v3('GET', '/student_sessions/:id', {
          id: second.id as number,
        });
        assert.deepEqual(answer.json, successor.json);
        assert.equal(studentIn(answer).is_email_sent, false);
        assertDeprecated(answer, `/api/v3/student_sessions/${String(second.id)}`);
      });

      it('answers 404 Student Session for a session of another exam', async () => {
        const answer = await showStudent(teacher, exam.id as number, {
          student_session_id: elsewhere.id as number,
        });
        assert.equal(answer.status, 404, answer.text);
        assert.deepEqual(answer.json, notFound('Student Session', elsewhere.id as number));
        assertDeprecated(answer, `/api/v3/student_sessions/${String(elsewhere.id)}`);
      });

      it('answers 404 Student Session for an unknown session', async () => {
        const answer = await showStudent(teacher, exam.id as number, { student_session_id: 999999 });
        assert.equal(answer.status, 404, answer.text);
        assert.deepEqual(answer.json, notFound('Student Session', 999999));
      });

      it('answers 422 naming a missing student_session_id', async () => {
        const answer = await showStudent(teacher, exam.id as number, {});
        assert.equal(answer.status, 422, answer.text);
        assert.deepEqual(answer.json, missing('student_session_id'));
        assertDeprecated(answer, '/api/v3/student_sessions');
      });

      it('answers 404 Exam for an unknown exam', async () => {
        const answer = await showStudent(teacher, 999999, { student_session_id: first.id as number });
        assert.equal(answer.status, 404, answer.text);
        assert.deepEqual(answer.json, notFound('Exam', 999999));
      });

      it('lets a proctor of the institute read it', async () => {
        const answer = await showStudent(proctor, exam.id as number, {
          student_session_id: first.id as number,
        });
        assert.equal(answer.status, 200, answer.text);
        assert.equal(studentIn(answer).id, first.id);
      });
    });

    describe('GET /api/v3/exams/id/show_student (the literal path of api.md)', () => {
      function literal(user: TestUser, params: Record<string, Scalar>) {
        return user.client.v3('GET', '/exams/id/show_student', params);
      }

      it('is served by its own route, not as an exam whose id is "id"', () => {
        assert.ok(server.app.server.hasRoute({ method: 'GET', url: '/api/v3/exams/id/show_student' }));
      });

      it('answers like GET /student_sessions/:id for a session of any exam, with the deprecation headers', async () => {
        for (const student of [first, elsewhere]) {
          const answer = await literal(teacher, { student_session_id: student.id as number });
          assert.equal(answer.status, 200, answer.text);
          const successor = await teacher.client.v3('GET', '/student_sessions/:id', {
            id: student.id as number,
          });
          assert.deepEqual(answer.json, successor.json);
          assertDeprecated(answer, `/api/v3/student_sessions/${String(student.id)}`);
        }
      });

      it('reads student_session_id from a JSON body sent with the GET too', async () => {
        const answer = await literal(teacher, { student_session_id: second.id as number });
        assert.equal(studentIn(answer).id, second.id);
        const json = await teacher.client.v3(
          'GET',
          '/exams/id/show_student',
          { student_session_id: second.id as number },
          { as: 'json' },
        );
        assert.equal(json.status, 200, json.text);
        assert.equal(studentIn(json).id, second.id);
      });

      it('answers 404 Student Session for an unknown or out-of-scope session, alike', async () => {
        const unknown = await literal(outsideAdmin, { student_session_id: 999999 });
        const hidden = await literal(outsideAdmin, { student_session_id: first.id as number });
        assert.equal(unknown.status, 404, unknown.text);
        assert.deepEqual(unknown.json, notFound('Student Session', 999999));
        assert.equal(hidden.status, 404, hidden.text);
        assert.deepEqual(hidden.json, notFound('Student Session', first.id as number));
        assertDeprecated(hidden, `/api/v3/student_sessions/${String(first.id)}`);
      });

      it('answers 422 naming a missing student_session_id', async () => {
        const answer = await literal(teacher, {});
        assert.equal(answer.status, 422, answer.text);
        assert.deepEqual(answer.json, missing('student_session_id'));
      });
    });

    describe('POST /api/v3/exams/:id/add_student', () => {
      function addStudent(
        user: TestUser,
        id: Scalar,
        params: Record<string, Scalar>,
        options: CallOptions = {},
      ) {
        return user.client.v3('POST', '/exams/:id/add_student', { id, ...params }, options);
      }

      it('answers 201 like POST /exams/:exam_id/student_sessions (no is_email_sent), with the deprecation headers', async () => {
        const id = otherExam.id as number;
        const answer = await addStudent(teacher, id, {
          name: 'Added',
          email: 'Added@Example.org',
          individual_info: 'Room 9',
          skip_requirements: '1',
        });
        assert.equal(answer.status, 201, answer.text);
        const student = studentIn(answer);
        assert.equal(student.exam_id, id);
        assert.equal(student.email, 'added@example.org');
        assert.equal(student.individual_info, 'Room 9');
        assert.equal(student.skip_requirements, true);
        assert.equal(student.status, 'registered');
        assert.match(String(student.token), /^[0-9a-f]{32}$/);
        assert.ok(!Object.hasOwn(student, 'is_email_sent'), 'is_email_sent is absent from a create answer');
        assertDeprecated(answer, `/api/v3/exams/${id}/student_sessions`);
        const shown = await teacher.client.v3('GET', '/student_sessions/:id', { id: student.id as number });
        assert.deepEqual(studentIn(shown), { ...student, is_email_sent: false });
      });

      it('reads a form-encoded body', async () => {
        const answer = await addStudent(
          teacher,
          otherExam.id as number,
          { name: 'Form', email: 'form@example.org', is_individual_info_html: '0' },
          { as: 'form' },
        );
        assert.equal(answer.status, 201, answer.text);
        assert.equal(studentIn(answer).is_individual_info_html, false);
      });

      it("answers 422 'email':['has already been taken'] for a reused email without a new attempt", async () => {
        const answer = await addStudent(teacher, otherExam.id as number, {
          name: 'Again',
          email: 'added@example.org',
        });
        assert.equal(answer.status, 422, answer.text);
        assert.deepEqual(answer.json, TAKEN);
        assertDeprecated(answer, `/api/v3/exams/${String(otherExam.id)}/student_sessions`);
        const next = await addStudent(teacher, otherExam.id as number, {
          name: 'Again',
          email: 'added@example.org',
          attempt: 1,
        });
        assert.equal(next.status, 201, next.text);
        assert.equal(studentIn(next).attempt, 1);
      });

      it('answers 422 naming a missing name', async () => {
        const answer = await addStudent(teacher, otherExam.id as number, { email: 'nameless@example.org' });
        assert.equal(answer.status, 422, answer.text);
        assert.deepEqual(answer.json, missing('name'));
      });

      it('answers 403 to a proctor and 404 Exam to another institute', async () => {
        const refused = await addStudent(proctor, otherExam.id as number, {
          name: 'P',
          email: 'p@example.org',
        });
        assert.equal(refused.status, 403, refused.text);
        assert.deepEqual(refused.json, NOT_AUTHORIZED);
        const hidden = await addStudent(outsideAdmin, otherExam.id as number, {
          name: 'O',
          email: 'o@example.org',
        });
        assert.equal(hidden.status, 404, hidden.text);
        assert.deepEqual(hidden.json, notFound('Exam', otherExam.id as number));
      });
    });

    describe('DELETE /api/v3/exams/:id/delete_student', () => {
      function deleteStudent(user: TestUser, id: Scalar, params: Record<string, Scalar>) {
        return user.client.v3('DELETE', '/exams/:id/delete_student', { id, ...params });
      }

      function show(id: Scalar) {
        return teacher.client.v3('GET', '/student_sessions/:id', { id });
      }

      it('destroys a session without an end time: 200 {}, with the deprecation headers', async () => {
        const student = await createStudent(teacher, exam.id as number);
        const answer = await deleteStudent(teacher, exam.id as number, {
          student_session_id: student.id as number,
        });
        assert.equal(answer.status, 200, answer.text);
        assert.deepEqual(answer.json, {});
        assertDeprecated(answer, `/api/v3/student_sessions/${String(student.id)}`);
        const gone = await show(student.id as number);
        assert.equal(gone.status, 404, gone.text);
        assert.deepEqual(gone.json, notFound('Student Session', student.id as number));
      });

      it('archives a session that has an end time', async () => {
        const student = await createStudent(teacher, exam.id as number);
        await server.app.database.db
          .updateTable('student_sessions')
          .set({ end_time: clock.now(), status: 'exam_finished' })
          .where('id', '=', student.id as number)
          .execute();
        const answer = await deleteStudent(teacher, exam.id as number, {
          student_session_id: student.id as number,
        });
        assert.equal(answer.status, 200, answer.text);
        assert.deepEqual(answer.json, {});
        assert.equal(studentIn(await show(student.id as number)).archived, true);
        const listed = await teacher.client.v3('GET', '/exams/:id/index_students', { id: exam.id as number });
        assert.ok(!idsIn(listed).includes(student.id), 'hidden from index_students');
      });

      it('answers 404 Student Session for a session of another exam, and keeps it', async () => {
        const answer = await deleteStudent(teacher, exam.id as number, {
          student_session_id: elsewhere.id as number,
        });
        assert.equal(answer.status, 404, answer.text);
        assert.deepEqual(answer.json, notFound('Student Session', elsewhere.id as number));
        assert.equal((await show(elsewhere.id as number)).status, 200);
      });

      it('answers 404 Student Session for an unknown session and 422 for a missing student_session_id', async () => {
        const unknown = await deleteStudent(teacher, exam.id as number, { student_session_id: 999999 });
        assert.equal(unknown.status, 404, unknown.text);
        assert.deepEqual(unknown.json, notFound('Student Session', 999999));
        const absent = await deleteStudent(teacher, exam.id as number, {});
        assert.equal(absent.status, 422, absent.text);
        assert.deepEqual(absent.json, missing('student_session_id'));
      });

      it('answers 403 to a proctor and 404 Exam to another institute, keeping the session', async () => {
        const refused = await deleteStudent(proctor, exam.id as number, {
          student_session_id: first.id as number,
        });
        assert.equal(refused.status, 403, refused.text);
        assert.deepEqual(refused.json, NOT_AUTHORIZED);
        assertDeprecated(refused, `/api/v3/student_sessions/${String(first.id)}`);
        const hidden = await deleteStudent(outsideAdmin, exam.id as number, {
          student_session_id: first.id as number,
        });
        assert.equal(hidden.status, 404, hidden.text);
        assert.deepEqual(hidden.json, notFound('Exam', exam.id as number));
        assert.equal((await show(first.id as number)).status, 200);
      });
    });
  });
}
