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

const ISO_MILLIS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Every field of the V3 exam record (contract §6, and what real clients read: docs/api-v3-exams.md). */
const EXAM_FIELDS = [
  'id',
  'institute_id',
  'user_id',
  'name',
  'type',
  'mode',
  'live_proctoring',
  'status',
  'published',
  'exam_language',
  'candidate_languages',
  'timezone',
  'global_proctoring',
  'global_reviewing',
  'archived',
  'live_id_check',
  'automated_flags',
  'record_during_breaks',
  'extra_time_beyond_end',
  'recording_quality',
  'flag_settings',
  'terms',
  'duration_minutes',
  'use_duration',
  'start_time',
  'end_time',
  'mobile_cam',
  'web_cam',
  'screen_share',
  'for_reviewing',
  'upload_answers',
  'restrictions',
  'allow_websites',
  'allow_external_applications',
  'allow_textbooks',
  'allow_calculator',
  'allow_pen_paper',
  'allow_additional',
  'allowed_websites',
  'allowed_external_applications',
  'allowed_textbooks',
  'allowed_calculator_type',
  'allowed_additional',
  'comanager_ids',
  'practice_url',
  'created_at',
  'updated_at',
] as const;

/** The boolean settings that default to false. */
const FLAGS_OFF_BY_DEFAULT = [
  'mobile_cam',
  'web_cam',
  'screen_share',
  'for_reviewing',
  'upload_answers',
  'allow_websites',
  'allow_external_applications',
  'allow_textbooks',
  'allow_calculator',
  'allow_pen_paper',
  'allow_additional',
  'global_proctoring',
  'global_reviewing',
  'archived',
  'live_id_check',
  'automated_flags',
] as const;

const TEXTS = [
  'restrictions',
  'allowed_websites',
  'allowed_external_applications',
  'allowed_textbooks',
  'allowed_calculator_type',
  'allowed_additional',
  'terms',
] as const;

function examIn(answer: HttpAnswer): Json {
  return object(object(answer.json, 'body').exam, 'exam');
}

function examsIn(answer: HttpAnswer): Json[] {
  assert.equal(answer.status, 200, answer.text);
  const list = object(answer.json, 'body').exams;
  assert.ok(Array.isArray(list), 'exams is an array');
  return list.map((item) => object(item, 'exam'));
}

function idsIn(answer: HttpAnswer): unknown[] {
  return examsIn(answer).map((exam) => exam.id);
}

function errorIn(answer: HttpAnswer): string {
  const error = object(answer.json, 'error body').error;
  assert.equal(typeof error, 'string', answer.text);
  return error as string;
}

function assert422(answer: HttpAnswer, ...mentions: string[]): void {
  assert.equal(answer.status, 422, answer.text);
  const error = errorIn(answer);
  for (const mention of mentions) assert.ok(error.includes(mention), `"${error}" mentions ${mention}`);
}

/** Creates an exam through the API and returns the record, asserting the 201. */
async function createExam(
  user: TestUser,
  params: Record<string, Scalar>,
  options: CallOptions = {},
): Promise<Json> {
  const answer = await user.client.v3(
    'POST',
    '/exams',
    { type: 'classroom', duration_minutes: 60, ...params },
    options,
  );
  assert.equal(answer.status, 201, answer.text);
  return examIn(answer);
}

function show(user: TestUser, id: Scalar): Promise<HttpAnswer> {
  return user.client.v3('GET', '/exams/:id', { id });
}

function list(user: TestUser, params: Record<string, Scalar> = {}): Promise<HttpAnswer> {
  return user.client.v3('GET', '/exams', params);
}

function filtered(user: TestUser, filter: unknown, extra: Record<string, Scalar> = {}): Promise<HttpAnswer> {
  return list(user, { filter: JSON.stringify(filter), ...extra });
}

function sorted(user: TestUser, sort: unknown, extra: Record<string, Scalar> = {}): Promise<HttpAnswer> {
  return list(user, { sort: JSON.stringify(sort), ...extra });
}

