import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { HttpAnswer } from '../../helpers/http.ts';
import { DIALECTS, startTestServer, TestClock, type TestServer } from '../../helpers/server.ts';
import type { Scalar } from '../../helpers/signing.ts';
import { object } from '../../helpers/json.ts';
import { article, invalid, missing, NOT_AUTHORIZED, notFound } from '../../helpers/answers.ts';

type Json = Record<string, unknown>;
type TestUser = Awaited<ReturnType<TestServer['user']>>;

const ISO_MILLIS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Every field of the V3 lti_resource record, in order (contract §6). */
const LTI_RESOURCE_FIELDS = [
  'id',
  'institute_id',
  'tool_provider_id',
  'exam_id',
  'resource_link_id',
  'context_id',
  'title',
  'created_at',
  'updated_at',
];

/** The LMS fields of the V3 student record. */
const LMS_FIELDS = ['student_lms_id', 'resource_link_id', 'context_id', 'lti_resource_id'];

function resourceIn(answer: HttpAnswer): Json {
  const body = object(answer.json, 'body');
  assert.deepEqual(Object.keys(body), ['lti_resource'], answer.text);
  return object(body.lti_resource, 'lti_resource');
}

function resourcesIn(answer: HttpAnswer): Json[] {
  assert.equal(answer.status, 200, answer.text);
  const body = object(answer.json, 'body');
  assert.deepEqual(Object.keys(body), ['lti_resources']);
  const list = body.lti_resources;
  assert.ok(Array.isArray(list), 'lti_resources is an array');
  return list.map((item) => object(item, 'lti_resource'));
}

function studentIn(answer: HttpAnswer): Json {
  const body = object(answer.json, 'body');
  assert.deepEqual(Object.keys(body), ['student'], answer.text);
  return object(body.student, 'student');
}

function lmsNotFound(lmsId: string, linkId: string): Json {
  return { error: `Couldn't find Student Session with 'id'=${lmsId} and 'resource_link_id'=${linkId}` };
}

let sequence = 0;
function unique(prefix: string): string {
  sequence += 1;
  return `${prefix}-${sequence}-${Math.random().toString(36).slice(2, 8)}`;
}

