import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ApiClient, type CallOptions } from '../../helpers/client.ts';
import type { HttpAnswer } from '../../helpers/http.ts';
import { DIALECTS, startTestServer, type TestServer } from '../../helpers/server.ts';
import type { Scalar } from '../../helpers/signing.ts';
import { object } from '../../helpers/json.ts';
import { NOT_AUTHORIZED } from '../../helpers/answers.ts';

type Json = Record<string, unknown>;
type TestUser = Awaited<ReturnType<TestServer['user']>>;

/** The V2 exam record's fields (api.md), and no others. */
const V2_EXAM_FIELDS = [
  'exam_id',
  'name',
  'start_time',
  'end_time',
  'duration',
  'upload_exam',
  'restrictions',
  'type',
  'mobile_cam',
  'user_id',
  'institute_id',
  'for_reviewing',
  'use_duration',
].sort();

/** A V2 answer with this status and no body at all. */
function assertEmpty(answer: HttpAnswer, status: number): void {
  assert.equal(answer.status, status, answer.text);
  assert.equal(answer.text, '');
}

function v2Exams(answer: HttpAnswer): Json[] {
  assert.equal(answer.status, 200, answer.text);
  const body = object(answer.json, 'body');
  assert.deepEqual(Object.keys(body), ['exams']);
  const list = body.exams;
  assert.ok(Array.isArray(list), 'exams is an array');
  return list.map((item) => object(item, 'exam'));
}

/** Creates an exam through V3 and returns its V3 record. */
async function createExam(user: TestUser, params: Record<string, Scalar>): Promise<Json> {
  const answer = await user.client.v3('POST', '/exams', {
    type: 'classroom',
    duration_minutes: 60,
    ...params,
  });
  assert.equal(answer.status, 201, answer.text);
  return object(object(answer.json, 'body').exam, 'exam');
}

function listV2(user: TestUser): Promise<HttpAnswer> {
  return user.client.v2('GET', '/exams');
}