for (const dialect of DIALECTS) {
  describe(`V3 exams [${dialect}]`, () => {
    const clock = new TestClock(Math.floor(Date.now() / 1000) * 1000);
    let server: TestServer;
    let instituteId: number;
    let teacher: TestUser;
    let proctor: TestUser;

    before(async () => {
      server = await startTestServer(dialect, { clock });
      instituteId = await server.institute();
      teacher = await server.user(instituteId, 'teacher');
      proctor = await server.user(instituteId, 'proctor');
    });

    after(async () => {
      await server.close();
    });

    describe('POST /api/v3/exams', () => {
      it('answers 201 with the full record and the documented defaults', async () => {
        const answer = await teacher.client.v3('POST', '/exams', {
          name: 'Midterm',
          type: 'classroom',
          duration_minutes: 90,
        });
        assert.equal(answer.status, 201, answer.text);
        assert.deepEqual(Object.keys(object(answer.json, 'body')), ['exam']);
        const exam = examIn(answer);
        assert.deepEqual(Object.keys(exam).sort(), [...EXAM_FIELDS].sort());
        assert.equal(typeof exam.id, 'number');
        assert.ok(Number.isInteger(exam.id) && (exam.id as number) > 0);
        assert.equal(exam.institute_id, instituteId);
        assert.equal(exam.user_id, teacher.id);
        assert.equal(exam.name, 'Midterm');
        assert.equal(exam.type, 'classroom');
        assert.equal(exam.status, 'open');
        assert.equal(exam.duration_minutes, 90);
        assert.equal(exam.use_duration, true);
        // Step 17's settings are on unless turned off (docs/accommodations.md).
        assert.equal(exam.record_during_breaks, true);
        assert.equal(exam.extra_time_beyond_end, true);
        // Step 18: the default recording profile (docs/recordings.md).
        assert.equal(exam.recording_quality, 'standard');
        assert.equal(exam.start_time, null);
        assert.equal(exam.end_time, null);
        for (const flag of FLAGS_OFF_BY_DEFAULT) assert.equal(exam[flag], false, `${flag} defaults to false`);
        for (const text of TEXTS) assert.equal(exam[text], null, `${text} defaults to null`);
        assert.deepEqual(exam.comanager_ids, []);
        assert.match(String(exam.created_at), ISO_MILLIS);
        assert.equal(exam.created_at, new Date(clock.now()).toISOString());
        assert.equal(exam.updated_at, exam.created_at);
      });

      it('keeps every setting it is sent and shows the same record afterwards', async () => {
        const params: Record<string, Scalar> = {
          name: 'Final',
          type: 'live_proctoring',
          status: 'draft',
          duration_minutes: 120,
          use_duration: true,
          start_time: '2026-11-21T09:30:00.250Z',
          end_time: '2026-11-21T12:00:00.000Z',
        };
        for (const flag of FLAGS_OFF_BY_DEFAULT) params[flag] = true;
        for (const text of TEXTS) params[text] = `${text} value`;
        const answer = await teacher.client.v3('POST', '/exams', params);
        assert.equal(answer.status, 201, answer.text);
        const exam = examIn(answer);
        for (const [name, value] of Object.entries(params)) assert.equal(exam[name], value, name);
        const shown = await show(teacher, exam.id as number);
        assert.equal(shown.status, 200, shown.text);
        assert.deepEqual(examIn(shown), exam);
      });

      it('answers 422 naming a missing name', async () => {
        const answer = await teacher.client.v3('POST', '/exams', { type: 'demo', duration_minutes: 30 });
        assert.equal(answer.status, 422, answer.text);
        assert.deepEqual(answer.json, missing('name'));
      });

      for (const [label, value] of [
        ['empty', ''],
        ['blank', '   '],
        ['null', null],
      ] as const) {
        it(`answers 422 naming the name when it is ${label}`, async () => {
          const answer = await teacher.client.v3('POST', '/exams', {
            name: value,
            type: 'demo',
            duration_minutes: 30,
          });
          assert.equal(answer.status, 422, answer.text);
          assert.deepEqual(answer.json, missing('name'));
        });
      }

      it('answers 422 naming a missing type', async () => {
        const answer = await teacher.client.v3('POST', '/exams', { name: 'No type', duration_minutes: 30 });
        assert.equal(answer.status, 422, answer.text);
        assert.deepEqual(answer.json, missing('type'));
      });

      it('answers 422 naming an empty type', async () => {
        const answer = await teacher.client.v3('POST', '/exams', {
          name: 'Empty type',
          type: '',
          duration_minutes: 30,
        });
        assert.equal(answer.status, 422, answer.text);
        assert.deepEqual(answer.json, missing('type'));
      });

      it('answers 422 for a type outside the list, with errors', async () => {
        const answer = await teacher.client.v3('POST', '/exams', {
          name: 'Odd',
          type: 'oral',
          duration_minutes: 30,
        });
        assert.equal(answer.status, 422, answer.text);
        assert.deepEqual(answer.json, {
          error: "'type':['is not included in the list']",
          errors: { type: ['is not included in the list'] },
        });
      });

      for (const quality of ['low', 'standard', 'high']) {
        it(`keeps the recording_quality ${quality}`, async () => {
          const exam = await createExam(teacher, {
            name: `Quality ${quality}`,
            type: 'record_review',
            recording_quality: quality,
          });
          assert.equal(exam.recording_quality, quality);
          assert.equal(examIn(await show(teacher, exam.id as number)).recording_quality, quality);
        });
      }

      it('answers 422 for a recording_quality outside the list, with errors', async () => {
        const answer = await teacher.client.v3('POST', '/exams', {
          name: 'Ultra',
          type: 'record_review',
          duration_minutes: 30,
          recording_quality: 'ultra',
        });
        assert.equal(answer.status, 422, answer.text);
        assert.deepEqual(answer.json, {
          error: "'recording_quality':['is not included in the list']",
          errors: { recording_quality: ['is not included in the list'] },
        });
      });

      for (const type of ['demo', 'classroom', 'record_review', 'live_proctoring']) {
        it(`accepts the type ${type}`, async () => {
          const exam = await createExam(teacher, { name: `Type ${type}`, type });
          assert.equal(exam.type, type);
        });
      }

      it('answers 422 for a status a client may not set', async () => {
        const answer = await teacher.client.v3('POST', '/exams', {
          name: 'Gone',
          status: 'deleted',
          type: 'demo',
          duration_minutes: 5,
        });
        assert422(answer, 'status');
        assert.deepEqual(object(answer.json, 'body').errors, { status: ['is not included in the list'] });
      });

      it('answers 422 naming duration_minutes when use_duration is true by default', async () => {
        const answer = await teacher.client.v3('POST', '/exams', { name: 'No duration', type: 'demo' });
        assert.equal(answer.status, 422, answer.text);
        assert.deepEqual(answer.json, missing('duration_minutes'));
      });

      it('answers 422 naming duration_minutes when use_duration is sent true and the duration is empty', async () => {
        const answer = await teacher.client.v3('POST', '/exams', {
          name: 'Empty duration',
          type: 'demo',
          use_duration: true,
          duration_minutes: '',
        });
        assert.equal(answer.status, 422, answer.text);
        assert.deepEqual(answer.json, missing('duration_minutes'));
      });

      it('does not require a duration when use_duration is false', async () => {
        const answer = await teacher.client.v3('POST', '/exams', {
          name: 'Open ended',
          type: 'demo',
          use_duration: false,
        });
        assert.equal(answer.status, 201, answer.text);
        const exam = examIn(answer);
        assert.equal(exam.use_duration, false);
        assert.equal(exam.duration_minutes, null);
      });

      for (const value of ['abc', 0, -5, 1.5]) {
        it(`answers 422 naming duration_minutes for ${JSON.stringify(value)}`, async () => {
          const answer = await teacher.client.v3('POST', '/exams', {
            name: 'Bad',
            type: 'demo',
            duration_minutes: value,
          });
          assert422(answer, 'duration_minutes');
        });
      }

      it('accepts duration as an alias of duration_minutes', async () => {
        const answer = await teacher.client.v3('POST', '/exams', {
          name: 'Alias',
          type: 'demo',
          duration: 45,
        });
        assert.equal(answer.status, 201, answer.text);
        assert.equal(examIn(answer).duration_minutes, 45);
      });

      it('prefers duration_minutes over its alias when both are sent', async () => {
        const exam = await createExam(teacher, { name: 'Both', duration_minutes: 30, duration: 45 });
        assert.equal(exam.duration_minutes, 30);
      });

      it('accepts upload_exam as an alias of upload_answers', async () => {
        const exam = await createExam(teacher, { name: 'Uploads', upload_exam: true });
        assert.equal(exam.upload_answers, true);
        const off = await createExam(teacher, {
          name: 'No uploads',
          upload_exam: false,
          upload_answers: true,
        });
        assert.equal(off.upload_answers, true, 'upload_answers wins over its alias');
      });

      const instant = Date.parse('2026-11-21T09:30:00.000Z');
      const TIME_INPUTS: readonly (readonly [string, Scalar, string])[] = [
        ['ISO 8601 with milliseconds', '2026-11-21T09:30:00.250Z', '2026-11-21T09:30:00.250Z'],
        ['ISO 8601 without milliseconds', '2026-11-21T09:30:00Z', '2026-11-21T09:30:00.000Z'],
        ['ISO 8601 with an offset', '2026-11-21T10:30:00+01:00', '2026-11-21T09:30:00.000Z'],
        ['a date', '2026-11-21', '2026-11-21T00:00:00.000Z'],
        ['epoch seconds (number)', instant / 1000, '2026-11-21T09:30:00.000Z'],
        ['epoch seconds (digits)', String(instant / 1000), '2026-11-21T09:30:00.000Z'],
        ['epoch milliseconds (number)', instant + 5, '2026-11-21T09:30:00.005Z'],
        ['epoch milliseconds (digits)', String(instant + 5), '2026-11-21T09:30:00.005Z'],
      ];
      for (const [label, value, expected] of TIME_INPUTS) {
        it(`accepts start_time and end_time as ${label}`, async () => {
          const exam = await createExam(teacher, {
            name: `Time ${label}`,
            start_time: value,
            end_time: value,
          });
          assert.equal(exam.start_time, expected);
          assert.equal(exam.end_time, expected);
        });
      }

      it('accepts times in a form-encoded body', async () => {
        const exam = await createExam(
          teacher,
          { name: 'Form times', start_time: String(instant / 1000), end_time: '2026-11-21T11:00:00Z' },
          { as: 'form' },
        );
        assert.equal(exam.start_time, '2026-11-21T09:30:00.000Z');
        assert.equal(exam.end_time, '2026-11-21T11:00:00.000Z');
      });

      it('answers 422 naming an unreadable start_time', async () => {
        const answer = await teacher.client.v3('POST', '/exams', {
          name: 'When?',
          type: 'demo',
          duration_minutes: 10,
          start_time: 'next tuesday',
        });
        assert422(answer, 'start_time');
        assert.ok(Object.hasOwn(object(object(answer.json, 'body').errors, 'errors'), 'start_time'));
      });

      for (const value of [
        '2026-02-30',
        '2026-13-01',
        '2026-02-01T25:00:00Z',
        '2026-02-01T10:60:00Z',
        '2027-02-29',
      ]) {
        it(`answers 422 naming start_time for ${value}, which is not on the calendar`, async () => {
          const answer = await teacher.client.v3('POST', '/exams', {
            name: 'Nowhen',
            type: 'demo',
            duration_minutes: 5,
            start_time: value,
          });
          assert422(answer, 'start_time');
        });
      }

      it('accepts the 29th of February in a leap year', async () => {
        const exam = await createExam(teacher, { name: 'Leap', start_time: '2028-02-29T23:59:59Z' });
        assert.equal(exam.start_time, '2028-02-29T23:59:59.000Z');
      });

      for (const value of ['99999999999999999', '99999999999999999999', '253402300800']) {
        it(`answers 422 naming start_time for ${value}, beyond the year 9999, and keeps listing`, async () => {
          const answer = await teacher.client.v3('POST', '/exams', {
            name: 'Far',
            type: 'demo',
            duration_minutes: 5,
            start_time: value,
          });
          assert422(answer, 'start_time');
          assert.equal((await list(teacher)).status, 200);
        });
      }

      for (const field of ['name', 'restrictions', 'allowed_websites']) {
        it(`answers 422 naming ${field} when it holds a NUL character`, async () => {
          const answer = await teacher.client.v3('POST', '/exams', {
            name: 'Nul',
            type: 'demo',
            duration_minutes: 5,
            [field]: 'a\u0000b',
          });
          assert422(answer, field);
        });
      }

      it('answers 422 naming end_time when it lies before start_time', async () => {
        const answer = await teacher.client.v3('POST', '/exams', {
          name: 'Backwards',
          type: 'demo',
          duration_minutes: 10,
          start_time: '2026-11-21T10:00:00Z',
          end_time: '2026-11-21T09:59:59Z',
        });
        assert422(answer, 'end_time');
        assert.ok(Object.hasOwn(object(object(answer.json, 'body').errors, 'errors'), 'end_time'));
      });

      it('accepts an end_time equal to start_time', async () => {
        const exam = await createExam(teacher, {
          name: 'Instant',
          start_time: '2026-11-21T10:00:00Z',
          end_time: '2026-11-21T10:00:00Z',
        });
        assert.equal(exam.end_time, '2026-11-21T10:00:00.000Z');
      });

      it('reads booleans sent as JSON true and false', async () => {
        const exam = await createExam(teacher, {
          name: 'JSON booleans',
          mobile_cam: true,
          web_cam: false,
          use_duration: true,
        });
        assert.equal(exam.mobile_cam, true);
        assert.equal(exam.web_cam, false);
        assert.equal(exam.use_duration, true);
      });

      it('reads booleans sent as JSON 1 and 0', async () => {
        const exam = await createExam(teacher, {
          name: 'Numeric booleans',
          screen_share: 1,
          allow_calculator: 1,
          use_duration: 0,
        });
        assert.equal(exam.screen_share, true);
        assert.equal(exam.allow_calculator, true);
        assert.equal(exam.use_duration, false);
      });

      it('reads booleans sent as the strings "true", "false", "1" and "0"', async () => {
        const exam = await createExam(teacher, {
          name: 'String booleans',
          mobile_cam: 'true',
          web_cam: '1',
          for_reviewing: 'false',
          use_duration: '0',
        });
        assert.deepEqual(
          [exam.mobile_cam, exam.web_cam, exam.for_reviewing, exam.use_duration],
          [true, true, false, false],
        );
      });

      it('reads a form-encoded body with booleans and numbers as strings', async () => {
        const answer = await teacher.client.v3(
          'POST',
          '/exams',
          {
            name: 'Form exam',
            type: 'record_review',
            duration_minutes: '75',
            use_duration: 'true',
            mobile_cam: '1',
            web_cam: 'true',
            screen_share: '0',
            allow_textbooks: 'false',
            upload_exam: '1',
            restrictions: 'No phones & no notes',
          },
          { as: 'form' },
        );
        assert.equal(answer.status, 201, answer.text);
        const exam = examIn(answer);
        assert.equal(exam.name, 'Form exam');
        assert.equal(exam.type, 'record_review');
        assert.equal(exam.duration_minutes, 75);
        assert.equal(exam.use_duration, true);
        assert.equal(exam.mobile_cam, true);
        assert.equal(exam.web_cam, true);
        assert.equal(exam.screen_share, false);
        assert.equal(exam.allow_textbooks, false);
        assert.equal(exam.upload_answers, true);
        assert.equal(exam.restrictions, 'No phones & no notes');
      });

      it('answers 422 naming a form-encoded missing name', async () => {
        const answer = await teacher.client.v3(
          'POST',
          '/exams',
          { type: 'demo', duration_minutes: '5' },
          { as: 'form' },
        );
        assert.equal(answer.status, 422, answer.text);
        assert.deepEqual(answer.json, missing('name'));
      });

      it('answers 422 naming a boolean that is not true, false, 1 or 0', async () => {
        const answer = await teacher.client.v3('POST', '/exams', {
          name: 'Yes?',
          type: 'demo',
          duration_minutes: 5,
          mobile_cam: 'yes',
        });
        assert422(answer, 'mobile_cam');
      });

      it('answers 403 to a proctor, who may not create exams', async () => {
        const answer = await proctor.client.v3('POST', '/exams', {
          name: 'Nope',
          type: 'demo',
          duration_minutes: 5,
        });
        assert.equal(answer.status, 403, answer.text);
        assert.deepEqual(answer.json, NOT_AUTHORIZED);
      });
    });

    describe('GET /api/v3/exams/:id', () => {
      let exam: Json;

      before(async () => {
        exam = await createExam(teacher, { name: 'Shown', start_time: '2026-05-01T08:00:00Z' });
      });

      it('answers 200 with the exam record', async () => {
        const answer = await show(teacher, exam.id as number);
        assert.equal(answer.status, 200, answer.text);
        assert.deepEqual(answer.json, { exam });
      });

      it('answers 404 for an unknown id', async () => {
        const answer = await show(teacher, 999999);
        assert.equal(answer.status, 404, answer.text);
        assert.deepEqual(answer.json, { error: "Couldn't find Exam with 'id'=999999" });
      });

      for (const id of ['abc', '0', '12abc', '-1', '99999999999', '1e3']) {
        it(`answers 404 naming the id as sent for ${JSON.stringify(id)}`, async () => {
          const answer = await show(teacher, id);
          assert.equal(answer.status, 404, answer.text);
          assert.deepEqual(answer.json, notFound('Exam', id));
        });
      }

      it('answers the same with a trailing slash', async () => {
        const answer = await teacher.client.v3('GET', '/exams/:id/', { id: exam.id as number });
        assert.equal(answer.status, 200, answer.text);
        assert.deepEqual(answer.json, { exam });
      });
    });

    for (const method of ['PATCH', 'PUT'] as const) {
      describe(`${method} /api/v3/exams/:id`, () => {
        let exam: Json;

        before(async () => {
          exam = await createExam(teacher, {
            name: `Before ${method}`,
            type: 'classroom',
            duration_minutes: 60,
            start_time: '2026-06-01T09:00:00Z',
            end_time: '2026-06-01T11:00:00Z',
            mobile_cam: true,
            restrictions: 'Closed book',
          });
        });

        function update(params: Record<string, Scalar>, options: CallOptions = {}): Promise<HttpAnswer> {
          return teacher.client.v3(method, '/exams/:id', { id: exam.id as number, ...params }, options);
        }

        it('changes only what is sent and keeps the rest', async () => {
          clock.current += 60_000;
          const answer = await update({ name: `After ${method}`, duration_minutes: 75 });
          assert.equal(answer.status, 200, answer.text);
          const updated = examIn(answer);
          assert.deepEqual(updated, {
            ...exam,
            name: `After ${method}`,
            duration_minutes: 75,
            updated_at: new Date(clock.now()).toISOString(),
          });
          const shown = await show(teacher, exam.id as number);
          assert.deepEqual(examIn(shown), updated);
          exam = updated;
        });

        it('changes flags, texts, status and times', async () => {
          const answer = await update({
            mobile_cam: false,
            allow_calculator: 'true',
            allowed_calculator_type: 'scientific',
            status: 'closed',
            type: 'record_review',
            end_time: '2026-06-01T12:00:00+00:00',
          });
          assert.equal(answer.status, 200, answer.text);
          const updated = examIn(answer);
          assert.equal(updated.mobile_cam, false);
          assert.equal(updated.allow_calculator, true);
          assert.equal(updated.allowed_calculator_type, 'scientific');
          assert.equal(updated.status, 'closed');
          assert.equal(updated.type, 'record_review');
          assert.equal(updated.end_time, '2026-06-01T12:00:00.000Z');
          assert.equal(updated.start_time, exam.start_time);
          assert.equal(updated.restrictions, 'Closed book');
          exam = updated;
        });

        it('reads a form-encoded body', async () => {
          const answer = await update({ web_cam: '1', duration: '50' }, { as: 'form' });
          assert.equal(answer.status, 200, answer.text);
          const updated = examIn(answer);
          assert.equal(updated.web_cam, true);
          assert.equal(updated.duration_minutes, 50);
          exam = updated;
        });

        it('clears a time and a text sent as null', async () => {
          const answer = await update({ end_time: null, restrictions: null });
          assert.equal(answer.status, 200, answer.text);
          const updated = examIn(answer);
          assert.equal(updated.end_time, null);
          assert.equal(updated.restrictions, null);
          exam = updated;
        });

        it('answers 422 naming an empty name and changes nothing', async () => {
          const answer = await update({ name: '', duration_minutes: 10 });
          assert.equal(answer.status, 422, answer.text);
          assert.deepEqual(answer.json, missing('name'));
          assert.deepEqual(examIn(await show(teacher, exam.id as number)), exam);
        });

        it('answers 422 for a type outside the list', async () => {
          const answer = await update({ type: 'oral' });
          assert.equal(answer.status, 422, answer.text);
          assert.deepEqual(answer.json, {
            error: "'type':['is not included in the list']",
            errors: { type: ['is not included in the list'] },
          });
        });

        it('changes the recording_quality and keeps it when not sent', async () => {
          const answer = await update({ recording_quality: 'low' });
          assert.equal(answer.status, 200, answer.text);
          const updated = examIn(answer);
          assert.equal(updated.recording_quality, 'low');
          const kept = examIn(await update({ name: `Still low ${method}` }));
          assert.equal(kept.recording_quality, 'low');
          exam = kept;
        });

        it('answers 422 for a recording_quality outside the list and changes nothing', async () => {
          const answer = await update({ recording_quality: 'ultra' });
          assert.equal(answer.status, 422, answer.text);
          assert.deepEqual(answer.json, {
            error: "'recording_quality':['is not included in the list']",
            errors: { recording_quality: ['is not included in the list'] },
          });
          assert.deepEqual(examIn(await show(teacher, exam.id as number)), exam);
        });

        it('answers 422 for the status deleted', async () => {
          assert422(await update({ status: 'deleted' }), 'status');
        });

        it('answers 422 naming end_time when it would lie before the kept start_time', async () => {
          assert422(await update({ end_time: '2026-06-01T08:00:00Z' }), 'end_time');
          assert.deepEqual(examIn(await show(teacher, exam.id as number)), exam);
        });

        it('answers 422 naming duration_minutes when use_duration is turned on without one', async () => {
          const open = await createExam(teacher, {
            name: 'No duration yet',
            use_duration: false,
            duration_minutes: null,
          });
          const answer = await teacher.client.v3(method, '/exams/:id', {
            id: open.id as number,
            use_duration: true,
          });
          assert.equal(answer.status, 422, answer.text);
          assert.deepEqual(answer.json, missing('duration_minutes'));
          const fixed = await teacher.client.v3(method, '/exams/:id', {
            id: open.id as number,
            use_duration: true,
            duration_minutes: 20,
          });
          assert.equal(fixed.status, 200, fixed.text);
          assert.equal(examIn(fixed).duration_minutes, 20);
        });

        it('answers 422 naming duration_minutes when it is emptied while use_duration is true', async () => {
          const answer = await update({ duration_minutes: '' });
          assert.equal(answer.status, 422, answer.text);
          assert.deepEqual(answer.json, missing('duration_minutes'));
        });

        it('answers 404 for an unknown id', async () => {
          const answer = await teacher.client.v3(method, '/exams/:id', { id: 999999, name: 'Ghost' });
          assert.equal(answer.status, 404, answer.text);
          assert.deepEqual(answer.json, notFound('Exam', 999999));
        });

        for (const id of ['abc', '99999999999']) {
          it(`answers 404 naming the id as sent for ${id}`, async () => {
            const answer = await teacher.client.v3(method, '/exams/:id', { id, name: 'Ghost' });
            assert.equal(answer.status, 404, answer.text);
            assert.deepEqual(answer.json, notFound('Exam', id));
          });
        }
      });
    }

    describe('DELETE /api/v3/exams/:id', () => {
      let listUser: TestUser;
      let kept: Json;
      let doomed: Json;

      before(async () => {
        listUser = await server.user(instituteId, 'teacher');
        kept = await createExam(listUser, { name: 'Kept' });
        doomed = await createExam(listUser, { name: 'Doomed' });
      });

      it('answers 200 with an empty object', async () => {
        const answer = await listUser.client.v3('DELETE', '/exams/:id', { id: doomed.id as number });
        assert.equal(answer.status, 200, answer.text);
        assert.deepEqual(answer.json, {});
      });

      it('then answers 404 on show, update and a second destroy', async () => {
        const id = doomed.id as number;
        for (const answer of [
          await show(listUser, id),
          await listUser.client.v3('PATCH', '/exams/:id', { id, name: 'Back' }),
          await listUser.client.v3('DELETE', '/exams/:id', { id }),
        ]) {
          assert.equal(answer.status, 404, answer.text);
          assert.deepEqual(answer.json, notFound('Exam', id));
        }
      });

      it('then leaves the exam out of the list', async () => {
        const answer = await list(listUser);
        assert.deepEqual(idsIn(answer), [kept.id]);
        assert.equal(answer.headers['x-pagination-item-count'], '1');
      });

      it('then lists it with status deleted when the list filters on status', async () => {
        const answer = await filtered(listUser, { status: { eq: 'deleted' } });
        const exams = examsIn(answer);
        assert.deepEqual(
          exams.map((exam) => [exam.id, exam.status, exam.name]),
          [[doomed.id, 'deleted', 'Doomed']],
        );
        assert.equal(answer.headers['x-pagination-item-count'], '1');
      });

      it('answers 404 for an unknown id', async () => {
        const answer = await listUser.client.v3('DELETE', '/exams/:id', { id: 999999 });
        assert.equal(answer.status, 404, answer.text);
        assert.deepEqual(answer.json, notFound('Exam', 999999));
      });
    });

    describe('GET /api/v3/exams', () => {
      let owner: TestUser;
      /** Exams by letter: A..D listed, E deleted. */
      const x: Record<'A' | 'B' | 'C' | 'D' | 'E', Json> = {} as Record<'A' | 'B' | 'C' | 'D' | 'E', Json>;
      const HOUR = 3_600_000;
      let base = 0;

      function ids(...letters: (keyof typeof x)[]): unknown[] {
        return letters.map((letter) => x[letter].id);
      }

      before(async () => {
        const saved = clock.current;
        base = saved - 10 * HOUR;
        const ownInstitute = await server.institute();
        owner = await server.user(ownInstitute, 'teacher');
        const plan: [keyof typeof x, Record<string, Scalar>][] = [
          ['A', { name: 'Algebra Final', type: 'classroom', start_time: '2026-03-01T09:00:00Z' }],
          ['B', { name: 'Biology Quiz', type: 'demo', status: 'draft', start_time: '2026-03-02T09:00:00Z' }],
          [
            'C',
            {
              name: 'Chemistry LAB 100% A\\B',
              type: 'record_review',
              status: 'closed',
              duration_minutes: 45,
            },
          ],
          ['D', { name: 'Algebra Retake', type: 'live_proctoring', start_time: '2026-03-01T12:00:00Z' }],
          ['E', { name: 'Economics', type: 'classroom', start_time: '2026-04-01T09:00:00Z' }],
        ];
        for (const [index, [letter, params]] of plan.entries()) {
          clock.current = base + index * HOUR;
          x[letter] = await createExam(owner, params);
        }
        clock.current = saved;
        const gone = await owner.client.v3('DELETE', '/exams/:id', { id: x.E.id as number });
        assert.equal(gone.status, 200, gone.text);
      });

      describe('pagination', () => {
        it('lists every exam not deleted, by id, with the pagination headers', async () => {
          const answer = await list(owner);
          assert.deepEqual(idsIn(answer), ids('A', 'B', 'C', 'D'));
          assert.equal(answer.headers['x-pagination-item-count'], '4');
          assert.equal(answer.headers['x-pagination-page-count'], '1');
          assert.equal(answer.headers['x-pagination-page'], '1');
          assert.equal(answer.headers['x-pagination-limit'], '300');
        });

        it('lists full records', async () => {
          const exams = examsIn(await list(owner));
          assert.deepEqual(exams[0], x.A);
        });

        it('answers one page of limit items', async () => {
          const answer = await list(owner, { page: 2, limit: 3 });
          assert.deepEqual(idsIn(answer), ids('D'));
          assert.equal(answer.headers['x-pagination-item-count'], '4');
          assert.equal(answer.headers['x-pagination-page-count'], '2');
          assert.equal(answer.headers['x-pagination-page'], '2');
          assert.equal(answer.headers['x-pagination-limit'], '3');
        });

        it('answers the first page when only limit is sent', async () => {
          const answer = await list(owner, { limit: 2 });
          assert.deepEqual(idsIn(answer), ids('A', 'B'));
          assert.equal(answer.headers['x-pagination-page'], '1');
          assert.equal(answer.headers['x-pagination-page-count'], '2');
        });

        it('answers an empty page past the end, with the headers', async () => {
          const answer = await list(owner, { page: 5, limit: 2 });
          assert.deepEqual(idsIn(answer), []);
          assert.equal(answer.headers['x-pagination-item-count'], '4');
          assert.equal(answer.headers['x-pagination-page'], '5');
        });

        it('caps limit at 300', async () => {
          const answer = await list(owner, { limit: 1000 });
          assert.deepEqual(idsIn(answer), ids('A', 'B', 'C', 'D'));
          assert.equal(answer.headers['x-pagination-limit'], '300');
        });

        it('paginates a sorted, filtered list', async () => {
          const answer = await list(owner, {
            filter: JSON.stringify({ type: { not_eq: 'demo' } }),
            sort: JSON.stringify([{ name: 'desc' }]),
            limit: 2,
            page: 2,
          });
          assert.deepEqual(idsIn(answer), ids('A'));
          assert.equal(answer.headers['x-pagination-item-count'], '3');
          assert.equal(answer.headers['x-pagination-page-count'], '2');
        });

        for (const [name, value] of [
          ['page', 0],
          ['page', 'two'],
          ['limit', 0],
          ['limit', -1],
          ['limit', 'many'],
        ] as const) {
          it(`answers 422 naming ${name} for ${JSON.stringify(value)}`, async () => {
            assert422(await list(owner, { [name]: value }), name);
          });
        }
      });

      describe('filter', () => {
        const CASES: readonly (readonly [string, unknown, readonly (keyof typeof x)[]])[] = [
          ['eq on name', { name: { eq: 'Biology Quiz' } }, ['B']],
          ['eq on type', { type: { eq: 'record_review' } }, ['C']],
          ['eq on status', { status: { eq: 'open' } }, ['A', 'D']],
          ['not_eq on type', { type: { not_eq: 'classroom' } }, ['B', 'C', 'D']],
          ['not_eq on name', { name: { not_eq: 'Algebra Final' } }, ['B', 'C', 'D']],
          ['in on type', { type: { in: ['demo', 'live_proctoring'] } }, ['B', 'D']],
          [
            'not_in on status, which brings deleted exams back',
            { status: { not_in: ['open'] } },
            ['B', 'C', 'E'],
          ],
          ['in with an empty list', { type: { in: [] } }, []],
          ['like as a case-insensitive substring', { name: { like: 'algebra' } }, ['A', 'D']],
          ['like matching inside a word in another case', { name: { like: 'lab' } }, ['C']],
          ['like with a literal %', { name: { like: '100%' } }, ['C']],
          ['like where % is not a wildcard', { name: { like: 'a%e' } }, []],
          ['like where _ is not a wildcard', { name: { like: '_lgebra' } }, []],
          ['like with a literal backslash', { name: { like: 'a\\b' } }, ['C']],
          ['eq on duration_minutes', { duration_minutes: { eq: 45 } }, ['C']],
          ['lt on duration_minutes', { duration_minutes: { lt: 50 } }, ['C']],
          [
            'gt on duration_minutes with a number beyond 32 bits',
            { duration_minutes: { gt: 99_999_999_999 } },
            [],
          ],
          ['like on type', { type: { like: 'PROCTOR' } }, ['D']],
          ['null true on start_time', { start_time: { null: true } }, ['C']],
          ['null false on start_time', { start_time: { null: false } }, ['A', 'B', 'D']],
          ['null "true" as a string', { start_time: { null: 'true' } }, ['C']],
          ['null false on name', { name: { null: false } }, ['A', 'B', 'C', 'D']],
          [
            'gte on start_time with an ISO instant',
            { start_time: { gte: '2026-03-01T12:00:00Z' } },
            ['B', 'D'],
          ],
          ['gt on start_time with an ISO instant', { start_time: { gt: '2026-03-01T12:00:00.000Z' } }, ['B']],
          ['lt on start_time with a date', { start_time: { lt: '2026-03-02' } }, ['A', 'D']],
          ['lte on start_time with a date', { start_time: { lte: '2026-03-02' } }, ['A', 'D']],
          [
            'eq on start_time with another offset',
            { start_time: { eq: '2026-03-01T10:00:00+01:00' } },
            ['A'],
          ],
          [
            'gte on start_time with epoch seconds',
            { start_time: { gte: Date.parse('2026-03-01T10:00:00Z') / 1000 } },
            ['B', 'D'],
          ],
          [
            'lt on start_time with epoch milliseconds as digits',
            { start_time: { lt: String(Date.parse('2026-03-01T10:00:00Z')) } },
            ['A'],
          ],
          [
            'a range on start_time',
            { start_time: { gt: '2026-03-01T09:00:00Z', lt: '2026-03-02T09:00:00Z' } },
            ['D'],
          ],
          [
            'conditions on several fields, all applying',
            { name: { like: 'algebra' }, type: { eq: 'classroom' } },
            ['A'],
          ],
          ['eq on status deleted', { status: { eq: 'deleted' } }, ['E']],
          ['in on status including deleted', { status: { in: ['open', 'deleted'] } }, ['A', 'D', 'E']],
        ];
        for (const [label, filter, expected] of CASES) {
          it(`applies ${label}`, async () => {
            const answer = await filtered(owner, filter);
            assert.deepEqual(idsIn(answer), ids(...expected));
            assert.equal(answer.headers['x-pagination-item-count'], String(expected.length));
          });
        }

        it('applies eq, not_eq, gt, gte, lt, lte, in and not_in on id', async () => {
          const [a, b, c, d] = ids('A', 'B', 'C', 'D') as number[];
          const expectations: [unknown, unknown[]][] = [
            [{ id: { eq: b } }, [b]],
            [{ id: { eq: String(b) } }, [b]],
            [{ id: { not_eq: b } }, [a, c, d]],
            [{ id: { gt: b } }, [c, d]],
            [{ id: { gte: b } }, [b, c, d]],
            [{ id: { lt: c } }, [a, b]],
            [{ id: { lte: c } }, [a, b, c]],
            [{ id: { in: [a, d, 999999] } }, [a, d]],
            [{ id: { not_in: [a, d] } }, [b, c]],
            [{ id: { null: false } }, [a, b, c, d]],
            [{ id: { null: true } }, []],
            [{ id: { lt: 99_999_999_999 } }, [a, b, c, d]],
            [{ id: { in: [99_999_999_999] } }, []],
          ];
          for (const [filter, expected] of expectations) {
            assert.deepEqual(idsIn(await filtered(owner, filter)), expected, JSON.stringify(filter));
          }
        });

        it('compares created_at as instants, with ISO and epoch operands', async () => {
          const at = (hours: number) => base + hours * HOUR;
          const expectations: [unknown, (keyof typeof x)[]][] = [
            [{ created_at: { gt: new Date(at(1.5)).toISOString() } }, ['C', 'D']],
            [{ created_at: { lte: new Date(at(1)).toISOString() } }, ['A', 'B']],
            [{ created_at: { eq: new Date(at(2)).toISOString() } }, ['C']],
            [{ created_at: { gte: at(2) } }, ['C', 'D']],
            [{ created_at: { lt: String(at(1) / 1000) } }, ['A']],
            [{ created_at: { not_eq: at(0) } }, ['B', 'C', 'D']],
            [{ created_at: { in: [at(0), new Date(at(3)).toISOString()] } }, ['A', 'D']],
            [{ created_at: { null: false } }, ['A', 'B', 'C', 'D']],
          ];
          for (const [filter, expected] of expectations) {
            assert.deepEqual(idsIn(await filtered(owner, filter)), ids(...expected), JSON.stringify(filter));
          }
        });

        it('answers 422 naming an unknown field', async () => {
          assert422(await filtered(owner, { colour: { eq: 'red' } }), 'colour');
        });

        it('answers 422 naming an unknown operator', async () => {
          assert422(await filtered(owner, { name: { contains: 'x' } }), 'contains');
        });

        it('answers 422 naming the filter when it is not JSON', async () => {
          assert422(await list(owner, { filter: '{"name":' }), 'filter');
        });

        it('answers 422 naming the filter when it is not an object', async () => {
          assert422(await list(owner, { filter: '[1,2]' }), 'filter');
        });

        it('answers 422 naming the field when its operators are not an object', async () => {
          assert422(await filtered(owner, { name: 'Algebra' }), 'filter', 'name');
        });

        it('answers 422 naming a field given an unreadable operand', async () => {
          assert422(await filtered(owner, { id: { eq: 'abc' } }), 'id');
          assert422(await filtered(owner, { start_time: { gte: 'soon' } }), 'start_time');
          assert422(await filtered(owner, { start_time: { null: 'maybe' } }), 'start_time');
        });

        it('answers 422 naming start_time for an operand beyond the year 9999', async () => {
          assert422(await filtered(owner, { start_time: { lt: '99999999999999999999' } }), 'start_time');
          assert422(await filtered(owner, { created_at: { gt: '2026-02-30' } }), 'created_at');
        });

        it('answers 422 naming name for an operand holding a NUL character', async () => {
          assert422(await filtered(owner, { name: { eq: 'a\u0000b' } }), 'name');
          assert422(await filtered(owner, { name: { like: '\u0000' } }), 'name');
        });

        it('answers 422 naming in when its operand is not a list', async () => {
          assert422(await filtered(owner, { type: { in: 'demo' } }), 'in', 'type');
        });

        it('answers 422 for like on a field that is not text', async () => {
          assert422(await filtered(owner, { start_time: { like: '2026' } }), 'like', 'start_time');
          assert422(await filtered(owner, { id: { like: '1' } }), 'like', 'id');
        });
      });

      describe('sort', () => {
        it('defaults to id ascending', async () => {
          assert.deepEqual(idsIn(await list(owner)), ids('A', 'B', 'C', 'D'));
        });

        it('sorts by id descending', async () => {
          assert.deepEqual(idsIn(await sorted(owner, [{ id: 'desc' }])), ids('D', 'C', 'B', 'A'));
        });

        it('sorts by name ascending and descending', async () => {
          assert.deepEqual(idsIn(await sorted(owner, [{ name: 'asc' }])), ids('A', 'D', 'B', 'C'));
          assert.deepEqual(idsIn(await sorted(owner, [{ name: 'desc' }])), ids('C', 'B', 'D', 'A'));
        });

        it('sorts by type', async () => {
          assert.deepEqual(idsIn(await sorted(owner, [{ type: 'asc' }])), ids('A', 'B', 'D', 'C'));
        });

        it('sorts by several keys, earlier keys first', async () => {
          assert.deepEqual(
            idsIn(await sorted(owner, [{ status: 'desc' }, { start_time: 'desc' }])),
            ids('D', 'A', 'B', 'C'),
          );
          assert.deepEqual(
            idsIn(await sorted(owner, [{ status: 'desc' }, { start_time: 'asc' }])),
            ids('A', 'D', 'B', 'C'),
          );
        });

        it('breaks ties by id ascending', async () => {
          assert.deepEqual(idsIn(await sorted(owner, [{ status: 'desc' }])), ids('A', 'D', 'B', 'C'));
        });

        it('sorts by created_at', async () => {
          assert.deepEqual(idsIn(await sorted(owner, [{ created_at: 'desc' }])), ids('D', 'C', 'B', 'A'));
        });

        it('sorts exams without a start_time after the others ascending, and first descending, on both databases', async () => {
          assert.deepEqual(idsIn(await sorted(owner, [{ start_time: 'asc' }])), ids('A', 'D', 'B', 'C'));
          assert.deepEqual(idsIn(await sorted(owner, [{ start_time: 'desc' }])), ids('C', 'B', 'D', 'A'));
        });

        it('accepts a single object instead of an array', async () => {
          assert.deepEqual(idsIn(await sorted(owner, { id: 'desc' })), ids('D', 'C', 'B', 'A'));
        });

        it('combines with a filter', async () => {
          const answer = await list(owner, {
            filter: JSON.stringify({ status: { eq: 'open' } }),
            sort: JSON.stringify([{ start_time: 'desc' }]),
          });
          assert.deepEqual(idsIn(answer), ids('D', 'A'));
        });

        it('answers 422 naming an unknown field', async () => {
          assert422(await sorted(owner, [{ colour: 'asc' }]), 'colour');
        });

        it('answers 422 naming a field with an unknown direction', async () => {
          assert422(await sorted(owner, [{ name: 'up' }]), 'sort', 'name');
        });

        it('answers 422 naming the sort when it is not JSON', async () => {
          assert422(await list(owner, { sort: '[{"name":"asc"' }), 'sort');
        });

        it('answers 422 naming the sort when an entry is not an object', async () => {
          assert422(await sorted(owner, ['name']), 'sort');
        });
      });
    });

    describe('scope', () => {
      let teacherOne: TestUser;
      let teacherTwo: TestUser;
      let admin: TestUser;
      let auditor: TestUser;
      let reviewer: TestUser;
      let localProctor: TestUser;
      let outsideAdmin: TestUser;
      let outsideTeacher: TestUser;
      let outsideProctor: TestUser;
      let superuser: TestUser;
      let examOne: Json;
      let examTwo: Json;
      let outsideExam: Json;

      before(async () => {
        const home = await server.institute();
        const elsewhere = await server.institute();
        teacherOne = await server.user(home, 'teacher');
        teacherTwo = await server.user(home, 'teacher');
        admin = await server.user(home, 'administrator');
        auditor = await server.user(home, 'auditor');
        reviewer = await server.user(home, 'reviewer');
        localProctor = await server.user(home, 'proctor');
        outsideAdmin = await server.user(elsewhere, 'administrator');
        outsideTeacher = await server.user(elsewhere, 'teacher');
        outsideProctor = await server.user(elsewhere, 'proctor');
        superuser = await server.user(elsewhere, 'superuser');
        examOne = await createExam(teacherOne, { name: 'One' });
        examTwo = await createExam(teacherTwo, { name: 'Two' });
        outsideExam = await createExam(outsideTeacher, { name: 'Outside' });
      });

      async function assertHidden(user: TestUser, exam: Json): Promise<void> {
        const id = exam.id as number;
        const expected = notFound('Exam', id);
        for (const answer of [
          await show(user, id),
          await user.client.v3('PATCH', '/exams/:id', { id, name: 'Taken over' }),
          await user.client.v3('PUT', '/exams/:id', { id, name: 'Taken over' }),
          await user.client.v3('DELETE', '/exams/:id', { id }),
        ]) {
          assert.equal(answer.status, 404, answer.text);
          assert.deepEqual(answer.json, expected);
        }
        const ids = idsIn(await list(user));
        assert.ok(!ids.includes(id), 'absent from the list');
        const byId = await filtered(user, { id: { eq: id } });
        assert.deepEqual(idsIn(byId), []);
        const withDeleted = await filtered(user, { status: { in: ['open', 'draft', 'closed', 'deleted'] } });
        assert.ok(!idsIn(withDeleted).includes(id), 'absent from a list filtered on status');
      }

      it('lets a teacher see only its own exams', async () => {
        assert.deepEqual(idsIn(await list(teacherOne)), [examOne.id]);
        assert.deepEqual(idsIn(await list(teacherTwo)), [examTwo.id]);
      });

      it("answers a teacher as if another teacher's exam did not exist", async () => {
        await assertHidden(teacherOne, examTwo);
        assert.deepEqual(examIn(await show(teacherTwo, examTwo.id as number)), examTwo, 'unchanged');
      });

      it('answers an unknown id and an out-of-scope id with the same body shape', async () => {
        const unknown = await show(teacherOne, 999999);
        const hidden = await show(teacherOne, examTwo.id as number);
        assert.equal(unknown.status, hidden.status);
        assert.equal(unknown.headers['content-type'], hidden.headers['content-type']);
        assert.equal(hidden.text, JSON.stringify(notFound('Exam', examTwo.id as number)));
        assert.equal(unknown.text, JSON.stringify(notFound('Exam', 999999)));
      });

      it('lets an administrator list every exam of its institute', async () => {
        const ids = idsIn(await list(admin));
        assert.deepEqual(ids, [examOne.id, examTwo.id]);
      });

      it("lets an administrator show and update a teacher's exam, which keeps its owner", async () => {
        const id = examTwo.id as number;
        const shown = await show(admin, id);
        assert.equal(shown.status, 200, shown.text);
        const answer = await admin.client.v3('PATCH', '/exams/:id', { id, restrictions: 'Set by admin' });
        assert.equal(answer.status, 200, answer.text);
        const updated = examIn(answer);
        assert.equal(updated.restrictions, 'Set by admin');
        assert.equal(updated.user_id, teacherTwo.id);
        examTwo = updated;
        assert.deepEqual(examIn(await show(teacherTwo, id)), updated);
      });

      it("lets an administrator destroy a teacher's exam", async () => {
        const exam = await createExam(teacherOne, { name: 'Removed by admin' });
        const answer = await admin.client.v3('DELETE', '/exams/:id', { id: exam.id as number });
        assert.equal(answer.status, 200, answer.text);
        assert.deepEqual(answer.json, {});
        assert.equal((await show(teacherOne, exam.id as number)).status, 404);
      });

      it('lets an administrator create exams it then owns', async () => {
        const exam = await createExam(admin, { name: 'Admin exam' });
        assert.equal(exam.user_id, admin.id);
        const gone = await admin.client.v3('DELETE', '/exams/:id', { id: exam.id as number });
        assert.equal(gone.status, 200, gone.text);
      });

      for (const [label, pick] of [
        ['administrator', () => outsideAdmin],
        ['teacher', () => outsideTeacher],
        ['proctor', () => outsideProctor],
      ] as const) {
        it(`answers another institute's ${label} as if the exam did not exist`, async () => {
          await assertHidden(pick(), examOne);
          assert.deepEqual(examIn(await show(teacherOne, examOne.id as number)), examOne, 'unchanged');
        });
      }

      it("never lists another institute's exams", async () => {
        assert.deepEqual(idsIn(await list(outsideAdmin)), [outsideExam.id]);
        assert.deepEqual(idsIn(await list(admin)), [examOne.id, examTwo.id]);
      });

      for (const [label, pick] of [
        ['proctor', () => localProctor],
        ['auditor', () => auditor],
        ['reviewer', () => reviewer],
      ] as const) {
        describe(`a ${label}`, () => {
          it('lists and shows every exam of its institute', async () => {
            const user = pick();
            assert.deepEqual(idsIn(await list(user)), [examOne.id, examTwo.id]);
            const shown = await show(user, examOne.id as number);
            assert.equal(shown.status, 200, shown.text);
            assert.deepEqual(examIn(shown), examOne);
          });

          it('answers 403 to PATCH, PUT and DELETE, changing nothing', async () => {
            const user = pick();
            const id = examOne.id as number;
            for (const answer of [
              await user.client.v3('PATCH', '/exams/:id', { id, name: 'Renamed' }),
              await user.client.v3('PUT', '/exams/:id', { id, name: 'Renamed' }),
              await user.client.v3('DELETE', '/exams/:id', { id }),
            ]) {
              assert.equal(answer.status, 403, answer.text);
              assert.deepEqual(answer.json, NOT_AUTHORIZED);
            }
            assert.deepEqual(examIn(await show(teacherOne, id)), examOne);
          });

          it('answers 403 to POST', async () => {
            const answer = await pick().client.v3('POST', '/exams', {
              name: 'Mine',
              type: 'demo',
              duration_minutes: 5,
            });
            assert.equal(answer.status, 403, answer.text);
            assert.deepEqual(answer.json, NOT_AUTHORIZED);
          });

          it('answers 404, not 403, for an unknown id', async () => {
            const answer = await pick().client.v3('PATCH', '/exams/:id', { id: 999999, name: 'Renamed' });
            assert.equal(answer.status, 404, answer.text);
            assert.deepEqual(answer.json, notFound('Exam', 999999));
          });
        });
      }

      it('lets a teacher see and update an exam it co-manages', async () => {
        const id = examTwo.id as number;
        await server.app.database.db
          .insertInto('exam_comanagers')
          .values({ exam_id: id, user_id: teacherOne.id, created_at: Date.now() })
          .execute();
        const shown = await show(teacherOne, id);
        assert.equal(shown.status, 200, shown.text);
        assert.deepEqual(examIn(shown).comanager_ids, [teacherOne.id]);
        assert.deepEqual(idsIn(await list(teacherOne)), [examOne.id, examTwo.id]);
        const answer = await teacherOne.client.v3('PATCH', '/exams/:id', { id, allow_pen_paper: true });
        assert.equal(answer.status, 200, answer.text);
        assert.equal(examIn(answer).allow_pen_paper, true);
        examTwo = examIn(answer);
      });

      it('lets a superuser see exams of every institute', async () => {
        const ids = idsIn(await list(superuser));
        for (const exam of [examOne, examTwo, outsideExam])
          assert.ok(ids.includes(exam.id), `lists ${String(exam.name)}`);
        const shown = await show(superuser, examOne.id as number);
        assert.equal(shown.status, 200, shown.text);
      });
    });
  });
}
