import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CallOptions } from '../../helpers/client.ts';
import type { HttpAnswer } from '../../helpers/http.ts';
import { DIALECTS, startTestServer, type TestServer } from '../../helpers/server.ts';
import type { Scalar } from '../../helpers/signing.ts';
import { object } from '../../helpers/json.ts';
import { NOT_AUTHORIZED } from '../../helpers/answers.ts';

type Json = Record<string, unknown>;
type TestUser = Awaited<ReturnType<TestServer['user']>>;

/** The exam window every exam here gets, in epoch seconds. */
const START = Date.parse('2026-11-21T09:00:00Z') / 1000;
const END = Date.parse('2026-11-21T12:00:00Z') / 1000;

/** The V2 student session record's fields, in api.md's order plus `token`. */
const V2_STUDENT_FIELDS = [
  'student_id',
  'name',
  'email',
  'attempt',
  'exam_id',
  'status',
  'individual_info',
  'is_individual_info_html',
  'open_time',
  'start_time',
  'end_time',
  'token',
];

/** A V2 answer with this status and no body at all. */
function assertEmpty(answer: HttpAnswer, status: number): void {
  assert.equal(answer.status, status, answer.text);
  assert.equal(answer.text, '');
}

/** The record of a 200 add_student answer, checked for its exact keys and a 32-hex token. */
function addedRecord(answer: HttpAnswer): Json {
  assert.equal(answer.status, 200, answer.text);
  const body = object(answer.json, 'body');
  assert.deepEqual(Object.keys(body), ['student_session']);
  const record = object(body.student_session, 'student_session');
  assert.deepEqual(Object.keys(record), V2_STUDENT_FIELDS);
  assert.match(String(record.token), /^[0-9a-f]{32}$/);
  return record;
}

function shownRecords(answer: HttpAnswer): Json[] {
  assert.equal(answer.status, 200, answer.text);
  const body = object(answer.json, 'body');
  assert.deepEqual(Object.keys(body), ['student_session']);
  assert.ok(Array.isArray(body.student_session), 'student_session holds an array');
  return body.student_session.map((item) => object(item, 'record'));
}