for (const dialect of DIALECTS) {
  describe(`V2 exams [${dialect}]`, () => {
    let server: TestServer;
    let instituteId: number;
    let teacher: TestUser;
    let colleague: TestUser;
    let admin: TestUser;
    let detailed: Json;
    let plain: Json;
    let colleagues: Json;
    let deleted: Json;

    before(async () => {
      server = await startTestServer(dialect);
      instituteId = await server.institute();
      teacher = await server.user(instituteId, 'teacher');
      colleague = await server.user(instituteId, 'teacher');
      admin = await server.user(instituteId, 'administrator');
      detailed = await createExam(teacher, {
        name: 'Detailed <Final>',
        type: 'live_proctoring',
        duration_minutes: 90,
        start_time: '2026-11-21T09:30:00.750Z',
        end_time: '2026-11-21T12:00:00Z',
        mobile_cam: true,
        for_reviewing: true,
        upload_answers: true,
        restrictions: 'Use <b>only</b> pen & paper.\n\nNo phones.\nNo "notes".',
      });
      plain = await createExam(teacher, {
        name: 'Plain',
        type: 'demo',
        use_duration: false,
        duration_minutes: null,
      });
      colleagues = await createExam(colleague, { name: "Colleague's" });
      deleted = await createExam(teacher, { name: 'Deleted' });
      const gone = await teacher.client.v3('DELETE', '/exams/:id', { id: deleted.id as number });
      assert.equal(gone.status, 200, gone.text);
    });

    after(async () => {
      await server.close();
    });

    describe('GET /api/exams/:id', () => {
      it('answers {exam: record} in the V2 shape', async () => {
        const answer = await teacher.client.v2('GET', '/exams/:id', { id: plain.id as number });
        assert.equal(answer.status, 200, answer.text);
        const { exam } = answer.json as { exam: Json };
        assert.equal(exam.exam_id, plain.id);
        assert.deepEqual(Object.keys(exam).sort(), V2_EXAM_FIELDS);
      });

      it('answers 404 with an empty body for a missing, deleted or unseen exam', async () => {
        for (const [user, id] of [
          [teacher, 999999],
          [teacher, deleted.id as number],
          [colleague, plain.id as number],
        ] as const) {
          const answer = await user.client.v2('GET', '/exams/:id', { id });
          assert.equal(answer.status, 404);
          assert.equal(answer.text, '');
        }
      });
    });

    describe('GET /api/exams', () => {
      it("answers {exams: [...]} with the caller's own exams, oldest first", async () => {
        const exams = v2Exams(await listV2(teacher));
        assert.deepEqual(
          exams.map((exam) => exam.exam_id),
          [detailed.id, plain.id],
        );
      });

      it('gives exactly the V2 record fields', async () => {
        for (const exam of v2Exams(await listV2(teacher))) {
          assert.deepEqual(Object.keys(exam).sort(), V2_EXAM_FIELDS);
        }
      });

      it('gives times as whole epoch seconds and the V2 names of duration and uploads', async () => {
        const [exam] = v2Exams(await listV2(teacher));
        assert.deepEqual(exam, {
          exam_id: detailed.id,
          name: 'Detailed <Final>',
          start_time: Date.parse('2026-11-21T09:30:00Z') / 1000,
          end_time: Date.parse('2026-11-21T12:00:00Z') / 1000,
          duration: 90,
          upload_exam: true,
          restrictions:
            '<p>Use &lt;b&gt;only&lt;/b&gt; pen &amp; paper.</p>\n\n<p>No phones.\n<br />No &quot;notes&quot;.</p>',
          type: 'live_proctoring',
          mobile_cam: true,
          user_id: teacher.id,
          institute_id: instituteId,
          for_reviewing: true,
          use_duration: true,
        });
      });

      it('gives null times, a null duration, false flags and empty restrictions as <p></p>', async () => {
        const exam = v2Exams(await listV2(teacher))[1];
        assert.deepEqual(exam, {
          exam_id: plain.id,
          name: 'Plain',
          start_time: null,
          end_time: null,
          duration: null,
          upload_exam: false,
          restrictions: '<p></p>',
          type: 'demo',
          mobile_cam: false,
          user_id: teacher.id,
          institute_id: instituteId,
          for_reviewing: false,
          use_duration: false,
        });
      });

      it('formats restrictions as HTML: markup escaped, blank lines as paragraphs, newlines as <br />', async () => {
        const owner = await server.user(instituteId, 'teacher');
        const cases: [string, string][] = [
          ['<script>alert(1)</script>', '<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>'],
          ["It's <i>fine</i>", '<p>It&#39;s &lt;i&gt;fine&lt;/i&gt;</p>'],
          ['one\r\ntwo', '<p>one\n<br />two</p>'],
          ['first\n\n\nsecond\n \nthird', '<p>first</p>\n\n<p>second</p>\n\n<p>third</p>'],
          ['  padded  ', '<p>padded</p>'],
        ];
        for (const [restrictions] of cases) await createExam(owner, { name: 'Formatted', restrictions });
        const exams = v2Exams(await listV2(owner));
        assert.deepEqual(
          exams.map((exam) => exam.restrictions),
          cases.map(([, html]) => html),
        );
      });

      it("leaves out another teacher's exams", async () => {
        const mine = v2Exams(await listV2(teacher)).map((exam) => exam.exam_id);
        assert.ok(!mine.includes(colleagues.id));
        const theirs = v2Exams(await listV2(colleague)).map((exam) => exam.exam_id);
        assert.deepEqual(theirs, [colleagues.id]);
      });

      it("lists only an administrator's own exams, not its institute's", async () => {
        assert.deepEqual(v2Exams(await listV2(admin)), []);
        const own = await createExam(admin, { name: 'Admin own' });
        assert.deepEqual(
          v2Exams(await listV2(admin)).map((exam) => exam.exam_id),
          [own.id],
        );
      });

      it('includes the exams the caller co-manages', async () => {
        const comanager = await server.user(instituteId, 'teacher');
        await server.app.database.db
          .insertInto('exam_comanagers')
          .values({ exam_id: colleagues.id as number, user_id: comanager.id, created_at: Date.now() })
          .execute();
        assert.deepEqual(
          v2Exams(await listV2(comanager)).map((exam) => exam.exam_id),
          [colleagues.id],
        );
      });

      it('leaves out deleted exams', async () => {
        const ids = v2Exams(await listV2(teacher)).map((exam) => exam.exam_id);
        assert.ok(!ids.includes(deleted.id));
      });

      it("leaves out another institute's exams", async () => {
        const elsewhere = await server.user(await server.institute(), 'administrator');
        const theirs = await createExam(elsewhere, { name: 'Elsewhere' });
        assert.deepEqual(
          v2Exams(await listV2(elsewhere)).map((exam) => exam.exam_id),
          [theirs.id],
        );
        assert.ok(!v2Exams(await listV2(teacher)).some((exam) => exam.exam_id === theirs.id));
      });

      it('answers {exams: []} to a user without exams', async () => {
        const newcomer = await server.user(instituteId, 'teacher');
        assert.deepEqual((await listV2(newcomer)).json, { exams: [] });
      });

      it('reads a signed form body too', async () => {
        const answer = await teacher.client.v2('GET', '/exams', {}, { as: 'form' });
        assert.deepEqual(
          v2Exams(answer).map((exam) => exam.exam_id),
          [detailed.id, plain.id],
        );
      });

      describe('authentication failures', () => {
        it('answers 403 with the message to a wrong signature', async () => {
          const answer = await teacher.client.v2('GET', '/exams', {}, { signature: 'f'.repeat(64) });
          assert.equal(answer.status, 403, answer.text);
          assert.deepEqual(answer.json, NOT_AUTHORIZED);
        });

        it('answers 403 with the message to an unsigned request', async () => {
          const answer = await teacher.client.v2('GET', '/exams', {}, { unsigned: true });
          assert.equal(answer.status, 403, answer.text);
          assert.deepEqual(answer.json, NOT_AUTHORIZED);
        });

        it('answers 403 with the message to an unknown api_token', async () => {
          const stranger = new ApiClient(server.baseUrl, {
            apiToken: 'no-such-token',
            secretKey: 'whatever',
          });
          const answer = await stranger.v2('GET', '/exams');
          assert.equal(answer.status, 403, answer.text);
          assert.deepEqual(answer.json, NOT_AUTHORIZED);
        });

        it("answers 403 with the message when signed with another user's secret", async () => {
          const forged = new ApiClient(server.baseUrl, {
            apiToken: teacher.credentials.apiToken,
            secretKey: colleague.credentials.secretKey,
          });
          const answer = await forged.v2('GET', '/exams');
          assert.equal(answer.status, 403, answer.text);
          assert.deepEqual(answer.json, NOT_AUTHORIZED);
        });

        it('answers 403 with the message to a timestamp outside the window', async () => {
          const answer = await teacher.client.v2(
            'GET',
            '/exams',
            {},
            { timestamp: Date.now() - 2 * 86_400_000 },
          );
          assert.equal(answer.status, 403, answer.text);
          assert.deepEqual(answer.json, NOT_AUTHORIZED);
        });

        it('answers 403 with the message to a replayed nonce and timestamp', async () => {
          const timestamp = Date.now();
          const nonce = `${timestamp}77`;
          const first = await teacher.client.v2('GET', '/exams', {}, { timestamp, nonce });
          assert.equal(first.status, 200, first.text);
          const replay = await teacher.client.v2('GET', '/exams', {}, { timestamp, nonce });
          assert.equal(replay.status, 403, replay.text);
          assert.deepEqual(replay.json, NOT_AUTHORIZED);
        });
      });
    });

    describe('POST /api/exams', () => {
      let author: TestUser;
      let proctor: TestUser;
      const start = Date.parse('2026-11-21T09:00:00Z') / 1000;
      const end = Date.parse('2026-11-21T11:30:00Z') / 1000;

      before(async () => {
        author = await server.user(instituteId, 'teacher');
        proctor = await server.user(instituteId, 'proctor');
      });

      function create(user: TestUser, params: Record<string, Scalar>, options: CallOptions = {}) {
        return user.client.v2('POST', '/exams', params, options);
      }

      async function listIds(user: TestUser): Promise<unknown[]> {
        return v2Exams(await listV2(user)).map((exam) => exam.exam_id);
      }

      it('answers 201 {id} and keeps the exam as sent with V2 names and epoch seconds', async () => {
        const answer = await create(author, {
          name: 'V2 Midterm',
          duration: 45,
          type: 'record_review',
          start_time: start,
          end_time: end,
          upload_exam: true,
          mobile_cam: 1,
          for_reviewing: 'true',
          restrictions: 'Pens only.\nNo <phones>.',
          allow_calculator: true,
          allowed_calculator_type: 'scientific',
        });
        assert.equal(answer.status, 201, answer.text);
        const { id } = object(answer.json, 'body');
        assert.ok(Number.isInteger(id), 'id is an integer');
        assert.deepEqual(answer.json, { id });
        const shown = await author.client.v2('GET', '/exams/:id', { id: id as number });
        assert.equal(shown.status, 200, shown.text);
        assert.deepEqual(shown.json, {
          exam: {
            exam_id: id,
            name: 'V2 Midterm',
            start_time: start,
            end_time: end,
            duration: 45,
            upload_exam: true,
            restrictions: '<p>Pens only.\n<br />No &lt;phones&gt;.</p>',
            type: 'record_review',
            mobile_cam: true,
            user_id: author.id,
            institute_id: instituteId,
            for_reviewing: true,
            use_duration: true,
          },
        });
      });

      it('reads a signed form body, as older V2 clients send it', async () => {
        const answer = await create(
          author,
          { name: 'Form exam', duration: '30', type: 'demo', use_duration: '0', upload_exam: '0' },
          { as: 'form' },
        );
        assert.equal(answer.status, 201, answer.text);
        const { id } = object(answer.json, 'body');
        const shown = object(
          object((await author.client.v2('GET', '/exams/:id', { id: id as number })).json, 'body').exam,
          'exam',
        );
        assert.equal(shown.duration, 30);
        assert.equal(shown.use_duration, false);
        assert.equal(shown.upload_exam, false);
        assert.equal(shown.start_time, null);
      });

      it('answers 400 with an empty body when name, duration or type is missing or empty, and keeps nothing', async () => {
        const complete = { name: 'Incomplete', duration: 60, type: 'classroom' };
        const before = await listIds(author);
        for (const field of ['name', 'duration', 'type'] as const) {
          const { [field]: _dropped, ...without } = complete;
          for (const params of [without, { ...complete, [field]: '' }]) {
            assertEmpty(await create(author, params), 400);
          }
        }
        assert.deepEqual(await listIds(author), before);
      });

      it('requires duration even for an exam that does not use it', async () => {
        assertEmpty(await create(author, { name: 'No duration', type: 'demo', use_duration: false }), 400);
      });

      it('answers 400 with an empty body when a value is invalid', async () => {
        const base = { name: 'Invalid', duration: 60, type: 'classroom' };
        const before = await listIds(author);
        for (const params of [
          { ...base, type: 'quiz' },
          { ...base, duration: 'long' },
          { ...base, duration: 0 },
          { ...base, start_time: 'soon' },
          { ...base, start_time: end, end_time: start },
          { ...base, mobile_cam: 'maybe' },
        ]) {
          assertEmpty(await create(author, params), 400);
        }
        assert.deepEqual(await listIds(author), before);
      });

      it('answers 403 with an empty body to a proctor, who may not create exams', async () => {
        assertEmpty(await create(proctor, { name: 'Proctored', duration: 60, type: 'classroom' }), 403);
      });

      it('answers 403 with the JSON message to a wrong signature', async () => {
        const answer = await create(
          author,
          { name: 'Forged', duration: 60, type: 'classroom' },
          { signature: '0'.repeat(64) },
        );
        assert.equal(answer.status, 403, answer.text);
        assert.deepEqual(answer.json, NOT_AUTHORIZED);
      });
    });

    describe('POST /api/exams/:id (update)', () => {
      let author: TestUser;
      let exam: Json;

      before(async () => {
        author = await server.user(instituteId, 'teacher');
        exam = await createExam(author, {
          name: 'Before',
          duration_minutes: 60,
          start_time: '2026-11-21T09:00:00Z',
          restrictions: 'Old rules',
        });
      });

      function update(user: TestUser, id: Scalar, params: Record<string, Scalar>, options: CallOptions = {}) {
        return user.client.v2('POST', '/exams/:id', { id, ...params }, options);
      }

      async function shown(): Promise<Json> {
        const answer = await author.client.v2('GET', '/exams/:id', { id: exam.id as number });
        assert.equal(answer.status, 200, answer.text);
        return object(object(answer.json, 'body').exam, 'exam');
      }

      it('answers 200 with an empty body and applies the V2 fields sent, keeping the others', async () => {
        const endTime = Date.parse('2026-11-21T12:00:00Z') / 1000;
        const answer = await update(author, exam.id as number, {
          name: 'After',
          duration: 75,
          end_time: endTime,
          upload_exam: true,
          restrictions: 'New\n\nrules',
        });
        assertEmpty(answer, 200);
        assert.deepEqual(await shown(), {
          exam_id: exam.id,
          name: 'After',
          start_time: Date.parse('2026-11-21T09:00:00Z') / 1000,
          end_time: endTime,
          duration: 75,
          upload_exam: true,
          restrictions: '<p>New</p>\n\n<p>rules</p>',
          type: 'classroom',
          mobile_cam: false,
          user_id: author.id,
          institute_id: instituteId,
          for_reviewing: false,
          use_duration: true,
        });
      });

      it('reads a form body', async () => {
        assertEmpty(
          await update(author, exam.id as number, { duration: '80', mobile_cam: '1' }, { as: 'form' }),
          200,
        );
        const after = await shown();
        assert.equal(after.duration, 80);
        assert.equal(after.mobile_cam, true);
      });

      it('answers 400 with an empty body to an invalid value and changes nothing', async () => {
        const before = await shown();
        for (const params of [
          { type: 'quiz' },
          { name: '' },
          { duration: 'long' },
          { end_time: Date.parse('2026-11-20T09:00:00Z') / 1000 },
        ] as Record<string, Scalar>[]) {
          assertEmpty(await update(author, exam.id as number, params), 400);
        }
        assert.deepEqual(await shown(), before);
      });

      it('answers 400 with an empty body to an exam that is unknown, deleted or out of scope (api.md: 400 on failure)', async () => {
        const before = await shown();
        const outsider = await server.user(await server.institute(), 'administrator');
        for (const [user, id] of [
          [author, 999999],
          [author, 'abc'],
          [author, deleted.id as number],
          [colleague, exam.id as number],
          [outsider, exam.id as number],
        ] as const) {
          assertEmpty(await update(user, id, { name: 'Taken over' }), 400);
        }
        assert.deepEqual(await shown(), before);
      });

      it('answers 403 with an empty body to a proctor or auditor, who see the exam but may not change it', async () => {
        const before = await shown();
        for (const role of ['proctor', 'auditor'] as const) {
          const user = await server.user(instituteId, role);
          assertEmpty(await update(user, exam.id as number, { name: 'Renamed' }), 403);
        }
        assert.deepEqual(await shown(), before);
      });

      it("lets the institute's administrator update it", async () => {
        assertEmpty(await update(admin, exam.id as number, { name: 'By the admin' }), 200);
        assert.equal((await shown()).name, 'By the admin');
      });
    });

    describe('DELETE /api/exams/:id', () => {
      let author: TestUser;

      before(async () => {
        author = await server.user(instituteId, 'teacher');
      });

      function destroy(user: TestUser, id: Scalar) {
        return user.client.v2('DELETE', '/exams/:id', { id });
      }

      it('answers 200 with an empty body; the exam then answers 404 and leaves the list', async () => {
        const exam = await createExam(author, { name: 'Doomed' });
        assertEmpty(await destroy(author, exam.id as number), 200);
        assertEmpty(await author.client.v2('GET', '/exams/:id', { id: exam.id as number }), 404);
        assert.ok(!v2Exams(await listV2(author)).some((listed) => listed.exam_id === exam.id));
      });

      it('answers 400 with an empty body to a second delete, an unknown id or an exam out of scope (api.md: 400 on failure)', async () => {
        const exam = await createExam(author, { name: 'Destroyed twice' });
        assertEmpty(await destroy(author, exam.id as number), 200);
        assertEmpty(await destroy(author, exam.id as number), 400);
        assertEmpty(await destroy(author, 999999), 400);
        const kept = await createExam(author, { name: 'Kept' });
        assertEmpty(await destroy(colleague, kept.id as number), 400);
        assert.equal((await author.client.v2('GET', '/exams/:id', { id: kept.id as number })).status, 200);
      });

      it('answers 403 with an empty body to a proctor and keeps the exam', async () => {
        const exam = await createExam(author, { name: 'Protected' });
        const proctor = await server.user(instituteId, 'proctor');
        assertEmpty(await destroy(proctor, exam.id as number), 403);
        assert.equal((await author.client.v2('GET', '/exams/:id', { id: exam.id as number })).status, 200);
      });
    });
  });
}