for (const dialect of DIALECTS) {
  describe(`V3 LTI resources [${dialect}]`, () => {
    const clock = new TestClock(Math.floor(Date.now() / 1000) * 1000);
    let server: TestServer;
    let home: number;
    let elsewhere: number;
    let admin: TestUser;
    let teacher: TestUser;
    let auditor: TestUser;
    let proctor: TestUser;
    let reviewer: TestUser;
    let superuser: TestUser;
    let otherAdmin: TestUser;
    let provider: Json;
    let foreignProvider: Json;
    let exam: Json;
    let foreignExam: Json;

    function v3(user: TestUser, method: string, template: string, params: Record<string, Scalar> = {}) {
      return user.client.v3(method, template, params);
    }

    async function createProvider(user: TestUser, extra: Record<string, Scalar> = {}): Promise<Json> {
      const answer = await v3(user, 'POST', '/tool_providers', {
        name: unique('LMS'),
        lti_version: '1.1',
        consumer_key: unique('key'),
        shared_secret: unique('secret'),
        ...extra,
      });
      assert.equal(answer.status, 201, answer.text);
      return object(object(answer.json, 'body').tool_provider, 'tool_provider');
    }

    async function createExam(user: TestUser, name: string): Promise<Json> {
      const answer = await v3(user, 'POST', '/exams', { name, type: 'classroom', duration_minutes: 60 });
      assert.equal(answer.status, 201, answer.text);
      return object(object(answer.json, 'body').exam, 'exam');
    }

    async function createResource(user: TestUser, params: Record<string, Scalar> = {}): Promise<Json> {
      const answer = await v3(user, 'POST', '/lti_resources', {
        tool_provider_id: provider.id as number,
        resource_link_id: unique('link'),
        ...params,
      });
      assert.equal(answer.status, 201, answer.text);
      return resourceIn(answer);
    }

    async function createStudent(
      user: TestUser,
      examId: Scalar,
      params: Record<string, Scalar> = {},
    ): Promise<HttpAnswer> {
      return v3(user, 'POST', '/exams/:exam_id/student_sessions', {
        exam_id: examId,
        name: 'Lena',
        email: `${unique('student')}@example.org`,
        ...params,
      });
    }

    before(async () => {
      server = await startTestServer(dialect, { clock });
      home = await server.institute();
      elsewhere = await server.institute();
      admin = await server.user(home, 'administrator');
      teacher = await server.user(home, 'teacher');
      auditor = await server.user(home, 'auditor');
      proctor = await server.user(home, 'proctor');
      reviewer = await server.user(home, 'reviewer');
      superuser = await server.user(home, 'superuser');
      otherAdmin = await server.user(elsewhere, 'administrator');
      provider = await createProvider(admin);
      foreignProvider = await createProvider(otherAdmin);
      exam = await createExam(teacher, 'Launched exam');
      foreignExam = await createExam(otherAdmin, 'Foreign exam');
    });

    after(async () => {
      await server.close();
    });

    describe('POST /api/v3/lti_resources', () => {
      it('answers 201 with the full record in the institute of its tool provider', async () => {
        const answer = await v3(admin, 'POST', '/lti_resources', {
          tool_provider_id: provider.id as number,
          exam_id: exam.id as number,
          resource_link_id: 'rl-course-101',
          context_id: 'course-101',
          title: 'Midterm (Moodle)',
        });
        assert.equal(answer.status, 201, answer.text);
        const resource = resourceIn(answer);
        assert.deepEqual(Object.keys(resource), LTI_RESOURCE_FIELDS);
        assert.ok(Number.isInteger(resource.id) && (resource.id as number) > 0);
        assert.equal(resource.institute_id, home);
        assert.equal(resource.tool_provider_id, provider.id);
        assert.equal(resource.exam_id, exam.id);
        assert.equal(resource.resource_link_id, 'rl-course-101');
        assert.equal(resource.context_id, 'course-101');
        assert.equal(resource.title, 'Midterm (Moodle)');
        assert.match(String(resource.created_at), ISO_MILLIS);
        assert.equal(resource.created_at, new Date(clock.now()).toISOString());
        assert.equal(resource.updated_at, resource.created_at);
      });

      it('leaves exam_id, context_id and title null when they are not sent', async () => {
        const resource = await createResource(admin);
        assert.equal(resource.exam_id, null);
        assert.equal(resource.context_id, null);
        assert.equal(resource.title, null);
      });

      for (const name of ['tool_provider_id', 'resource_link_id']) {
        it(`answers 422 naming a missing ${name}`, async () => {
          const params: Record<string, Scalar> = {
            tool_provider_id: provider.id as number,
            resource_link_id: 'x',
          };
          delete params[name];
          const answer = await v3(admin, 'POST', '/lti_resources', params);
          assert.equal(answer.status, 422, answer.text);
          assert.deepEqual(answer.json, missing(name));
          const blank = await v3(admin, 'POST', '/lti_resources', { ...params, [name]: ' ' });
          assert.deepEqual(blank.json, missing(name));
        });
      }

      it("answers 404 Tool Provider for an unknown one and another institute's", async () => {
        for (const id of [999999, foreignProvider.id as number, 'abc']) {
          const answer = await v3(admin, 'POST', '/lti_resources', {
            tool_provider_id: id,
            resource_link_id: 'x',
          });
          assert.equal(answer.status, 404, answer.text);
          assert.deepEqual(answer.json, notFound('Tool Provider', id));
        }
      });

      it("answers 404 Exam for an unknown exam and another institute's", async () => {
        for (const id of [999999, foreignExam.id as number]) {
          const answer = await v3(admin, 'POST', '/lti_resources', {
            tool_provider_id: provider.id as number,
            resource_link_id: unique('link'),
            exam_id: id,
          });
          assert.equal(answer.status, 404, answer.text);
          assert.deepEqual(answer.json, notFound('Exam', id));
        }
      });

      it("answers 422 to a superuser linking an exam outside the provider's institute", async () => {
        const answer = await v3(superuser, 'POST', '/lti_resources', {
          tool_provider_id: provider.id as number,
          resource_link_id: unique('link'),
          exam_id: foreignExam.id as number,
        });
        assert.equal(answer.status, 422, answer.text);
        assert.deepEqual(answer.json, invalid('exam_id', "must be an exam of the tool provider's institute"));
      });

      it('lets a superuser create a resource for another institute, which takes that institute', async () => {
        const answer = await v3(superuser, 'POST', '/lti_resources', {
          tool_provider_id: foreignProvider.id as number,
          resource_link_id: unique('link'),
          exam_id: foreignExam.id as number,
        });
        assert.equal(answer.status, 201, answer.text);
        assert.equal(resourceIn(answer).institute_id, elsewhere);
      });

      it('answers 422 for a resource_link_id its tool provider already has, and accepts it for another', async () => {
        const first = await createResource(admin);
        const again = await v3(admin, 'POST', '/lti_resources', {
          tool_provider_id: provider.id as number,
          resource_link_id: first.resource_link_id as string,
        });
        assert.equal(again.status, 422, again.text);
        assert.deepEqual(again.json, invalid('resource_link_id', 'has already been taken'));
        const second = await createProvider(admin);
        const elsewhereOk = await v3(admin, 'POST', '/lti_resources', {
          tool_provider_id: second.id as number,
          resource_link_id: first.resource_link_id as string,
        });
        assert.equal(elsewhereOk.status, 201, elsewhereOk.text);
      });

      for (const role of ['teacher', 'auditor', 'proctor', 'reviewer'] as const) {
        it(`answers 403 to ${article(role)}, before reading the parameters`, async () => {
          const user = { teacher, auditor, proctor, reviewer }[role];
          const answer = await v3(user, 'POST', '/lti_resources', {
            tool_provider_id: provider.id as number,
            resource_link_id: unique('link'),
          });
          assert.equal(answer.status, 403, answer.text);
          assert.deepEqual(answer.json, NOT_AUTHORIZED);
          const empty = await v3(user, 'POST', '/lti_resources', {});
          assert.deepEqual(empty.json, NOT_AUTHORIZED);
        });
      }
    });

    describe('GET /api/v3/lti_resources/:id', () => {
      let resource: Json;
      let foreign: Json;

      before(async () => {
        resource = await createResource(admin, { exam_id: exam.id as number, title: 'Shown' });
        const answer = await v3(otherAdmin, 'POST', '/lti_resources', {
          tool_provider_id: foreignProvider.id as number,
          resource_link_id: unique('link'),
        });
        foreign = resourceIn(answer);
      });

      for (const role of ['administrator', 'teacher', 'auditor', 'superuser'] as const) {
        it(`shows the record to a${role === 'administrator' || role === 'auditor' ? 'n' : ''} ${role}`, async () => {
          const user = { administrator: admin, teacher, auditor, superuser }[role];
          const answer = await v3(user, 'GET', '/lti_resources/:id', { id: resource.id as number });
          assert.equal(answer.status, 200, answer.text);
          assert.deepEqual(resourceIn(answer), resource);
        });
      }

      for (const role of ['proctor', 'reviewer'] as const) {
        it(`answers 403 to ${article(role)}`, async () => {
          const user = role === 'proctor' ? proctor : reviewer;
          const answer = await v3(user, 'GET', '/lti_resources/:id', { id: resource.id as number });
          assert.equal(answer.status, 403, answer.text);
          assert.deepEqual(answer.json, NOT_AUTHORIZED);
        });
      }

      it("answers 404, the body of a missing one, for another institute's resource and unknown ids", async () => {
        const answer = await v3(admin, 'GET', '/lti_resources/:id', { id: foreign.id as number });
        assert.equal(answer.status, 404, answer.text);
        assert.deepEqual(answer.json, notFound('Lti Resource', foreign.id as number));
        for (const id of [999999, 'nope']) {
          const unknown = await v3(admin, 'GET', '/lti_resources/:id', { id });
          assert.equal(unknown.status, 404, unknown.text);
          assert.deepEqual(unknown.json, notFound('Lti Resource', id));
        }
      });
    });

    describe('GET /api/v3/lti_resources', () => {
      let listAdmin: TestUser;
      let listAuditor: TestUser;
      let listReviewer: TestUser;
      let ids: number[];
      let listExamId: number;

      before(async () => {
        const listed = await server.institute();
        listAdmin = await server.user(listed, 'administrator');
        listAuditor = await server.user(listed, 'auditor');
        listReviewer = await server.user(listed, 'reviewer');
        const listProvider = await createProvider(listAdmin);
        listExamId = (await createExam(listAdmin, 'Listed')).id as number;
        ids = [];
        for (const [link, linked] of [
          ['c-link', true],
          ['a-link', false],
          ['b-link', true],
        ] as const) {
          const answer = await v3(listAdmin, 'POST', '/lti_resources', {
            tool_provider_id: listProvider.id as number,
            resource_link_id: link,
            ...(linked ? { exam_id: listExamId } : {}),
          });
          ids.push(resourceIn(answer).id as number);
        }
      });

      it("lists the institute's resources by id, with the pagination headers", async () => {
        const answer = await v3(listAuditor, 'GET', '/lti_resources');
        assert.deepEqual(
          resourcesIn(answer).map((item) => item.id),
          ids,
        );
        assert.equal(answer.headers['x-pagination-item-count'], '3');
        assert.equal(answer.headers['x-pagination-page-count'], '1');
        assert.equal(answer.headers['x-pagination-page'], '1');
        assert.equal(answer.headers['x-pagination-limit'], '300');
      });

      it('filters on a null exam_id, sorts on resource_link_id and pages', async () => {
        const unlinked = await v3(listAdmin, 'GET', '/lti_resources', {
          filter: JSON.stringify({ exam_id: { null: true } }),
        });
        assert.deepEqual(
          resourcesIn(unlinked).map((item) => item.resource_link_id),
          ['a-link'],
        );
        const linked = await v3(listAdmin, 'GET', '/lti_resources', {
          filter: JSON.stringify({ exam_id: { eq: listExamId } }),
          sort: JSON.stringify([{ resource_link_id: 'asc' }]),
        });
        assert.deepEqual(
          resourcesIn(linked).map((item) => item.resource_link_id),
          ['b-link', 'c-link'],
        );
        const paged = await v3(listAdmin, 'GET', '/lti_resources', { limit: 1, page: 3 });
        assert.deepEqual(
          resourcesIn(paged).map((item) => item.id),
          [ids[2]],
        );
        assert.equal(paged.headers['x-pagination-page-count'], '3');
      });

      it('answers 422 naming an unknown sort field', async () => {
        const answer = await v3(listAdmin, 'GET', '/lti_resources', {
          sort: JSON.stringify([{ colour: 'asc' }]),
        });
        assert.equal(answer.status, 422, answer.text);
        assert.deepEqual(answer.json, invalid('sort', 'has an unknown field: colour'));
      });

      it('answers 403 to a reviewer', async () => {
        const answer = await v3(listReviewer, 'GET', '/lti_resources');
        assert.equal(answer.status, 403, answer.text);
        assert.deepEqual(answer.json, NOT_AUTHORIZED);
      });

      it("lists every institute's resources to a superuser", async () => {
        const answer = await v3(superuser, 'GET', '/lti_resources', {
          filter: JSON.stringify({ institute_id: { in: [home, elsewhere] } }),
        });
        const institutes = new Set(resourcesIn(answer).map((item) => item.institute_id));
        assert.deepEqual([...institutes].sort(), [home, elsewhere].sort());
      });
    });

    describe('PATCH and PUT /api/v3/lti_resources/:id', () => {
      it('links, retitles and unlinks an exam', async () => {
        const resource = await createResource(admin);
        clock.current += 1000;
        const linked = await v3(admin, 'PATCH', '/lti_resources/:id', {
          id: resource.id as number,
          exam_id: exam.id as number,
          title: 'Now linked',
        });
        assert.equal(linked.status, 200, linked.text);
        const saved = resourceIn(linked);
        assert.equal(saved.exam_id, exam.id);
        assert.equal(saved.title, 'Now linked');
        assert.equal(saved.resource_link_id, resource.resource_link_id);
        assert.equal(saved.updated_at, new Date(clock.now()).toISOString());
        const unlinked = await v3(admin, 'PUT', '/lti_resources/:id', {
          id: resource.id as number,
          exam_id: '',
        });
        assert.equal(unlinked.status, 200, unlinked.text);
        assert.equal(resourceIn(unlinked).exam_id, null);
        assert.equal(resourceIn(unlinked).title, 'Now linked');
      });

      it('answers 422 naming a blank resource_link_id and a taken one', async () => {
        const first = await createResource(admin);
        const second = await createResource(admin);
        const blank = await v3(admin, 'PATCH', '/lti_resources/:id', {
          id: second.id as number,
          resource_link_id: '',
        });
        assert.deepEqual(blank.json, missing('resource_link_id'));
        const taken = await v3(admin, 'PATCH', '/lti_resources/:id', {
          id: second.id as number,
          resource_link_id: first.resource_link_id as string,
        });
        assert.equal(taken.status, 422, taken.text);
        assert.deepEqual(taken.json, invalid('resource_link_id', 'has already been taken'));
        const same = await v3(admin, 'PATCH', '/lti_resources/:id', {
          id: second.id as number,
          resource_link_id: second.resource_link_id as string,
        });
        assert.equal(same.status, 200, same.text);
      });

      it("answers 404 for another institute's exam or tool provider", async () => {
        const resource = await createResource(admin);
        const examAnswer = await v3(admin, 'PATCH', '/lti_resources/:id', {
          id: resource.id as number,
          exam_id: foreignExam.id as number,
        });
        assert.deepEqual(examAnswer.json, notFound('Exam', foreignExam.id as number));
        const providerAnswer = await v3(admin, 'PATCH', '/lti_resources/:id', {
          id: resource.id as number,
          tool_provider_id: foreignProvider.id as number,
        });
        assert.deepEqual(providerAnswer.json, notFound('Tool Provider', foreignProvider.id as number));
      });

      for (const role of ['teacher', 'auditor', 'proctor', 'reviewer'] as const) {
        it(`answers 403 to ${article(role)}`, async () => {
          const resource = await createResource(admin);
          const user = { teacher, auditor, proctor, reviewer }[role];
          const answer = await v3(user, 'PATCH', '/lti_resources/:id', {
            id: resource.id as number,
            title: 'No',
          });
          assert.equal(answer.status, 403, answer.text);
          assert.deepEqual(answer.json, NOT_AUTHORIZED);
        });
      }

      it("answers 404 to another institute's administrator, the body of a missing one", async () => {
        const resource = await createResource(admin);
        const answer = await v3(otherAdmin, 'PATCH', '/lti_resources/:id', {
          id: resource.id as number,
          title: 'No',
        });
        assert.equal(answer.status, 404, answer.text);
        assert.deepEqual(answer.json, notFound('Lti Resource', resource.id as number));
      });
    });

    describe('DELETE /api/v3/lti_resources/:id', () => {
      it('deletes the resource; sessions that came through it keep their LMS ids', async () => {
        const resource = await createResource(admin, { exam_id: exam.id as number, context_id: 'ctx-del' });
        const created = await createStudent(teacher, exam.id as number, {
          student_lms_id: 'lms-del',
          lti_resource_id: resource.id as number,
        });
        const student = studentIn(created);
        const answer = await v3(admin, 'DELETE', '/lti_resources/:id', { id: resource.id as number });
        assert.equal(answer.status, 200, answer.text);
        assert.deepEqual(answer.json, {});
        const gone = await v3(admin, 'GET', '/lti_resources/:id', { id: resource.id as number });
        assert.deepEqual(gone.json, notFound('Lti Resource', resource.id as number));
        const shown = studentIn(
          await v3(teacher, 'GET', '/student_sessions/:id', { id: student.id as number }),
        );
        assert.equal(shown.lti_resource_id, null);
        assert.equal(shown.student_lms_id, 'lms-del');
        assert.equal(shown.resource_link_id, resource.resource_link_id);
        assert.equal(shown.context_id, 'ctx-del');
      });

      for (const role of ['teacher', 'auditor', 'proctor', 'reviewer'] as const) {
        it(`answers 403 to ${article(role)}`, async () => {
          const resource = await createResource(admin);
          const user = { teacher, auditor, proctor, reviewer }[role];
          const answer = await v3(user, 'DELETE', '/lti_resources/:id', { id: resource.id as number });
          assert.equal(answer.status, 403, answer.text);
          assert.deepEqual(answer.json, NOT_AUTHORIZED);
        });
      }

      it("answers 404 for another institute's resource and an unknown id", async () => {
        const resource = await createResource(admin);
        const answer = await v3(otherAdmin, 'DELETE', '/lti_resources/:id', { id: resource.id as number });
        assert.deepEqual(answer.json, notFound('Lti Resource', resource.id as number));
        const unknown = await v3(admin, 'DELETE', '/lti_resources/:id', { id: 999999 });
        assert.equal(unknown.status, 404, unknown.text);
        assert.deepEqual(unknown.json, notFound('Lti Resource', 999999));
      });
    });

    describe('student sessions from an LMS', () => {
      it('creates a session with the LMS fields and shows them in the record', async () => {
        const answer = await createStudent(teacher, exam.id as number, {
          student_lms_id: 'lms-user-1',
          resource_link_id: 'rl-free',
          context_id: 'ctx-free',
        });
        assert.equal(answer.status, 201, answer.text);
        const student = studentIn(answer);
        assert.equal(student.student_lms_id, 'lms-user-1');
        assert.equal(student.resource_link_id, 'rl-free');
        assert.equal(student.context_id, 'ctx-free');
        assert.equal(student.lti_resource_id, null);
        const row = await server.app.database.db
          .selectFrom('student_sessions')
          .select(['lms_user_id', 'resource_link_id', 'context_id'])
          .where('id', '=', student.id as number)
          .executeTakeFirstOrThrow();
        assert.deepEqual(
          { ...row },
          { lms_user_id: 'lms-user-1', resource_link_id: 'rl-free', context_id: 'ctx-free' },
        );
      });

      it('answers the LMS fields as null for a session created without them', async () => {
        const student = studentIn(await createStudent(teacher, exam.id as number));
        for (const field of LMS_FIELDS) assert.equal(student[field], null, field);
      });

      it('takes resource_link_id and context_id from lti_resource_id unless they are sent', async () => {
        const resource = await createResource(admin, {
          exam_id: exam.id as number,
          context_id: 'ctx-from-resource',
        });
        const filled = studentIn(
          await createStudent(teacher, exam.id as number, {
            student_lms_id: 'lms-filled',
            lti_resource_id: resource.id as number,
          }),
        );
        assert.equal(filled.lti_resource_id, resource.id);
        assert.equal(filled.resource_link_id, resource.resource_link_id);
        assert.equal(filled.context_id, 'ctx-from-resource');
        const sent = studentIn(
          await createStudent(teacher, exam.id as number, {
            lti_resource_id: resource.id as number,
            resource_link_id: 'rl-own',
            context_id: '',
          }),
        );
        assert.equal(sent.resource_link_id, 'rl-own');
        assert.equal(sent.context_id, null);
      });

      it("answers 404 Lti Resource for an unknown resource and another institute's", async () => {
        const foreign = resourceIn(
          await v3(otherAdmin, 'POST', '/lti_resources', {
            tool_provider_id: foreignProvider.id as number,
            resource_link_id: unique('link'),
          }),
        );
        for (const id of [999999, foreign.id as number]) {
          const answer = await createStudent(teacher, exam.id as number, { lti_resource_id: id });
          assert.equal(answer.status, 404, answer.text);
          assert.deepEqual(answer.json, notFound('Lti Resource', id));
        }
      });

      it('answers 422 for an LTI resource linked to another exam', async () => {
        const otherExam = await createExam(teacher, 'Other exam');
        const resource = await createResource(admin, { exam_id: otherExam.id as number });
        const answer = await createStudent(teacher, exam.id as number, {
          lti_resource_id: resource.id as number,
        });
        assert.equal(answer.status, 422, answer.text);
        assert.deepEqual(answer.json, invalid('lti_resource_id', 'is linked to another exam'));
      });

      it('updates and clears the LMS fields', async () => {
        const student = studentIn(await createStudent(teacher, exam.id as number));
        const resource = await createResource(admin, { exam_id: exam.id as number });
        const set = await v3(teacher, 'PATCH', '/student_sessions/:id', {
          id: student.id as number,
          student_lms_id: 'lms-later',
          lti_resource_id: resource.id as number,
        });
        assert.equal(set.status, 200, set.text);
        const saved = studentIn(set);
        assert.equal(saved.student_lms_id, 'lms-later');
        assert.equal(saved.lti_resource_id, resource.id);
        assert.equal(saved.resource_link_id, resource.resource_link_id);
        const cleared = studentIn(
          await v3(teacher, 'PUT', '/student_sessions/:id', {
            id: student.id as number,
            student_lms_id: '',
            lti_resource_id: null,
          }),
        );
        assert.equal(cleared.student_lms_id, null);
        assert.equal(cleared.lti_resource_id, null);
        assert.equal(cleared.resource_link_id, resource.resource_link_id, 'unsent fields are kept');
      });

      it('filters the sessions of an exam on student_lms_id', async () => {
        const lmsId = unique('lms-filter');
        const student = studentIn(await createStudent(teacher, exam.id as number, { student_lms_id: lmsId }));
        const answer = await v3(teacher, 'GET', '/exams/:exam_id/student_sessions', {
          exam_id: exam.id as number,
          filter: JSON.stringify({ student_lms_id: { eq: lmsId } }),
        });
        assert.equal(answer.status, 200, answer.text);
        const students = object(answer.json, 'body').students as Json[];
        assert.deepEqual(
          students.map((item) => item.id),
          [student.id],
        );
      });
    });

    describe('GET /api/v3/exams/:id/show_lti_student', () => {
      let lmsExam: Json;
      let first: Json;
      let other: Json;

      before(async () => {
        lmsExam = await createExam(teacher, 'LMS exam');
        first = studentIn(
          await createStudent(teacher, lmsExam.id as number, {
            student_lms_id: 'u-42',
            resource_link_id: 'rl-42',
            context_id: 'course-7',
          }),
        );
        other = studentIn(
          await createStudent(teacher, lmsExam.id as number, {
            student_lms_id: 'u-43',
            resource_link_id: 'rl-42',
          }),
        );
      });

      function showLti(user: TestUser, examId: Scalar, params: Record<string, Scalar>) {
        return v3(user, 'GET', '/exams/:id/show_lti_student', { id: examId, ...params });
      }

      it('answers the session the LMS ids name, without context_id', async () => {
        const answer = await showLti(teacher, lmsExam.id as number, {
          student_lms_id: 'u-42',
          resource_link_id: 'rl-42',
        });
        assert.equal(answer.status, 200, answer.text);
        const student = studentIn(answer);
        assert.equal(student.id, first.id);
        const shown = studentIn(
          await v3(teacher, 'GET', '/student_sessions/:id', { id: first.id as number }),
        );
        assert.deepEqual(student, shown, 'the full student record, as GET /student_sessions/:id answers it');
      });

      it('answers the session with a matching context_id', async () => {
        const answer = await showLti(teacher, lmsExam.id as number, {
          student_lms_id: 'u-42',
          resource_link_id: 'rl-42',
          context_id: 'course-7',
        });
        assert.equal(answer.status, 200, answer.text);
        assert.equal(studentIn(answer).id, first.id);
        const blank = await showLti(teacher, lmsExam.id as number, {
          student_lms_id: 'u-43',
          resource_link_id: 'rl-42',
          context_id: '',
        });
        assert.equal(studentIn(blank).id, other.id, 'an empty context_id counts as not sent');
      });

      it('answers 404 with the exact message when no session has the LMS ids', async () => {
        const answer = await showLti(teacher, lmsExam.id as number, {
          student_lms_id: 'u-99',
          resource_link_id: 'rl-42',
        });
        assert.equal(answer.status, 404, answer.text);
        assert.deepEqual(answer.json, lmsNotFound('u-99', 'rl-42'));
        const otherLink = await showLti(teacher, lmsExam.id as number, {
          student_lms_id: 'u-42',
          resource_link_id: 'rl-other',
        });
        assert.deepEqual(otherLink.json, lmsNotFound('u-42', 'rl-other'));
      });

      it('answers 404 with the exact message, naming no context, when the context_id differs', async () => {
        const answer = await showLti(teacher, lmsExam.id as number, {
          student_lms_id: 'u-42',
          resource_link_id: 'rl-42',
          context_id: 'course-8',
        });
        assert.equal(answer.status, 404, answer.text);
        assert.deepEqual(answer.json, lmsNotFound('u-42', 'rl-42'));
        const noContext = await showLti(teacher, lmsExam.id as number, {
          student_lms_id: 'u-43',
          resource_link_id: 'rl-42',
          context_id: 'course-7',
        });
        assert.deepEqual(noContext.json, lmsNotFound('u-43', 'rl-42'));
      });

      it('looks in this exam only', async () => {
        const answer = await showLti(teacher, exam.id as number, {
          student_lms_id: 'u-42',
          resource_link_id: 'rl-42',
        });
        assert.equal(answer.status, 404, answer.text);
        assert.deepEqual(answer.json, lmsNotFound('u-42', 'rl-42'));
      });

      it('answers the latest attempt', async () => {
        const attemptExam = await createExam(teacher, 'Attempts');
        const email = `${unique('again')}@example.org`;
        const params = { email, student_lms_id: 'u-7', resource_link_id: 'rl-7' };
        studentIn(await createStudent(teacher, attemptExam.id as number, params));
        const second = studentIn(
          await createStudent(teacher, attemptExam.id as number, { ...params, attempt: 1 }),
        );
        const answer = await showLti(teacher, attemptExam.id as number, {
          student_lms_id: 'u-7',
          resource_link_id: 'rl-7',
        });
        assert.equal(studentIn(answer).id, second.id);
        assert.equal(studentIn(answer).attempt, 1);
      });

      for (const name of ['student_lms_id', 'resource_link_id']) {
        it(`answers 422 naming a missing or empty ${name}`, async () => {
          const params: Record<string, Scalar> = { student_lms_id: 'u-42', resource_link_id: 'rl-42' };
          delete params[name];
          const answer = await showLti(teacher, lmsExam.id as number, params);
          assert.equal(answer.status, 422, answer.text);
          assert.deepEqual(answer.json, missing(name));
          const empty = await showLti(teacher, lmsExam.id as number, { ...params, [name]: '' });
          assert.deepEqual(empty.json, missing(name));
        });
      }

      it('answers 404 Exam for an unknown exam, a foreign one, and one the teacher does not manage', async () => {
        const colleague = await server.user(home, 'teacher');
        const params = { student_lms_id: 'u-42', resource_link_id: 'rl-42' };
        for (const [user, id] of [
          [teacher, 999999],
          [teacher, foreignExam.id as number],
          [colleague, lmsExam.id as number],
        ] as const) {
          const answer = await showLti(user, id, params);
          assert.equal(answer.status, 404, answer.text);
          assert.deepEqual(answer.json, notFound('Exam', id));
        }
      });

      it('answers a proctor and an auditor of the institute, who read its exams', async () => {
        for (const user of [proctor, auditor, admin]) {
          const answer = await showLti(user, lmsExam.id as number, {
            student_lms_id: 'u-42',
            resource_link_id: 'rl-42',
          });
          assert.equal(answer.status, 200, answer.text);
          assert.equal(studentIn(answer).id, first.id);
        }
      });
    });
  });
}