for (const dialect of DIALECTS) {
  describe(`V2 students of an exam [${dialect}]`, () => {
    let server: TestServer;
    let instituteId: number;
    let teacher: TestUser;
    let colleague: TestUser;
    let proctor: TestUser;
    let auditor: TestUser;
    let outsider: TestUser;

    before(async () => {
      server = await startTestServer(dialect);
      instituteId = await server.institute();
      teacher = await server.user(instituteId, 'teacher');
      colleague = await server.user(instituteId, 'teacher');
      proctor = await server.user(instituteId, 'proctor');
      auditor = await server.user(instituteId, 'auditor');
      outsider = await server.user(await server.institute(), 'administrator');
    });

    after(async () => {
      await server.close();
    });

    /** Creates an exam through V2 with the shared window; returns its id. */
    async function createExam(user: TestUser = teacher, name = 'Students exam'): Promise<number> {
      const answer = await user.client.v2('POST', '/exams', {
        name,
        duration: 60,
        type: 'classroom',
        start_time: START,
        end_time: END,
      });
      assert.equal(answer.status, 201, answer.text);
      return object(answer.json, 'body').id as number;
    }

    function addStudent(
      user: TestUser,
      examId: Scalar,
      params: Record<string, Scalar>,
      options: CallOptions = {},
    ): Promise<HttpAnswer> {
      return user.client.v2('POST', '/exams/:id/add_student', { id: examId, ...params }, options);
    }

    function showStudents(user: TestUser, examId: Scalar): Promise<HttpAnswer> {
      return user.client.v2('GET', '/exams/:id/show_students', { id: examId });
    }

    function deleteStudent(
      user: TestUser,
      examId: Scalar,
      params: Record<string, Scalar>,
    ): Promise<HttpAnswer> {
      return user.client.v2('DELETE', '/exams/:id/delete_student', { id: examId, ...params });
    }

    /** The session as V3 shows it (archived ones too), or the 404 answer. */
    function showV3(id: Scalar): Promise<HttpAnswer> {
      return teacher.client.v3('GET', '/student_sessions/:id', { id });
    }

    async function studentIds(examId: number): Promise<unknown[]> {
      return shownRecords(await showStudents(teacher, examId)).map((record) => record.student_id);
    }

    describe('POST /api/exams/:id/add_student', () => {
      let examId: number;

      before(async () => {
        examId = await createExam();
      });

      it('answers 200 {student_session: record} with the defaults', async () => {
        const record = addedRecord(
          await addStudent(teacher, examId, { name: 'Ada', email: 'Ada@Example.org' }),
        );
        assert.ok(Number.isInteger(record.student_id), 'student_id is an integer');
        assert.deepEqual(record, {
          student_id: record.student_id,
          name: 'Ada',
          email: 'ada@example.org',
          attempt: 0,
          exam_id: examId,
          status: 'registered',
          individual_info: null,
          is_individual_info_html: false,
          open_time: null,
          start_time: null,
          end_time: null,
          token: record.token,
        });
      });

      it('keeps every V2 field: attempt, use_duration, open_time in epoch seconds, individual info', async () => {
        const first = addedRecord(await addStudent(teacher, examId, { name: 'Bo', email: 'bo@example.org' }));
        const openTime = START + 1800;
        const second = addedRecord(
          await addStudent(teacher, examId, {
            name: 'Bo again',
            email: 'bo@example.org',
            attempt: 1,
            use_duration: 0,
            open_time: openTime,
            individual_info: 'Room <b>4</b>',
            is_individual_info_html: 'true',
          }),
        );
        assert.notEqual(second.student_id, first.student_id);
        assert.deepEqual(second, {
          student_id: second.student_id,
          name: 'Bo again',
          email: 'bo@example.org',
          attempt: 1,
          exam_id: examId,
          status: 'registered',
          individual_info: 'Room <b>4</b>',
          is_individual_info_html: true,
          open_time: openTime,
          start_time: null,
          end_time: null,
          token: second.token,
        });
        const v3 = object(
          object((await showV3(second.student_id as number)).json, 'body').student,
          'student',
        );
        assert.equal(v3.use_duration, false);
        assert.equal(v3.open_time, new Date(openTime * 1000).toISOString());
      });

      it('reads use_duration false and a signed form body', async () => {
        const record = addedRecord(
          await addStudent(
            teacher,
            examId,
            { name: 'Cy', email: 'cy@example.org', use_duration: 'false', attempt: '0' },
            { as: 'form' },
          ),
        );
        const v3 = object(
          object((await showV3(record.student_id as number)).json, 'body').student,
          'student',
        );
        assert.equal(v3.use_duration, false);
        assert.equal(v3.attempt, 0);
      });

      describe('a failed save: 400 with Rails-style {errors}', () => {
        const cases: [string, Record<string, Scalar>, Json][] = [
          [
            'a taken email (any case)',
            { name: 'Ada', email: 'ADA@example.org' },
            { email: ['has already been taken'] },
          ],
          ['a missing name', { email: 'new1@example.org' }, { name: ["can't be blank"] }],
          ['a blank name', { name: '  ', email: 'new2@example.org' }, { name: ["can't be blank"] }],
          ['a missing email', { name: 'Nobody' }, { email: ["can't be blank"] }],
          ['an invalid email', { name: 'Nobody', email: 'not an email' }, { email: ['is invalid'] }],
          [
            'an open_time before the exam starts',
            { name: 'Early', email: 'early@example.org', open_time: START - 60 },
            { open_time: ['must be on or after the exam start_time'] },
          ],
          [
            'an open_time after the exam ends',
            { name: 'Late', email: 'late@example.org', open_time: END + 60 },
            { open_time: ['must be on or before the exam end_time'] },
          ],
          [
            'a first attempt that is not 0',
            { name: 'Skipper', email: 'skipper@example.org', attempt: 1 },
            { attempt: ['must be 0 for the first attempt of this email'] },
          ],
          [
            'an attempt more than one above the highest',
            { name: 'Ada', email: 'ada@example.org', attempt: 2 },
            { attempt: ['must be 1, one above the highest attempt of this email'] },
          ],
          [
            'a use_duration that is no boolean',
            { name: 'Odd', email: 'odd@example.org', use_duration: 'maybe' },
            { use_duration: ['must be one of true, false, 1, 0'] },
          ],
        ];
        for (const [what, params, errors] of cases) {
          it(`answers it to ${what}, and adds nobody`, async () => {
            const before = await studentIds(examId);
            const answer = await addStudent(teacher, examId, params);
            assert.equal(answer.status, 400, answer.text);
            assert.deepEqual(answer.json, { errors });
            assert.deepEqual(await studentIds(examId), before);
          });
        }
      });

      it('answers 404 with an empty body to an exam that is unknown, deleted or out of scope', async () => {
        const gone = await createExam(teacher, 'Gone');
        assert.equal((await teacher.client.v2('DELETE', '/exams/:id', { id: gone })).status, 200);
        for (const [user, id] of [
          [teacher, 999999],
          [teacher, gone],
          [colleague, examId],
          [outsider, examId],
        ] as const) {
          assertEmpty(await addStudent(user, id, { name: 'Lost', email: 'lost@example.org' }), 404);
        }
        assert.ok(
          !shownRecords(await showStudents(teacher, examId)).some((r) => r.email === 'lost@example.org'),
        );
      });

      it('answers 403 with an empty body to a proctor or auditor, and adds nobody', async () => {
        const before = await studentIds(examId);
        for (const user of [proctor, auditor]) {
          assertEmpty(await addStudent(user, examId, { name: 'Sneaky', email: 'sneaky@example.org' }), 403);
        }
        assert.deepEqual(await studentIds(examId), before);
      });

      it('answers 403 with the JSON message to a wrong signature', async () => {
        const answer = await addStudent(
          teacher,
          examId,
          { name: 'Forged', email: 'forged@example.org' },
          { signature: 'a'.repeat(64) },
        );
        assert.equal(answer.status, 403, answer.text);
        assert.deepEqual(answer.json, NOT_AUTHORIZED);
      });
    });

    describe('GET /api/exams/:id/show_students', () => {
      it('answers {student_session: []} for an exam without students', async () => {
        const examId = await createExam();
        const answer = await showStudents(teacher, examId);
        assert.equal(answer.status, 200, answer.text);
        assert.deepEqual(answer.json, { student_session: [] });
      });

      it('answers every student as a V2 record, by id, the same records add_student answered', async () => {
        const examId = await createExam();
        const added = [
          addedRecord(await addStudent(teacher, examId, { name: 'One', email: 'one@example.org' })),
          addedRecord(
            await addStudent(teacher, examId, {
              name: 'Two',
              email: 'two@example.org',
              open_time: START,
              individual_info: 'Desk 2',
            }),
          ),
          addedRecord(
            await addStudent(teacher, examId, { name: 'One', email: 'one@example.org', attempt: 1 }),
          ),
        ];
        assert.deepEqual(shownRecords(await showStudents(teacher, examId)), added);
      });

      it('gives start_time and end_time in epoch seconds once the session has them', async () => {
        const examId = await createExam();
        const record = addedRecord(
          await addStudent(teacher, examId, { name: 'Timed', email: 'timed@example.org' }),
        );
        const started = Date.parse('2026-11-21T09:15:30.900Z');
        await server.app.database.db
          .updateTable('student_sessions')
          .set({ start_time: started, end_time: started + 3_600_000, status: 'exam_finished' })
          .where('id', '=', record.student_id as number)
          .execute();
        const [shown] = shownRecords(await showStudents(teacher, examId));
        assert.deepEqual(shown, {
          ...record,
          status: 'exam_finished',
          start_time: Math.floor(started / 1000),
          end_time: Math.floor(started / 1000) + 3600,
        });
      });

      it('lets a proctor and an auditor of the institute read it', async () => {
        const examId = await createExam();
        const record = addedRecord(
          await addStudent(teacher, examId, { name: 'Seen', email: 'seen@example.org' }),
        );
        for (const user of [proctor, auditor]) {
          assert.deepEqual(shownRecords(await showStudents(user, examId)), [record]);
        }
      });

      it('answers 404 with an empty body to an exam that is unknown, deleted or out of scope', async () => {
        const examId = await createExam();
        const gone = await createExam(teacher, 'Gone');
        assert.equal((await teacher.client.v2('DELETE', '/exams/:id', { id: gone })).status, 200);
        for (const [user, id] of [
          [teacher, 999999],
          [teacher, gone],
          [colleague, examId],
          [outsider, examId],
        ] as const) {
          assertEmpty(await showStudents(user, id), 404);
        }
      });
    });

    describe('DELETE /api/exams/:id/delete_student', () => {
      let examId: number;

      before(async () => {
        examId = await createExam();
      });

      async function add(email: string, exam = examId): Promise<number> {
        return addedRecord(await addStudent(teacher, exam, { name: 'Leaving', email })).student_id as number;
      }

      it('destroys a session without an end time: 200 with an empty body', async () => {
        const id = await add('destroyed@example.org');
        assertEmpty(await deleteStudent(teacher, examId, { student_session_id: id }), 200);
        assert.equal((await showV3(id)).status, 404);
        assert.ok(!(await studentIds(examId)).includes(id));
      });

      it('archives a session that has an end time, hiding it from show_students', async () => {
        const id = await add('archived@example.org');
        await server.app.database.db
          .updateTable('student_sessions')
          .set({ end_time: Date.now(), status: 'exam_finished' })
          .where('id', '=', id)
          .execute();
        assertEmpty(await deleteStudent(teacher, examId, { student_session_id: id }), 200);
        const v3 = await showV3(id);
        assert.equal(v3.status, 200, v3.text);
        assert.equal(object(object(v3.json, 'body').student, 'student').archived, true);
        assert.ok(!(await studentIds(examId)).includes(id));
      });

      it('answers 404 with an empty body to an unknown, missing or foreign session, keeping the others', async () => {
        const otherExam = await createExam();
        const foreign = await add('foreign@example.org', otherExam);
        const kept = await add('kept@example.org');
        for (const params of [
          { student_session_id: 999999 },
          { student_session_id: 'abc' },
          { student_session_id: foreign },
          {},
          { student_session_id: '' },
        ] as Record<string, Scalar>[]) {
          assertEmpty(await deleteStudent(teacher, examId, params), 404);
        }
        assert.equal((await showV3(foreign)).status, 200);
        assert.ok((await studentIds(examId)).includes(kept));
      });

      it('answers 404 with an empty body to an exam that is unknown or out of scope, keeping the session', async () => {
        const id = await add('guarded@example.org');
        assertEmpty(await deleteStudent(teacher, 999999, { student_session_id: id }), 404);
        assertEmpty(await deleteStudent(colleague, examId, { student_session_id: id }), 404);
        assertEmpty(await deleteStudent(outsider, examId, { student_session_id: id }), 404);
        assert.ok((await studentIds(examId)).includes(id));
      });

      it('answers 403 with an empty body to a proctor, keeping the session', async () => {
        const id = await add('proctored@example.org');
        assertEmpty(await deleteStudent(proctor, examId, { student_session_id: id }), 403);
        assert.ok((await studentIds(examId)).includes(id));
      });
    });
  });
}
