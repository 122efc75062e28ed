import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Actor, Role } from '../../../src/domain/access.ts';
import { Forbidden, NotFound } from '../../../src/domain/errors.ts';
import type { HttpAnswer } from '../../helpers/http.ts';
import { SAMPLE, v3Multipart } from '../../helpers/multipart.ts';
import { DIALECTS, startTestServer, TestClock, type TestServer } from '../../helpers/server.ts';
import type { Scalar } from '../../helpers/signing.ts';
import { object } from '../../helpers/json.ts';
import { missing, NOT_AUTHORIZED, notFound } from '../../helpers/answers.ts';

type Json = Record<string, unknown>;
type TestUser = Awaited<ReturnType<TestServer['user']>>;

/** The contract's user fields (contract §6); the record may carry documented extras. */
const USER_FIELDS = [
  'id',
  'institute_id',
  'email',
  'name',
  'role',
  'identity_provider_id',
  'created_at',
  'updated_at',
];
const CANNOT_COMANAGE = {
  error: "'comanager_id':['must be a teacher or an administrator']",
  errors: { comanager_id: ['must be a teacher or an administrator'] },
};
const OWNER_AS_COMANAGER = {
  error: "'comanager_id':['is the owner of the exam']",
  errors: { comanager_id: ['is the owner of the exam'] },
};
const CANNOT_PROCTOR = {
  error: "'proctor_id':['must be a proctor or an administrator']",
  errors: { proctor_id: ['must be a proctor or an administrator'] },
};

function assertAnswer(answer: HttpAnswer, status: number, body: Json): void {
  assert.equal(answer.status, status, answer.text);
  assert.deepEqual(answer.json, body);
}

function comanagerIn(answer: HttpAnswer): Json {
  assert.equal(answer.status, 200, answer.text);
  const body = object(answer.json, 'body');
  assert.deepEqual(Object.keys(body), ['comanager']);
  return object(body.comanager, 'comanager');
}

function studentIn(answer: HttpAnswer, status = 200): Json {
  assert.equal(answer.status, status, answer.text);
  return object(object(answer.json, 'body').student, 'student');
}

function studentIdsIn(answer: HttpAnswer): unknown[] {
  assert.equal(answer.status, 200, answer.text);
  const list = object(answer.json, 'body').students;
  assert.ok(Array.isArray(list), 'students is an array');
  return list.map((item) => object(item, 'student').id);
}

function examIn(answer: HttpAnswer): Json {
  assert.equal(answer.status, 200, answer.text);
  return object(object(answer.json, 'body').exam, 'exam');
}

/** The parameters of a call, leaving out a `comanager_id` or `proctor_id` that is undefined. */
function withParam(base: Record<string, Scalar>, name: string, value: Scalar | undefined) {
  return value === undefined ? base : { ...base, [name]: value };
}

function addComanager(user: TestUser, examId: Scalar, comanagerId?: Scalar): Promise<HttpAnswer> {
  return user.client.v3(
    'PUT',
    '/exams/:id/add_comanager',
    withParam({ id: examId }, 'comanager_id', comanagerId),
  );
}

function removeComanager(user: TestUser, examId: Scalar, comanagerId?: Scalar): Promise<HttpAnswer> {
  return user.client.v3(
    'DELETE',
    '/exams/:id/remove_comanager',
    withParam({ id: examId }, 'comanager_id', comanagerId),
  );
}

function assignProctor(user: TestUser, sessionId: Scalar, proctorId?: Scalar): Promise<HttpAnswer> {
  return user.client.v3(
    'POST',
    '/student_sessions/:id/assign_proctor',
    withParam({ id: sessionId }, 'proctor_id', proctorId),
  );
}

function unassignProctor(user: TestUser, sessionId: Scalar): Promise<HttpAnswer> {
  return user.client.v3('DELETE', '/student_sessions/:id/assigned_proctor', { id: sessionId });
}

function showExam(user: TestUser, id: Scalar): Promise<HttpAnswer> {
  return user.client.v3('GET', '/exams/:id', { id });
}

function showStudent(user: TestUser, id: Scalar): Promise<HttpAnswer> {
  return user.client.v3('GET', '/student_sessions/:id', { id });
}

/** `{student, active_proctoring_sessions}`, asserting the 200 and the exact keys. */
function assignmentIn(answer: HttpAnswer): { student: Json; active: unknown } {
  assert.equal(answer.status, 200, answer.text);
  const body = object(answer.json, 'body');
  assert.deepEqual(Object.keys(body).sort(), ['active_proctoring_sessions', 'student']);
  return { student: object(body.student, 'student'), active: body.active_proctoring_sessions };
}

for (const dialect of DIALECTS) {
  describe(`V3 exam staff [${dialect}]`, () => {
    const clock = new TestClock(Math.floor(Date.now() / 1000) * 1000);
    let server: TestServer;
    let home: number;
    let elsewhere: number;
    let superuser: TestUser;
    let admin: TestUser;
    let owner: TestUser;
    let otherTeacher: TestUser;
    let coTeacher: TestUser;
    let spareTeacher: TestUser;
    let proctor: TestUser;
    let globalProctor: TestUser;
    let reviewer: TestUser;
    let auditor: TestUser;
    let outsideAdmin: TestUser;
    let outsideTeacher: TestUser;
    let outsideProctor: TestUser;

    before(async () => {
      server = await startTestServer(dialect, { clock });
      home = await server.institute();
      elsewhere = await server.institute();
      superuser = await server.user(elsewhere, 'superuser');
      admin = await server.user(home, 'administrator');
      owner = await server.user(home, 'teacher');
      otherTeacher = await server.user(home, 'teacher');
      coTeacher = await server.user(home, 'teacher');
      spareTeacher = await server.user(home, 'teacher');
      proctor = await server.user(home, 'proctor');
      globalProctor = await server.user(home, 'global_proctor');
      reviewer = await server.user(home, 'reviewer');
      auditor = await server.user(home, 'auditor');
      outsideAdmin = await server.user(elsewhere, 'administrator');
      outsideTeacher = await server.user(elsewhere, 'teacher');
      outsideProctor = await server.user(elsewhere, 'proctor');
    });

    after(async () => {
      await server.close();
    });

    async function createExam(user: TestUser, name: string): Promise<Json> {
      const answer = await user.client.v3('POST', '/exams', {
        name,
        type: 'live_proctoring',
        duration_minutes: 60,
      });
      assert.equal(answer.status, 201, answer.text);
      return object(object(answer.json, 'body').exam, 'exam');
    }

    let emails = 0;
    async function createStudent(user: TestUser, examId: Scalar): Promise<Json> {
      emails += 1;
      const answer = await user.client.v3('POST', '/exams/:exam_id/student_sessions', {
        exam_id: examId,
        name: `Student ${emails}`,
        email: `student${emails}@example.org`,
      });
      return studentIn(answer, 201);
    }

    async function comanagerRows(examId: Scalar): Promise<number[]> {
      const rows = await server.app.database.db
        .selectFrom('exam_comanagers')
        .select('user_id')
        .where('exam_id', '=', Number(examId))
        .orderBy('user_id')
        .execute();
      return rows.map((row) => row.user_id);
    }

    /**
     * Sets columns no V3 call of this capability writes (status, archived, and live_status, which the
     * signalling hub writes) straight in the database.
     */
    async function setColumns(
      id: Scalar,
      values: { status?: string; archived?: boolean; live_status?: 'offline' | 'connecting' | 'live' },
    ) {
      await server.app.database.db
        .updateTable('student_sessions')
        .set(values)
        .where('id', '=', Number(id))
        .execute();
    }

    async function setRole(user: TestUser, role: Role): Promise<void> {
      await server.app.database.db.updateTable('users').set({ role }).where('id', '=', user.id).execute();
    }

    describe('PUT /api/v3/exams/:id/add_comanager', () => {
      let exam: Json;

      before(async () => {
        exam = await createExam(owner, 'Add co-manager');
      });

      it('answers 200 with the user record under comanager, no credentials', async () => {
        const answer = await addComanager(owner, exam.id as number, coTeacher.id);
        const comanager = comanagerIn(answer);
        for (const field of USER_FIELDS) assert.ok(Object.hasOwn(comanager, field), `comanager has ${field}`);
        assert.equal(comanager.id, coTeacher.id);
        assert.equal(comanager.institute_id, home);
        assert.equal(comanager.role, 'teacher');
        assert.equal(typeof comanager.email, 'string');
        assert.ok(!Object.hasOwn(comanager, 'api_token') && !Object.hasOwn(comanager, 'secret_key'));
      });

      it("lists the co-manager in the exam's comanager_ids afterwards", async () => {
        assert.deepEqual(examIn(await showExam(owner, exam.id as number)).comanager_ids, [coTeacher.id]);
        assert.deepEqual(examIn(await showExam(coTeacher, exam.id as number)).comanager_ids, [coTeacher.id]);
      });

      it('is harmless when repeated: 200 with the same record and one row', async () => {
        const first = comanagerIn(await addComanager(owner, exam.id as number, coTeacher.id));
        const again = comanagerIn(await addComanager(owner, exam.id as number, coTeacher.id));
        assert.deepEqual(again, first);
        assert.deepEqual(await comanagerRows(exam.id as number), [coTeacher.id]);
        assert.deepEqual(examIn(await showExam(owner, exam.id as number)).comanager_ids, [coTeacher.id]);
      });

      it("moves the exam's updated_at when the co-managers change, and only then", async () => {
        const target = await createExam(owner, 'Touch');
        clock.current += 5000;
        const changedAt = new Date(clock.now()).toISOString();
        comanagerIn(await addComanager(owner, target.id as number, spareTeacher.id));
        assert.equal(examIn(await showExam(owner, target.id as number)).updated_at, changedAt);
        clock.current += 5000;
        comanagerIn(await addComanager(owner, target.id as number, spareTeacher.id));
        assert.equal(
          examIn(await showExam(owner, target.id as number)).updated_at,
          changedAt,
          'a repeat changes nothing',
        );
      });

      it('keeps several co-managers, in id order', async () => {
        const target = await createExam(owner, 'Several');
        comanagerIn(await addComanager(owner, target.id as number, spareTeacher.id));
        comanagerIn(await addComanager(owner, target.id as number, admin.id));
        comanagerIn(await addComanager(owner, target.id as number, coTeacher.id));
        const expected = [spareTeacher.id, admin.id, coTeacher.id].sort((a, b) => a - b);
        assert.deepEqual(examIn(await showExam(owner, target.id as number)).comanager_ids, expected);
      });

      it('accepts an administrator of the institute as co-manager', async () => {
        const target = await createExam(owner, 'Admin co-manager');
        assert.equal(
          comanagerIn(await addComanager(owner, target.id as number, admin.id)).role,
          'administrator',
        );
      });

      it('reads comanager_id as digits from a form body', async () => {
        const target = await createExam(owner, 'Form');
        const answer = await owner.client.v3(
          'PUT',
          '/exams/:id/add_comanager',
          { id: target.id as number, comanager_id: String(coTeacher.id) },
          { as: 'form' },
        );
        assert.equal(comanagerIn(answer).id, coTeacher.id);
      });

      it('answers 422 naming comanager_id when it is missing', async () => {
        assertAnswer(await addComanager(owner, exam.id as number), 422, missing('comanager_id'));
      });

      for (const [label, value] of [
        ['empty', ''],
        ['blank', '  '],
        ['null', null],
      ] as const) {
        it(`answers 422 naming comanager_id when it is ${label}`, async () => {
          assertAnswer(await addComanager(owner, exam.id as number, value), 422, missing('comanager_id'));
        });
      }

      it('answers 404 User for an unknown user, naming the id as sent', async () => {
        assertAnswer(await addComanager(owner, exam.id as number, 999999), 404, notFound('User', 999999));
        assertAnswer(await addComanager(owner, exam.id as number, 'abc'), 404, notFound('User', 'abc'));
      });

      it("answers 404 User for another institute's user, the same body as an unknown id", async () => {
        for (const user of [outsideTeacher, outsideAdmin]) {
          assertAnswer(await addComanager(owner, exam.id as number, user.id), 404, notFound('User', user.id));
        }
        assert.deepEqual(await comanagerRows(exam.id as number), [coTeacher.id], 'nothing added');
      });

      for (const [label, pick] of [
        ['proctor', () => proctor],
        ['global_proctor', () => globalProctor],
        ['reviewer', () => reviewer],
        ['auditor', () => auditor],
      ] as const) {
        it(`answers 422 on comanager_id for a ${label}, who may not co-manage`, async () => {
          assertAnswer(await addComanager(owner, exam.id as number, pick().id), 422, CANNOT_COMANAGE);
          assert.deepEqual(await comanagerRows(exam.id as number), [coTeacher.id], 'nothing added');
        });
      }

      it('answers 422 on comanager_id for the exam owner', async () => {
        assertAnswer(await addComanager(owner, exam.id as number, owner.id), 422, OWNER_AS_COMANAGER);
        assertAnswer(await addComanager(admin, exam.id as number, owner.id), 422, OWNER_AS_COMANAGER);
        assert.deepEqual(await comanagerRows(exam.id as number), [coTeacher.id], 'nothing added');
      });

      it('answers 404 Exam for an unknown or deleted exam before reading comanager_id', async () => {
        assertAnswer(await addComanager(owner, 999999, coTeacher.id), 404, notFound('Exam', 999999));
        assertAnswer(await addComanager(owner, 999999), 404, notFound('Exam', 999999));
        const gone = await createExam(owner, 'Gone');
        assert.equal((await owner.client.v3('DELETE', '/exams/:id', { id: gone.id as number })).status, 200);
        assertAnswer(
          await addComanager(owner, gone.id as number, coTeacher.id),
          404,
          notFound('Exam', gone.id as number),
        );
      });
    });

    describe('DELETE /api/v3/exams/:id/remove_comanager', () => {
      let exam: Json;

      before(async () => {
        exam = await createExam(owner, 'Remove co-manager');
        comanagerIn(await addComanager(owner, exam.id as number, coTeacher.id));
        comanagerIn(await addComanager(owner, exam.id as number, spareTeacher.id));
      });

      it('answers 200 with the user record and leaves it out of comanager_ids', async () => {
        const comanager = comanagerIn(await removeComanager(owner, exam.id as number, coTeacher.id));
        for (const field of USER_FIELDS) assert.ok(Object.hasOwn(comanager, field), `comanager has ${field}`);
        assert.equal(comanager.id, coTeacher.id);
        assert.deepEqual(examIn(await showExam(owner, exam.id as number)).comanager_ids, [spareTeacher.id]);
        assert.deepEqual(await comanagerRows(exam.id as number), [spareTeacher.id]);
      });

      it('is harmless when repeated, and for a user who never was a co-manager', async () => {
        assert.equal(
          comanagerIn(await removeComanager(owner, exam.id as number, coTeacher.id)).id,
          coTeacher.id,
        );
        assert.equal(comanagerIn(await removeComanager(owner, exam.id as number, admin.id)).id, admin.id);
        assert.deepEqual(examIn(await showExam(owner, exam.id as number)).comanager_ids, [spareTeacher.id]);
      });

      it("moves the exam's updated_at only when a co-manager was removed", async () => {
        const target = await createExam(owner, 'Untouch');
        comanagerIn(await addComanager(owner, target.id as number, coTeacher.id));
        clock.current += 5000;
        const changedAt = new Date(clock.now()).toISOString();
        comanagerIn(await removeComanager(owner, target.id as number, coTeacher.id));
        assert.equal(examIn(await showExam(owner, target.id as number)).updated_at, changedAt);
        clock.current += 5000;
        comanagerIn(await removeComanager(owner, target.id as number, coTeacher.id));
        assert.equal(examIn(await showExam(owner, target.id as number)).updated_at, changedAt);
      });

      it('reads comanager_id from a JSON body too', async () => {
        const target = await createExam(owner, 'JSON delete');
        comanagerIn(await addComanager(owner, target.id as number, coTeacher.id));
        const answer = await owner.client.v3(
          'DELETE',
          '/exams/:id/remove_comanager',
          { id: target.id as number, comanager_id: coTeacher.id },
          { as: 'json' },
        );
        assert.equal(comanagerIn(answer).id, coTeacher.id);
        assert.deepEqual(await comanagerRows(target.id as number), []);
      });

      it('answers 422 naming comanager_id when it is missing or empty', async () => {
        assertAnswer(await removeComanager(owner, exam.id as number), 422, missing('comanager_id'));
        assertAnswer(await removeComanager(owner, exam.id as number, ''), 422, missing('comanager_id'));
      });

      it('answers 404 User for an unknown user', async () => {
        assertAnswer(await removeComanager(owner, exam.id as number, 999999), 404, notFound('User', 999999));
      });

      it("answers 404 User for another institute's user", async () => {
        assertAnswer(
          await removeComanager(owner, exam.id as number, outsideTeacher.id),
          404,
          notFound('User', outsideTeacher.id),
        );
      });

      it('answers 422 on comanager_id for a proctor, who may not co-manage', async () => {
        assertAnswer(await removeComanager(owner, exam.id as number, proctor.id), 422, CANNOT_COMANAGE);
      });

      it('answers 422 on comanager_id for the exam owner, who stays the owner', async () => {
        assertAnswer(await removeComanager(owner, exam.id as number, owner.id), 422, OWNER_AS_COMANAGER);
        assert.equal(examIn(await showExam(owner, exam.id as number)).user_id, owner.id);
      });

      it('removes a listed co-manager whose role no longer allows co-managing', async () => {
        const demoted = await server.user(home, 'teacher');
        const target = await createExam(owner, 'Demoted');
        comanagerIn(await addComanager(owner, target.id as number, demoted.id));
        await setRole(demoted, 'proctor');
        assert.equal(
          comanagerIn(await removeComanager(owner, target.id as number, demoted.id)).role,
          'proctor',
        );
        assert.deepEqual(examIn(await showExam(owner, target.id as number)).comanager_ids, []);
      });

      it('answers 404 Exam for an unknown exam', async () => {
        assertAnswer(await removeComanager(owner, 999999, coTeacher.id), 404, notFound('Exam', 999999));
      });
    });

    describe("a co-manager has the owner's rights on the exam and everything under it", () => {
      let exam: Json;
      let comanager: TestUser;
      let documentId: number;
      let attachmentId: number;
      let sessionId: number;

      before(async () => {
        comanager = await server.user(home, 'teacher');
        exam = await createExam(owner, 'Shared');
        assert.equal((await showExam(comanager, exam.id as number)).status, 404, 'hidden before');
        comanagerIn(await addComanager(owner, exam.id as number, comanager.id));
      });

      it('lists, shows and updates the exam', async () => {
        const listed = await comanager.client.v3('GET', '/exams', {});
        assert.equal(listed.status, 200, listed.text);
        const ids = (object(listed.json, 'body').exams as Json[]).map((item) => item.id);
        assert.deepEqual(ids, [exam.id]);
        const answer = await comanager.client.v3('PATCH', '/exams/:id', {
          id: exam.id as number,
          restrictions: 'Set by co-manager',
        });
        assert.equal(examIn(answer).restrictions, 'Set by co-manager');
        assert.equal(examIn(answer).user_id, owner.id, 'the owner stays the owner');
      });

      it('creates, shows and updates the document', async () => {
        const created = await comanager.client.v3('POST', '/exams/:exam_id/documents', {
          exam_id: exam.id as number,
          exam_content: 'Read carefully',
        });
        assert.equal(created.status, 201, created.text);
        documentId = object(object(created.json, 'body').document, 'document').id as number;
        const updated = await comanager.client.v3('PATCH', '/exams/:exam_id/documents/:id', {
          exam_id: exam.id as number,
          id: documentId,
          exam_content: 'Read very carefully',
        });
        assert.equal(updated.status, 200, updated.text);
        const shown = await owner.client.v3('GET', '/exams/:exam_id/documents/:id', {
          exam_id: exam.id as number,
          id: documentId,
        });
        assert.equal(
          object(object(shown.json, 'body').document, 'document').exam_content,
          'Read very carefully',
        );
      });

      it('attaches, lists and destroys attachments', async () => {
        const created = await v3Multipart(
          comanager.client,
          'POST',
          '/exams/:exam_id/attachments',
          { exam_id: exam.id as number },
          [{ field: 'document', fileName: 'rules.pdf', contentType: 'application/pdf', bytes: SAMPLE.pdf }],
        );
        assert.equal(created.status, 201, created.text);
        attachmentId = object(object(created.json, 'body').attachment, 'attachment').id as number;
        const second = await v3Multipart(
          comanager.client,
          'POST',
          '/exams/:exam_id/attachments',
          { exam_id: exam.id as number },
          [{ field: 'document', fileName: 'map.png', contentType: 'image/png', bytes: SAMPLE.png }],
        );
        assert.equal(second.status, 201, second.text);
        const listed = await comanager.client.v3('GET', '/exams/:exam_id/attachments', {
          exam_id: exam.id as number,
        });
        assert.equal(listed.status, 200, listed.text);
        assert.equal((object(listed.json, 'body').attachments as Json[]).length, 2);
        const secondId = object(object(second.json, 'body').attachment, 'attachment').id as number;
        const destroyed = await comanager.client.v3('DELETE', '/exams/:exam_id/attachments/:id', {
          exam_id: exam.id as number,
          id: secondId,
        });
        assertAnswer(destroyed, 200, {});
      });

      it('adds, lists, updates and assigns proctors to student sessions, and removes them', async () => {
        sessionId = (await createStudent(comanager, exam.id as number)).id as number;
        const doomed = (await createStudent(comanager, exam.id as number)).id as number;
        const listed = await comanager.client.v3('GET', '/exams/:exam_id/student_sessions', {
          exam_id: exam.id as number,
        });
        assert.deepEqual(studentIdsIn(listed), [sessionId, doomed]);
        const updated = await comanager.client.v3('PATCH', '/student_sessions/:id', {
          id: sessionId,
          name: 'Renamed',
        });
        assert.equal(studentIn(updated).name, 'Renamed');
        assert.equal(
          assignmentIn(await assignProctor(comanager, sessionId, proctor.id)).student.proctor_id,
          proctor.id,
        );
        assert.equal(studentIn(await unassignProctor(comanager, sessionId)).proctor_id, null);
        assertAnswer(await comanager.client.v3('DELETE', '/student_sessions/:id', { id: doomed }), 200, {});
      });

      it('adds and removes other co-managers', async () => {
        comanagerIn(await addComanager(comanager, exam.id as number, spareTeacher.id));
        comanagerIn(await removeComanager(comanager, exam.id as number, spareTeacher.id));
        assert.deepEqual(examIn(await showExam(owner, exam.id as number)).comanager_ids, [comanager.id]);
      });

      it('loses every right once removed: the exam and everything under it answer 404', async () => {
        comanagerIn(await removeComanager(owner, exam.id as number, comanager.id));
        const examId = exam.id as number;
        const hiddenExam = notFound('Exam', examId);
        assertAnswer(await showExam(comanager, examId), 404, hiddenExam);
        assertAnswer(
          await comanager.client.v3('PATCH', '/exams/:id', { id: examId, name: 'Mine' }),
          404,
          hiddenExam,
        );
        assertAnswer(await addComanager(comanager, examId, comanager.id), 404, hiddenExam);
        assertAnswer(
          await comanager.client.v3('GET', '/exams/:exam_id/documents/:id', {
            exam_id: examId,
            id: documentId,
          }),
          404,
          hiddenExam,
        );
        assertAnswer(
          await comanager.client.v3('PATCH', '/exams/:exam_id/documents/:id', {
            exam_id: examId,
            id: documentId,
            exam_content: 'Mine',
          }),
          404,
          hiddenExam,
        );
        assertAnswer(
          await comanager.client.v3('GET', '/exams/:exam_id/attachments', { exam_id: examId }),
          404,
          hiddenExam,
        );
        assertAnswer(
          await comanager.client.v3('DELETE', '/exams/:exam_id/attachments/:id', {
            exam_id: examId,
            id: attachmentId,
          }),
          404,
          hiddenExam,
        );
        assertAnswer(
          await comanager.client.v3('GET', '/exams/:exam_id/student_sessions', { exam_id: examId }),
          404,
          hiddenExam,
        );
        assertAnswer(
          await comanager.client.v3('POST', '/exams/:exam_id/student_sessions', {
            exam_id: examId,
            name: 'Late',
            email: 'late@example.org',
          }),
          404,
          hiddenExam,
        );
        const hiddenSession = notFound('Student Session', sessionId);
        assertAnswer(await showStudent(comanager, sessionId), 404, hiddenSession);
        assertAnswer(
          await comanager.client.v3('PATCH', '/student_sessions/:id', { id: sessionId, name: 'Mine' }),
          404,
          hiddenSession,
        );
        assertAnswer(await assignProctor(comanager, sessionId, proctor.id), 404, hiddenSession);
        assertAnswer(
          await comanager.client.v3('DELETE', '/student_sessions/:id', { id: sessionId }),
          404,
          hiddenSession,
        );
        const listed = await comanager.client.v3('GET', '/exams', {});
        assert.deepEqual(object(listed.json, 'body').exams, []);
        assert.deepEqual(studentIdsIn(await comanager.client.v3('GET', '/student_sessions', {})), []);
        assert.equal(studentIn(await showStudent(owner, sessionId)).name, 'Renamed', 'the session is intact');
      });
    });

    describe('POST /api/v3/student_sessions/:id/assign_proctor', () => {
      let exam: Json;
      let worker: TestUser;

      before(async () => {
        exam = await createExam(owner, 'Proctored');
        worker = await server.user(home, 'proctor');
      });

      it('answers 200 with the session, its proctor_id set, and the active count', async () => {
        const session = await createStudent(owner, exam.id as number);
        await setColumns(session.id as number, { live_status: 'live' });
        const { student, active } = assignmentIn(await assignProctor(owner, session.id as number, worker.id));
        assert.equal(student.id, session.id);
        assert.equal(student.proctor_id, worker.id);
        assert.equal(active, 1);
        assert.deepEqual(
          student,
          studentIn(await showStudent(owner, session.id as number)),
          'the record as shown',
        );
      });

      it('counts every live session assigned to the proctor, across exams', async () => {
        const counter = await server.user(home, 'proctor');
        const otherExam = await createExam(otherTeacher, 'Other exam');
        const a = await createStudent(owner, exam.id as number);
        const b = await createStudent(owner, exam.id as number);
        const c = await createStudent(otherTeacher, otherExam.id as number);
        for (const session of [a, b, c]) await setColumns(session.id as number, { live_status: 'live' });
        assert.equal(assignmentIn(await assignProctor(owner, a.id as number, counter.id)).active, 1);
        assert.equal(assignmentIn(await assignProctor(owner, b.id as number, counter.id)).active, 2);
        assert.equal(assignmentIn(await assignProctor(admin, c.id as number, counter.id)).active, 3);
      });

      it('leaves out candidates not live, finished sessions, archived sessions and sessions of deleted exams', async () => {
        const counter = await server.user(home, 'proctor');
        const doomedExam = await createExam(owner, 'Doomed');
        const live = await createStudent(owner, exam.id as number);
        const finished = await createStudent(owner, exam.id as number);
        const archived = await createStudent(owner, exam.id as number);
        const started = await createStudent(owner, exam.id as number);
        const inDoomed = await createStudent(owner, doomedExam.id as number);
        const offline = await createStudent(owner, exam.id as number);
        const connecting = await createStudent(owner, exam.id as number);
        for (const session of [live, finished, archived, started, inDoomed]) {
          await setColumns(session.id as number, { live_status: 'live' });
        }
        await setColumns(connecting.id as number, { live_status: 'connecting' });
        await setColumns(finished.id as number, { status: 'exam_finished' });
        await setColumns(archived.id as number, { archived: true });
        await setColumns(started.id as number, { status: 'exam_started' });
        assert.equal(assignmentIn(await assignProctor(owner, offline.id as number, counter.id)).active, 0);
        assert.equal(assignmentIn(await assignProctor(owner, connecting.id as number, counter.id)).active, 0);
        assert.equal(assignmentIn(await assignProctor(owner, finished.id as number, counter.id)).active, 0);
        assert.equal(assignmentIn(await assignProctor(owner, archived.id as number, counter.id)).active, 0);
        assert.equal(assignmentIn(await assignProctor(owner, started.id as number, counter.id)).active, 1);
        assert.equal(assignmentIn(await assignProctor(owner, inDoomed.id as number, counter.id)).active, 2);
        assert.equal(assignmentIn(await assignProctor(owner, live.id as number, counter.id)).active, 3);
        assertAnswer(await owner.client.v3('DELETE', '/exams/:id', { id: doomedExam.id as number }), 200, {});
        assert.equal(assignmentIn(await assignProctor(owner, live.id as number, counter.id)).active, 2);
      });

      it('is harmless when repeated: the same answer and an unchanged updated_at', async () => {
        const session = await createStudent(owner, exam.id as number);
        const first = assignmentIn(await assignProctor(owner, session.id as number, worker.id));
        clock.current += 5000;
        const again = assignmentIn(await assignProctor(owner, session.id as number, worker.id));
        assert.deepEqual(again, first);
        assert.equal(again.student.updated_at, first.student.updated_at);
      });

      it('replaces the previous proctor, whose count goes down', async () => {
        const first = await server.user(home, 'proctor');
        const second = await server.user(home, 'proctor');
        const session = await createStudent(owner, exam.id as number);
        const other = await createStudent(owner, exam.id as number);
        await setColumns(session.id as number, { live_status: 'live' });
        await setColumns(other.id as number, { live_status: 'live' });
        assert.equal(assignmentIn(await assignProctor(owner, other.id as number, first.id)).active, 1);
        assert.equal(assignmentIn(await assignProctor(owner, session.id as number, first.id)).active, 2);
        clock.current += 5000;
        const moved = assignmentIn(await assignProctor(owner, session.id as number, second.id));
        assert.equal(moved.student.proctor_id, second.id);
        assert.equal(moved.student.updated_at, new Date(clock.now()).toISOString());
        assert.equal(moved.active, 1);
        assert.equal(assignmentIn(await assignProctor(owner, other.id as number, first.id)).active, 1);
      });

      for (const [label, pick] of [
        ['a global_proctor', () => globalProctor],
        ['an administrator', () => admin],
      ] as const) {
        it(`accepts ${label} as proctor`, async () => {
          const session = await createStudent(owner, exam.id as number);
          const { student } = assignmentIn(await assignProctor(owner, session.id as number, pick().id));
          assert.equal(student.proctor_id, pick().id);
        });
      }

      it('reads proctor_id as digits from a form body', async () => {
        const session = await createStudent(owner, exam.id as number);
        const answer = await owner.client.v3(
          'POST',
          '/student_sessions/:id/assign_proctor',
          { id: session.id as number, proctor_id: String(worker.id) },
          { as: 'form' },
        );
        assert.equal(assignmentIn(answer).student.proctor_id, worker.id);
      });

      it('answers 422 naming proctor_id when it is missing, empty or null', async () => {
        const session = await createStudent(owner, exam.id as number);
        for (const value of [undefined, '', null]) {
          assertAnswer(await assignProctor(owner, session.id as number, value), 422, missing('proctor_id'));
        }
        assert.equal(studentIn(await showStudent(owner, session.id as number)).proctor_id, null);
      });

      it('answers 404 User for an unknown user, naming the id as sent', async () => {
        const session = await createStudent(owner, exam.id as number);
        assertAnswer(await assignProctor(owner, session.id as number, 999999), 404, notFound('User', 999999));
        assertAnswer(await assignProctor(owner, session.id as number, 'x1'), 404, notFound('User', 'x1'));
      });

      it("answers 404 User for another institute's proctor, the same body as an unknown id", async () => {
        const session = await createStudent(owner, exam.id as number);
        assertAnswer(
          await assignProctor(owner, session.id as number, outsideProctor.id),
          404,
          notFound('User', outsideProctor.id),
        );
        assertAnswer(
          await assignProctor(superuser, session.id as number, outsideProctor.id),
          404,
          notFound('User', outsideProctor.id),
        );
        assert.equal(studentIn(await showStudent(owner, session.id as number)).proctor_id, null);
      });

      for (const [label, pick] of [
        ['teacher', () => otherTeacher],
        ['reviewer', () => reviewer],
        ['auditor', () => auditor],
      ] as const) {
        it(`answers 422 on proctor_id for a ${label}, who may not proctor`, async () => {
          const session = await createStudent(owner, exam.id as number);
          assertAnswer(await assignProctor(owner, session.id as number, pick().id), 422, CANNOT_PROCTOR);
          assert.equal(studentIn(await showStudent(owner, session.id as number)).proctor_id, null);
        });
      }

      it('answers 404 Student Session for an unknown session before reading proctor_id', async () => {
        assertAnswer(await assignProctor(owner, 999999, worker.id), 404, notFound('Student Session', 999999));
        assertAnswer(await assignProctor(owner, 999999), 404, notFound('Student Session', 999999));
        assertAnswer(await assignProctor(owner, 'abc', worker.id), 404, notFound('Student Session', 'abc'));
      });
    });

    describe('DELETE /api/v3/student_sessions/:id/assigned_proctor', () => {
      let exam: Json;

      before(async () => {
        exam = await createExam(owner, 'Unassign');
      });

      it('answers 200 with the session, proctor_id null, and lowers the proctor count', async () => {
        const counter = await server.user(home, 'proctor');
        const a = await createStudent(owner, exam.id as number);
        const b = await createStudent(owner, exam.id as number);
        await setColumns(a.id as number, { live_status: 'live' });
        await setColumns(b.id as number, { live_status: 'live' });
        assignmentIn(await assignProctor(owner, a.id as number, counter.id));
        assert.equal(assignmentIn(await assignProctor(owner, b.id as number, counter.id)).active, 2);
        const answer = await unassignProctor(owner, a.id as number);
        assert.deepEqual(Object.keys(object(answer.json, 'body')), ['student']);
        const student = studentIn(answer);
        assert.equal(student.id, a.id);
        assert.equal(student.proctor_id, null);
        assert.deepEqual(student, studentIn(await showStudent(owner, a.id as number)));
        assert.equal(assignmentIn(await assignProctor(owner, b.id as number, counter.id)).active, 1);
      });

      it('is harmless when the session has no proctor: 200 and an unchanged updated_at', async () => {
        const session = await createStudent(owner, exam.id as number);
        clock.current += 5000;
        const first = studentIn(await unassignProctor(owner, session.id as number));
        const again = studentIn(await unassignProctor(owner, session.id as number));
        assert.equal(first.proctor_id, null);
        assert.deepEqual(again, first);
        assert.equal(first.updated_at, session.updated_at);
      });

      it('answers 404 Student Session for an unknown session', async () => {
        assertAnswer(await unassignProctor(owner, 999999), 404, notFound('Student Session', 999999));
      });
    });

    describe('a proctor and the sessions assigned to it', () => {
      let exam: Json;
      let mine: Json[];
      let theirs: Json;
      let watcher: TestUser;

      before(async () => {
        watcher = await server.user(home, 'proctor');
        exam = await createExam(owner, 'Watched');
        mine = [await createStudent(owner, exam.id as number), await createStudent(owner, exam.id as number)];
        theirs = await createStudent(owner, exam.id as number);
        for (const session of mine)
          assignmentIn(await assignProctor(owner, session.id as number, watcher.id));
        assignmentIn(await assignProctor(owner, theirs.id as number, proctor.id));
      });

      it('lists exactly its sessions with a proctor_id filter on GET /student_sessions', async () => {
        const answer = await watcher.client.v3('GET', '/student_sessions', {
          filter: JSON.stringify({ proctor_id: { eq: watcher.id } }),
        });
        assert.deepEqual(
          studentIdsIn(answer),
          mine.map((session) => session.id),
        );
        assert.equal(answer.headers['x-pagination-item-count'], '2');
      });

      it('lists exactly its sessions within the exam with the same filter', async () => {
        const answer = await watcher.client.v3('GET', '/exams/:exam_id/student_sessions', {
          exam_id: exam.id as number,
          filter: JSON.stringify({ proctor_id: { eq: watcher.id } }),
        });
        assert.deepEqual(
          studentIdsIn(answer),
          mine.map((session) => session.id),
        );
      });

      it('shows each of them with its proctor_id', async () => {
        for (const session of mine) {
          assert.equal(studentIn(await showStudent(watcher, session.id as number)).proctor_id, watcher.id);
        }
      });

      it('may not assign or unassign proctors itself (403)', async () => {
        assertAnswer(await assignProctor(watcher, theirs.id as number, watcher.id), 403, NOT_AUTHORIZED);
        assertAnswer(await unassignProctor(watcher, mine[0]?.id as number), 403, NOT_AUTHORIZED);
        assert.equal(studentIn(await showStudent(owner, theirs.id as number)).proctor_id, proctor.id);
      });
    });

    describe('roles', () => {
      let exam: Json;
      let comanager: TestUser;
      let sessionId: number;
      let target: TestUser;

      before(async () => {
        exam = await createExam(owner, 'Roles');
        comanager = await server.user(home, 'teacher');
        target = await server.user(home, 'teacher');
        comanagerIn(await addComanager(owner, exam.id as number, comanager.id));
        sessionId = (await createStudent(owner, exam.id as number)).id as number;
      });

      const allowed: readonly (readonly [string, () => TestUser])[] = [
        ['a superuser', () => superuser],
        ['an administrator', () => admin],
        ['the owner teacher', () => owner],
        ['a co-manager', () => comanager],
      ];
      for (const [label, pick] of allowed) {
        it(`lets ${label} add and remove co-managers and assign and unassign proctors`, async () => {
          const user = pick();
          const examId = exam.id as number;
          assert.equal(comanagerIn(await addComanager(user, examId, target.id)).id, target.id);
          assert.deepEqual(
            examIn(await showExam(owner, examId)).comanager_ids,
            [comanager.id, target.id].sort((a, b) => a - b),
          );
          assert.equal(comanagerIn(await removeComanager(user, examId, target.id)).id, target.id);
          assert.deepEqual(examIn(await showExam(owner, examId)).comanager_ids, [comanager.id]);
          assert.equal(
            assignmentIn(await assignProctor(user, sessionId, proctor.id)).student.proctor_id,
            proctor.id,
          );
          assert.equal(studentIn(await unassignProctor(user, sessionId)).proctor_id, null);
        });
      }

      for (const [label, pick] of [
        ['a proctor', () => proctor],
        ['a reviewer', () => reviewer],
        ['an auditor', () => auditor],
      ] as const) {
        it(`answers ${label} 403 on all four, changing nothing`, async () => {
          const user = pick();
          const examId = exam.id as number;
          assignmentIn(await assignProctor(owner, sessionId, proctor.id));
          for (const answer of [
            await addComanager(user, examId, target.id),
            await addComanager(user, examId),
            await removeComanager(user, examId, comanager.id),
            await assignProctor(user, sessionId, globalProctor.id),
            await assignProctor(user, sessionId),
            await unassignProctor(user, sessionId),
          ]) {
            assertAnswer(answer, 403, NOT_AUTHORIZED);
          }
          assert.deepEqual(examIn(await showExam(owner, examId)).comanager_ids, [comanager.id]);
          assert.equal(studentIn(await showStudent(owner, sessionId)).proctor_id, proctor.id);
          studentIn(await unassignProctor(owner, sessionId));
        });
      }

      for (const [label, pick] of [
        ['another teacher of the institute', () => otherTeacher],
        ["another institute's administrator", () => outsideAdmin],
        ["another institute's teacher", () => outsideTeacher],
      ] as const) {
        it(`answers ${label} 404 on all four, the same body as a missing id, changing nothing`, async () => {
          const user = pick();
          const examId = exam.id as number;
          assignmentIn(await assignProctor(owner, sessionId, proctor.id));
          for (const answer of [
            await addComanager(user, examId, target.id),
            await addComanager(user, examId),
            await removeComanager(user, examId, comanager.id),
          ]) {
            assertAnswer(answer, 404, notFound('Exam', examId));
          }
          for (const answer of [
            await assignProctor(user, sessionId, globalProctor.id),
            await assignProctor(user, sessionId),
            await unassignProctor(user, sessionId),
          ]) {
            assertAnswer(answer, 404, notFound('Student Session', sessionId));
          }
          const missingExam = await addComanager(user, 999999, target.id);
          const hiddenExam = await addComanager(user, examId, target.id);
          assertAnswer(missingExam, 404, notFound('Exam', 999999));
          assert.equal(hiddenExam.headers['content-type'], missingExam.headers['content-type']);
          const missingSession = await unassignProctor(user, 999999);
          const hiddenSession = await unassignProctor(user, sessionId);
          assertAnswer(missingSession, 404, notFound('Student Session', 999999));
          assert.equal(hiddenSession.headers['content-type'], missingSession.headers['content-type']);
          assert.deepEqual(examIn(await showExam(owner, examId)).comanager_ids, [comanager.id]);
          assert.equal(studentIn(await showStudent(owner, sessionId)).proctor_id, proctor.id);
          studentIn(await unassignProctor(owner, sessionId));
        });
      }
    });

    describe('examStaff.assertCanEnd (for end_exam)', () => {
      let exam: Json;
      let comanager: TestUser;
      let assigned: Json;
      let unassigned: Json;

      const actor = (user: TestUser, role: Role, instituteId = home): Actor => ({
        id: user.id,
        instituteId,
        role,
      });
      const canEnd = (who: Actor, id: string | number) => server.app.services.examStaff.assertCanEnd(who, id);
      const isNotFound = (id: Scalar) => (error: unknown) =>
        error instanceof NotFound && error.message === `Couldn't find Student Session with 'id'=${id}`;
      const isForbidden = (error: unknown) => error instanceof Forbidden;

      before(async () => {
        exam = await createExam(owner, 'Ending');
        comanager = await server.user(home, 'teacher');
        comanagerIn(await addComanager(owner, exam.id as number, comanager.id));
        assigned = await createStudent(owner, exam.id as number);
        unassigned = await createStudent(owner, exam.id as number);
        assignmentIn(await assignProctor(owner, assigned.id as number, proctor.id));
      });

      it('lets whoever manages the exam end any of its sessions, returning the session and its exam', async () => {
        for (const who of [
          actor(owner, 'teacher'),
          actor(comanager, 'teacher'),
          actor(admin, 'administrator'),
          actor(superuser, 'superuser', elsewhere),
        ]) {
          const found = await canEnd(who, unassigned.id as number);
          assert.equal(found.session.id, unassigned.id);
          assert.equal(found.exam.id, exam.id);
        }
      });

      it('lets the proctor assigned to a session end it', async () => {
        const found = await canEnd(actor(proctor, 'proctor'), assigned.id as number);
        assert.equal(found.session.proctorId, proctor.id);
      });

      it('lets a global_proctor assigned to a session end it', async () => {
        const session = await createStudent(owner, exam.id as number);
        assignmentIn(await assignProctor(owner, session.id as number, globalProctor.id));
        const found = await canEnd(actor(globalProctor, 'global_proctor'), session.id as number);
        assert.equal(found.session.id, session.id);
      });

      it('refuses (Forbidden) a proctor on a session not assigned to it', async () => {
        await assert.rejects(canEnd(actor(proctor, 'proctor'), unassigned.id as number), isForbidden);
        await assert.rejects(
          canEnd(actor(globalProctor, 'global_proctor'), assigned.id as number),
          isForbidden,
        );
      });

      it('refuses (Forbidden) the proctor once it is unassigned', async () => {
        const session = await createStudent(owner, exam.id as number);
        assignmentIn(await assignProctor(owner, session.id as number, proctor.id));
        await canEnd(actor(proctor, 'proctor'), session.id as number);
        studentIn(await unassignProctor(owner, session.id as number));
        await assert.rejects(canEnd(actor(proctor, 'proctor'), session.id as number), isForbidden);
      });

      it('refuses (Forbidden) reviewers and auditors of the institute', async () => {
        await assert.rejects(canEnd(actor(reviewer, 'reviewer'), assigned.id as number), isForbidden);
        await assert.rejects(canEnd(actor(auditor, 'auditor'), assigned.id as number), isForbidden);
      });

      it('answers NotFound for those who may not see the session, as for an unknown id', async () => {
        const id = assigned.id as number;
        await assert.rejects(canEnd(actor(otherTeacher, 'teacher'), id), isNotFound(id));
        await assert.rejects(canEnd(actor(outsideAdmin, 'administrator', elsewhere), id), isNotFound(id));
        await assert.rejects(canEnd(actor(outsideProctor, 'proctor', elsewhere), id), isNotFound(id));
        await assert.rejects(canEnd(actor(owner, 'teacher'), 999999), isNotFound(999999));
        await assert.rejects(canEnd(actor(owner, 'teacher'), 'abc'), isNotFound('abc'));
      });

      it('answers NotFound once the exam is deleted, even to its assigned proctor', async () => {
        const doomed = await createExam(owner, 'Ending, deleted');
        const session = await createStudent(owner, doomed.id as number);
        assignmentIn(await assignProctor(owner, session.id as number, proctor.id));
        assertAnswer(await owner.client.v3('DELETE', '/exams/:id', { id: doomed.id as number }), 200, {});
        await assert.rejects(
          canEnd(actor(proctor, 'proctor'), session.id as number),
          isNotFound(session.id as number),
        );
      });
    });
  });
}
