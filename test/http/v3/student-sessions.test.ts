import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs } from 'kysely';
import { parseListQuery } from '../../../src/domain/listing.ts';
import { STUDENT_SESSION_LIST_FIELDS } from '../../../src/domain/student-sessions/student-session.ts';
import { listStudentSessions } from '../../../src/domain/student-sessions/student-sessions.repository.ts';
import type { CallOptions } from '../../helpers/client.ts';
import type { HttpAnswer } from '../../helpers/http.ts';
import { DIALECTS, startTestServer, TestClock, type TestServer } from '../../helpers/server.ts';
import type { Scalar } from '../../helpers/signing.ts';
import { object } from '../../helpers/json.ts';
import { missing, NOT_AUTHORIZED, notFound } from '../../helpers/answers.ts';

type Json = Record<string, unknown>;
type TestUser = Awaited<ReturnType<TestServer['user']>>;

const ISO_MILLIS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const TAKEN = { error: "'email':['has already been taken']", errors: { email: ['has already been taken'] } };

/** Every field of api.md's V3 student session record, then contract §6's additions. */
const STUDENT_FIELDS = [
  'id',
  'session_id',
  'student_id',
  'time_slot',
  'created_at',
  'updated_at',
  'email',
  'name',
  'pin_code',
  'operating_system',
  'browser',
  'browser_version',
  'status',
  'token',
  'screenshare_check',
  'microphone_check',
  'speakers_check',
  'webcam_check',
  'mobile_check',
  'bandwidth_check',
  'bandwidth_speed',
  'dummy_exam_survey',
  'skip_requirements',
  'send_confirmation',
  'start_time',
  'end_time',
  'open_time',
  'reservation_time',
  'expires_at',
  'recording_started_at',
  'recording_ended_at',
  'exam_id',
  'entered_room',
  'exam_document_content_type',
  'exam_document_file_size',
  'exam_document_updated_at',
  'reviewed',
  'id_card_file_name',
  'id_card_content_type',
  'id_card_file_size',
  'face_photo_file_name',
  'face_photo_content_type',
  'face_photo_file_size',
  'individual_info',
  'is_individual_info_html',
  'rtc_session_id',
  'rtc_session_ids',
  'in_setup',
  'in_check_requirements',
  'attempt',
  'archived',
  'current_exam_mode',
  'transcoding_status',
  'priority',
  'incidents',
  'proctor_id',
  'external_id',
  'end_reason',
  'incidents_count',
  // Live proctoring (docs/api-live.md)
  'live_status',
  'clock_paused',
  'paused_seconds',
  // The phone of a mobile_cam exam (docs/room-api.md)
  'mobile_status',
  'mobile_device',
  // Step 14: the candidate's acceptance of the exam's terms (docs/room.md)
  'terms_accepted_at',
  // Step 17: accommodations and the one clock (docs/accommodations.md)
  'accommodations',
  'deadline_at',
  'time_allowed_seconds',
  'breaks_taken',
  'on_break',
  'practice',
] as const;

const CHECKS = [
  'screenshare_check',
  'microphone_check',
  'speakers_check',
  'webcam_check',
  'mobile_check',
  'bandwidth_check',
] as const;

const TIMES = [
  'start_time',
  'end_time',
  'open_time',
  'reservation_time',
  'expires_at',
  'recording_started_at',
  'recording_ended_at',
  'exam_document_updated_at',
] as const;

function studentIn(answer: HttpAnswer): Json {
  const body = object(answer.json, 'body');
  assert.deepEqual(Object.keys(body), ['student'], answer.text);
  return object(body.student, 'student');
}

function studentsIn(answer: HttpAnswer): Json[] {
  assert.equal(answer.status, 200, answer.text);
  const body = object(answer.json, 'body');
  assert.deepEqual(Object.keys(body), ['students']);
  const list = body.students;
  assert.ok(Array.isArray(list), 'students is an array');
  return list.map((item) => object(item, 'student'));
}

function idsIn(answer: HttpAnswer): unknown[] {
  return studentsIn(answer).map((student) => student.id);
}

function assert422(answer: HttpAnswer, field: string): void {
  assert.equal(answer.status, 422, answer.text);
  const body = object(answer.json, 'body');
  assert.equal(typeof body.error, 'string');
  assert.ok((body.error as string).startsWith(`'${field}':[`), `${String(body.error)} names ${field}`);
  assert.ok(Object.hasOwn(object(body.errors, 'errors'), field), `errors names ${field}`);
}

/** Creates an exam through the API and returns its record. */
async function createExam(user: TestUser, params: Record<string, Scalar> = {}): Promise<Json> {
  const answer = await user.client.v3('POST', '/exams', {
    name: 'Exam',
    type: 'classroom',
    duration_minutes: 60,
    ...params,
  });
  assert.equal(answer.status, 201, answer.text);
  return object(object(answer.json, 'body').exam, 'exam');
}

function create(
  user: TestUser,
  examId: Scalar,
  params: Record<string, Scalar>,
  options: CallOptions = {},
): Promise<HttpAnswer> {
  return user.client.v3('POST', '/exams/:exam_id/student_sessions', { exam_id: examId, ...params }, options);
}

let emailSequence = 0;

/** Creates a session (a fresh email unless one is given) and returns the create answer's record. */
async function createStudent(
  user: TestUser,
  examId: Scalar,
  params: Record<string, Scalar> = {},
): Promise<Json> {
  emailSequence += 1;
  const answer = await create(user, examId, {
    name: `Student ${emailSequence}`,
    email: `student${emailSequence}@example.org`,
    ...params,
  });
  assert.equal(answer.status, 201, answer.text);
  return studentIn(answer);
}

function show(user: TestUser, id: Scalar): Promise<HttpAnswer> {
  return user.client.v3('GET', '/student_sessions/:id', { id });
}

function listExam(user: TestUser, examId: Scalar, params: Record<string, Scalar> = {}): Promise<HttpAnswer> {
  return user.client.v3('GET', '/exams/:exam_id/student_sessions', { exam_id: examId, ...params });
}

function listAll(user: TestUser, params: Record<string, Scalar> = {}): Promise<HttpAnswer> {
  return user.client.v3('GET', '/student_sessions', params);
}

function addIncident(user: TestUser, id: Scalar, params: Record<string, Scalar>): Promise<HttpAnswer> {
  return user.client.v3('POST', '/student_sessions/:id/incidents', { id, ...params });
}

/** Counts the statements a Kysely instance runs. */
class QueryCounter implements KyselyPlugin {
  count = 0;
  transformQuery(args: PluginTransformQueryArgs) {
    this.count += 1;
    return args.node;
  }
  transformResult(args: PluginTransformResultArgs) {
    return Promise.resolve(args.result);
  }
}

for (const dialect of DIALECTS) {
  describe(`V3 student sessions [${dialect}]`, () => {
    // Near the real time: the client signs with its own clock, which must lie in the server's window.
    const clock = new TestClock(Math.floor(Date.now() / 1000) * 1000);
    let server: TestServer;
    let instituteId: number;
    let teacher: TestUser;
    let proctor: TestUser;
    let exam: Json;
    /** An exam open 2026-06-01 09:00 to 12:00 UTC. */
    let windowed: Json;

    before(async () => {
      server = await startTestServer(dialect, { clock });
      instituteId = await server.institute();
      teacher = await server.user(instituteId, 'teacher');
      proctor = await server.user(instituteId, 'proctor');
      exam = await createExam(teacher, { name: 'Plain' });
      windowed = await createExam(teacher, {
        name: 'Windowed',
        start_time: '2026-06-01T09:00:00Z',
        end_time: '2026-06-01T12:00:00Z',
      });
    });

    after(async () => {
      await server.close();
    });

    /** Sets columns no V3 call writes yet (status, end time, proctor...) straight in the database. */
    async function setColumns(id: Scalar, values: Record<string, unknown>): Promise<void> {
      await server.app.database.db
        .updateTable('student_sessions')
        .set(values)
        .where('id', '=', Number(id))
        .execute();
    }

    describe('POST /api/v3/exams/:exam_id/student_sessions', () => {
      it('answers 201 with every field of the record and the documented defaults', async () => {
        const answer = await create(teacher, exam.id as number, {
          name: 'Zoë Brown',
          email: 'zoe@example.org',
        });
        assert.equal(answer.status, 201, answer.text);
        const student = studentIn(answer);
        for (const field of STUDENT_FIELDS) assert.ok(Object.hasOwn(student, field), `student has ${field}`);
        assert.ok(Number.isInteger(student.id) && (student.id as number) > 0);
        assert.equal(student.exam_id, exam.id);
        assert.equal(student.name, 'Zoë Brown');
        assert.equal(student.email, 'zoe@example.org');
        assert.equal(student.attempt, 0);
        assert.equal(student.status, 'registered');
        for (const check of CHECKS) assert.equal(student[check], 'not_started', check);
        assert.equal(student.transcoding_status, 'not_sent_to_queue');
        assert.deepEqual(student.rtc_session_ids, []);
        assert.equal(student.rtc_session_id, null);
        assert.deepEqual(student.incidents, []);
        assert.equal(student.incidents_count, 0);
        assert.equal(student.live_status, 'offline');
        assert.equal(student.clock_paused, false);
        assert.equal(student.paused_seconds, 0);
        for (const flag of [
          'skip_requirements',
          'send_confirmation',
          'entered_room',
          'is_individual_info_html',
          'in_setup',
          'in_check_requirements',
          'archived',
        ]) {
          assert.equal(student[flag], false, `${flag} defaults to false`);
        }
        for (const time of TIMES) assert.equal(student[time], null, `${time} defaults to null`);
        for (const field of [
          'session_id',
          'student_id',
          'individual_info',
          'priority',
          'proctor_id',
          'external_id',
          'end_reason',
          'current_exam_mode',
          'id_card_file_name',
          'face_photo_file_name',
        ]) {
          assert.equal(student[field], null, `${field} defaults to null`);
        }
        assert.equal(student.time_slot, 0);
        assert.equal(student.created_at, new Date(clock.now()).toISOString());
        assert.match(String(student.created_at), ISO_MILLIS);
        assert.equal(student.updated_at, student.created_at);
      });

      it('leaves is_email_sent out of the create answer only', async () => {
        const created = await createStudent(teacher, exam.id as number);
        assert.ok(!Object.hasOwn(created, 'is_email_sent'), 'absent from the create answer');
        const shown = studentIn(await show(teacher, created.id as number));
        assert.equal(shown.is_email_sent, false, 'present in show');
        assert.deepEqual(shown, { ...created, is_email_sent: false });
        const listed = studentsIn(await listExam(teacher, exam.id as number)).find(
          (student) => student.id === created.id,
        );
        assert.equal(listed?.is_email_sent, false, 'present in the exam list');
        const everywhere = studentsIn(await listAll(teacher)).find((student) => student.id === created.id);
        assert.equal(everywhere?.is_email_sent, false, 'present in the full list');
      });

      it('gives each session a unique 32-hex-character token and a 6-digit pin code', async () => {
        const tokens = new Set<unknown>();
        for (let index = 0; index < 5; index += 1) {
          const student = await createStudent(teacher, exam.id as number);
          assert.match(String(student.token), /^[0-9a-f]{32}$/);
          assert.equal(typeof student.pin_code, 'number');
          assert.ok(Number.isInteger(student.pin_code));
          assert.match(String(student.pin_code), /^\d{6}$/);
          tokens.add(student.token);
        }
        assert.equal(tokens.size, 5);
      });

      it('keeps every parameter it is sent and shows the same record afterwards', async () => {
        const student = await createStudent(teacher, windowed.id as number, {
          individual_info: '<b>Room 4</b>',
          is_individual_info_html: true,
          skip_requirements: true,
          open_time: '2026-06-01T10:15:00.250Z',
          priority: 'high',
          external_id: 'sis-4711',
        });
        assert.equal(student.individual_info, '<b>Room 4</b>');
        assert.equal(student.is_individual_info_html, true);
        assert.equal(student.skip_requirements, true);
        assert.equal(student.open_time, '2026-06-01T10:15:00.250Z');
        assert.equal(student.priority, 'high');
        assert.equal(student.external_id, 'sis-4711');
        assert.deepEqual(studentIn(await show(teacher, student.id as number)), {
          ...student,
          is_email_sent: false,
        });
      });

      it('stores the email trimmed and in lower case', async () => {
        const student = await createStudent(teacher, exam.id as number, {
          email: '  Mixed.Case@Example.ORG ',
        });
        assert.equal(student.email, 'mixed.case@example.org');
      });

      for (const [label, params, name] of [
        ['a missing name', { email: 'nameless@example.org' }, 'name'],
        ['an empty name', { name: '', email: 'nameless@example.org' }, 'name'],
        ['a blank name', { name: '   ', email: 'nameless@example.org' }, 'name'],
        ['a null name', { name: null, email: 'nameless@example.org' }, 'name'],
        ['a missing email', { name: 'No Mail' }, 'email'],
        ['an empty email', { name: 'No Mail', email: '' }, 'email'],
        ['a null email', { name: 'No Mail', email: null }, 'email'],
        ['both missing (name first)', {}, 'name'],
      ] as const) {
        it(`answers 422 for ${label}`, async () => {
          const answer = await create(teacher, exam.id as number, params);
          assert.equal(answer.status, 422, answer.text);
          assert.deepEqual(answer.json, missing(name));
        });
      }

      it('answers 422 naming a missing name in a form-encoded body', async () => {
        const answer = await create(
          teacher,
          exam.id as number,
          { email: 'form@example.org' },
          { as: 'form' },
        );
        assert.equal(answer.status, 422, answer.text);
        assert.deepEqual(answer.json, missing('name'));
      });

      it('answers 422 naming an email that is not an address', async () => {
        assert422(await create(teacher, exam.id as number, { name: 'Odd', email: 'not an email' }), 'email');
      });

      describe('attempts', () => {
        let attemptsExam: Json;

        before(async () => {
          attemptsExam = await createExam(teacher, { name: 'Attempts' });
        });

        it("answers 422 'email':['has already been taken'] when an email is reused without a new attempt", async () => {
          await createStudent(teacher, attemptsExam.id as number, { email: 'again@example.org' });
          const answer = await create(teacher, attemptsExam.id as number, {
            name: 'Again',
            email: 'again@example.org',
          });
          assert.equal(answer.status, 422, answer.text);
          assert.deepEqual(answer.json, TAKEN);
          const explicit = await create(teacher, attemptsExam.id as number, {
            name: 'Again',
            email: 'again@example.org',
            attempt: 0,
          });
          assert.deepEqual(explicit.json, TAKEN);
        });

        it('compares emails case-insensitively', async () => {
          const answer = await create(teacher, attemptsExam.id as number, {
            name: 'Shouting',
            email: 'AGAIN@Example.Org',
          });
          assert.equal(answer.status, 422, answer.text);
          assert.deepEqual(answer.json, TAKEN);
        });

        it('accepts each new attempt exactly one above the highest', async () => {
          const first = await createStudent(teacher, attemptsExam.id as number, {
            email: 'steps@example.org',
          });
          const second = await createStudent(teacher, attemptsExam.id as number, {
            email: 'Steps@example.org',
            attempt: 1,
          });
          const third = await createStudent(teacher, attemptsExam.id as number, {
            email: 'steps@example.org',
            attempt: '2',
          });
          assert.deepEqual([first.attempt, second.attempt, third.attempt], [0, 1, 2]);
          assert.deepEqual([second.email, third.email], ['steps@example.org', 'steps@example.org']);
        });

        it('answers 422 taken for an attempt number that exists', async () => {
          const answer = await create(teacher, attemptsExam.id as number, {
            name: 'Steps',
            email: 'steps@example.org',
            attempt: 1,
          });
          assert.deepEqual(answer.json, TAKEN);
        });

        it('answers 422 on attempt when a number is skipped', async () => {
          const answer = await create(teacher, attemptsExam.id as number, {
            name: 'Steps',
            email: 'steps@example.org',
            attempt: 4,
          });
          assert.equal(answer.status, 422, answer.text);
          assert.deepEqual(answer.json, {
            error: "'attempt':['must be 3, one above the highest attempt of this email']",
            errors: { attempt: ['must be 3, one above the highest attempt of this email'] },
          });
        });

        it('answers 422 on attempt when the first session of an email is not attempt 0', async () => {
          const answer = await create(teacher, attemptsExam.id as number, {
            name: 'Late',
            email: 'late@example.org',
            attempt: 1,
          });
          assert.equal(answer.status, 422, answer.text);
          assert.deepEqual(answer.json, {
            error: "'attempt':['must be 0 for the first attempt of this email']",
            errors: { attempt: ['must be 0 for the first attempt of this email'] },
          });
        });

        it('counts attempts per exam: the same email starts at 0 in another exam', async () => {
          const other = await createStudent(teacher, exam.id as number, { email: 'steps@example.org' });
          assert.equal(other.attempt, 0);
        });

        for (const value of ['abc', -1, 1.5]) {
          it(`answers 422 on attempt for ${JSON.stringify(value)}`, async () => {
            assert422(
              await create(teacher, attemptsExam.id as number, {
                name: 'Bad',
                email: 'bad-attempt@example.org',
                attempt: value,
              }),
              'attempt',
            );
          });
        }

        it('keeps the attempt of an archived session taken', async () => {
          const ended = await createStudent(teacher, attemptsExam.id as number, {
            email: 'ended@example.org',
          });
          await setColumns(ended.id as number, { end_time: clock.now() });
          const gone = await teacher.client.v3('DELETE', '/student_sessions/:id', { id: ended.id as number });
          assert.equal(gone.status, 200, gone.text);
          const again = await create(teacher, attemptsExam.id as number, {
            name: 'Ended',
            email: 'ended@example.org',
          });
          assert.deepEqual(again.json, TAKEN);
          const next = await createStudent(teacher, attemptsExam.id as number, {
            email: 'ended@example.org',
            attempt: 1,
          });
          assert.equal(next.attempt, 1);
        });
      });

      describe('open_time', () => {
        const instant = Date.parse('2026-06-01T10:00:00.000Z');
        for (const [label, value, expected] of [
          ['ISO 8601', '2026-06-01T10:00:00Z', '2026-06-01T10:00:00.000Z'],
          ['ISO 8601 with an offset', '2026-06-01T12:00:00+02:00', '2026-06-01T10:00:00.000Z'],
          ['epoch seconds', instant / 1000, '2026-06-01T10:00:00.000Z'],
          ['epoch seconds as digits', String(instant / 1000), '2026-06-01T10:00:00.000Z'],
          ['epoch milliseconds', instant + 7, '2026-06-01T10:00:00.007Z'],
          ['the exam start_time itself', '2026-06-01T09:00:00Z', '2026-06-01T09:00:00.000Z'],
          ['the exam end_time itself', '2026-06-01T12:00:00Z', '2026-06-01T12:00:00.000Z'],
        ] as const) {
          it(`accepts ${label} within the exam's window`, async () => {
            const student = await createStudent(teacher, windowed.id as number, { open_time: value });
            assert.equal(student.open_time, expected);
          });
        }

        it('answers 422 on open_time before the exam start_time', async () => {
          const answer = await create(teacher, windowed.id as number, {
            name: 'Early',
            email: 'early@example.org',
            open_time: '2026-06-01T08:59:59.999Z',
          });
          assert.equal(answer.status, 422, answer.text);
          assert.deepEqual(answer.json, {
            error: "'open_time':['must be on or after the exam start_time']",
            errors: { open_time: ['must be on or after the exam start_time'] },
          });
        });

        it('answers 422 on open_time after the exam end_time', async () => {
          const answer = await create(teacher, windowed.id as number, {
            name: 'Late',
            email: 'late@example.org',
            open_time: String(Date.parse('2026-06-01T12:00:01Z') / 1000),
          });
          assert.equal(answer.status, 422, answer.text);
          assert.deepEqual(answer.json, {
            error: "'open_time':['must be on or before the exam end_time']",
            errors: { open_time: ['must be on or before the exam end_time'] },
          });
        });

        it('checks only the bound an exam has', async () => {
          const startOnly = await createExam(teacher, {
            name: 'Start only',
            start_time: '2026-06-01T09:00:00Z',
          });
          const later = await createStudent(teacher, startOnly.id as number, {
            open_time: '2030-01-01T00:00:00Z',
          });
          assert.equal(later.open_time, '2030-01-01T00:00:00.000Z');
          assert422(
            await create(teacher, startOnly.id as number, {
              name: 'Before',
              email: 'before@example.org',
              open_time: '2026-05-01',
            }),
            'open_time',
          );
        });

        it('accepts any open_time when the exam has no window, and none at all', async () => {
          const any = await createStudent(teacher, exam.id as number, { open_time: '2001-01-01T00:00:00Z' });
          assert.equal(any.open_time, '2001-01-01T00:00:00.000Z');
          const none = await createStudent(teacher, windowed.id as number, { open_time: null });
          assert.equal(none.open_time, null);
        });

        it('answers 422 naming an unreadable open_time', async () => {
          assert422(
            await create(teacher, exam.id as number, {
              name: 'When',
              email: 'when@example.org',
              open_time: 'soon',
            }),
            'open_time',
          );
        });
      });

      describe('booleans', () => {
        for (const [label, on, off, as] of [
          ['JSON true and false', true, false, 'json'],
          ['JSON 1 and 0', 1, 0, 'json'],
          ['the strings "true" and "false"', 'true', 'false', 'json'],
          ['the strings "1" and "0"', '1', '0', 'json'],
          ['form-encoded "1" and "0"', '1', '0', 'form'],
          ['form-encoded "true" and "false"', 'true', 'false', 'form'],
        ] as const) {
          it(`reads is_individual_info_html and skip_requirements sent as ${label}`, async () => {
            emailSequence += 1;
            const first = await create(
              teacher,
              exam.id as number,
              {
                name: 'Flags',
                email: `flags${emailSequence}@example.org`,
                is_individual_info_html: on,
                skip_requirements: off,
              },
              { as },
            );
            assert.equal(first.status, 201, first.text);
            const one = studentIn(first);
            assert.deepEqual([one.is_individual_info_html, one.skip_requirements], [true, false]);
            const second = await create(
              teacher,
              exam.id as number,
              {
                name: 'Flags',
                email: `flags${emailSequence}b@example.org`,
                is_individual_info_html: off,
                skip_requirements: on,
              },
              { as },
            );
            assert.equal(second.status, 201, second.text);
            const two = studentIn(second);
            assert.deepEqual([two.is_individual_info_html, two.skip_requirements], [false, true]);
          });
        }

        it('reads a whole form-encoded create, attempt and times as strings', async () => {
          const answer = await create(
            teacher,
            windowed.id as number,
            {
              name: 'Form Student',
              email: 'form.student@example.org',
              attempt: '0',
              individual_info: 'Bring a pencil & ID',
              open_time: String(Date.parse('2026-06-01T09:30:00Z') / 1000),
              skip_requirements: '1',
            },
            { as: 'form' },
          );
          assert.equal(answer.status, 201, answer.text);
          const student = studentIn(answer);
          assert.equal(student.individual_info, 'Bring a pencil & ID');
          assert.equal(student.open_time, '2026-06-01T09:30:00.000Z');
          assert.equal(student.skip_requirements, true);
          assert.equal(student.attempt, 0);
        });

        it('answers 422 naming a boolean that is not true, false, 1 or 0', async () => {
          assert422(
            await create(teacher, exam.id as number, {
              name: 'Yes',
              email: 'yes@example.org',
              skip_requirements: 'yes',
            }),
            'skip_requirements',
          );
        });
      });

      it('answers 404 for an unknown exam', async () => {
        const answer = await create(teacher, 999999, { name: 'Ghost', email: 'ghost@example.org' });
        assert.equal(answer.status, 404, answer.text);
        assert.deepEqual(answer.json, notFound('Exam', 999999));
      });

      it('answers 404 for a deleted exam', async () => {
        const doomed = await createExam(teacher, { name: 'Doomed' });
        await teacher.client.v3('DELETE', '/exams/:id', { id: doomed.id as number });
        const answer = await create(teacher, doomed.id as number, {
          name: 'Late',
          email: 'late@example.org',
        });
        assert.equal(answer.status, 404, answer.text);
        assert.deepEqual(answer.json, notFound('Exam', doomed.id as number));
      });

      it('answers 403 to a proctor, who sees the exam but may not add students', async () => {
        const answer = await create(proctor, exam.id as number, { name: 'Nope', email: 'nope@example.org' });
        assert.equal(answer.status, 403, answer.text);
        assert.deepEqual(answer.json, NOT_AUTHORIZED);
      });
    });

    describe('GET /api/v3/student_sessions/:id', () => {
      let student: Json;

      before(async () => {
        student = await createStudent(teacher, exam.id as number, { name: 'Shown' });
      });

      it('answers 200 with the record', async () => {
        const answer = await show(teacher, student.id as number);
        assert.equal(answer.status, 200, answer.text);
        assert.deepEqual(answer.json, { student: { ...student, is_email_sent: false } });
      });

      it('answers 404 for an unknown id', async () => {
        const answer = await show(teacher, 999999);
        assert.equal(answer.status, 404, answer.text);
        assert.deepEqual(answer.json, notFound('Student Session', 999999));
      });

      for (const id of ['abc', '0', '-1', '99999999999', '1e3']) {
        it(`answers 404 naming the id as sent for ${JSON.stringify(id)}`, async () => {
          const answer = await show(teacher, id);
          assert.equal(answer.status, 404, answer.text);
          assert.deepEqual(answer.json, notFound('Student Session', id));
        });
      }

      it('answers 404 once its exam is deleted', async () => {
        const doomed = await createExam(teacher, { name: 'Doomed with students' });
        const orphan = await createStudent(teacher, doomed.id as number);
        await teacher.client.v3('DELETE', '/exams/:id', { id: doomed.id as number });
        const answer = await show(teacher, orphan.id as number);
        assert.equal(answer.status, 404, answer.text);
        assert.deepEqual(answer.json, notFound('Student Session', orphan.id as number));
        assert.ok(!idsIn(await listAll(teacher)).includes(orphan.id), 'absent from the full list');
      });

      it('lets a proctor of the institute read it', async () => {
        const answer = await show(proctor, student.id as number);
        assert.equal(answer.status, 200, answer.text);
      });
    });

    for (const method of ['PATCH', 'PUT'] as const) {
      describe(`${method} /api/v3/student_sessions/:id`, () => {
        let student: Json;

        before(async () => {
          student = await createStudent(teacher, windowed.id as number, {
            name: `Before ${method}`,
            email: `before-${method.toLowerCase()}@example.org`,
            individual_info: 'Seat 1',
            priority: 'low',
          });
          student = { ...student, is_email_sent: false };
        });

        function update(params: Record<string, Scalar>, options: CallOptions = {}): Promise<HttpAnswer> {
          return teacher.client.v3(
            method,
            '/student_sessions/:id',
            { id: student.id as number, ...params },
            options,
          );
        }

        it('changes only what is sent and keeps the rest', async () => {
          clock.current += 60_000;
          const answer = await update({ name: `After ${method}`, external_id: 'ext-9' });
          assert.equal(answer.status, 200, answer.text);
          const updated = studentIn(answer);
          assert.deepEqual(updated, {
            ...student,
            name: `After ${method}`,
            external_id: 'ext-9',
            updated_at: new Date(clock.now()).toISOString(),
          });
          assert.deepEqual(studentIn(await show(teacher, student.id as number)), updated);
          student = updated;
        });

        it('changes every updatable field', async () => {
          const answer = await update({
            email: `Moved-${method}@Example.org`,
            individual_info: '<i>Seat 2</i>',
            is_individual_info_html: 1,
            skip_requirements: 'true',
            open_time: '2026-06-01T11:00:00Z',
            priority: 'high',
            external_id: null,
          });
          assert.equal(answer.status, 200, answer.text);
          const updated = studentIn(answer);
          assert.equal(updated.email, `moved-${method.toLowerCase()}@example.org`);
          assert.equal(updated.individual_info, '<i>Seat 2</i>');
          assert.equal(updated.is_individual_info_html, true);
          assert.equal(updated.skip_requirements, true);
          assert.equal(updated.open_time, '2026-06-01T11:00:00.000Z');
          assert.equal(updated.priority, 'high');
          assert.equal(updated.external_id, null);
          student = updated;
        });

        it('reads a form-encoded body with "0" and "1"', async () => {
          const answer = await update(
            { is_individual_info_html: '0', skip_requirements: '0' },
            { as: 'form' },
          );
          assert.equal(answer.status, 200, answer.text);
          const updated = studentIn(answer);
          assert.deepEqual([updated.is_individual_info_html, updated.skip_requirements], [false, false]);
          student = updated;
        });

        it('does not change the attempt, the exam or the status', async () => {
          const answer = await update({ attempt: 5, exam_id: exam.id as number, status: 'exam_finished' });
          assert.equal(answer.status, 200, answer.text);
          const updated = studentIn(answer);
          assert.equal(updated.attempt, student.attempt);
          assert.equal(updated.exam_id, windowed.id);
          assert.equal(updated.status, 'registered');
          student = updated;
        });

        it("answers 422 'email':['has already been taken'] for another session's email and attempt", async () => {
          const other = await createStudent(teacher, windowed.id as number);
          const answer = await update({ email: String(other.email).toUpperCase() });
          assert.equal(answer.status, 422, answer.text);
          assert.deepEqual(answer.json, TAKEN);
          assert.deepEqual(studentIn(await show(teacher, student.id as number)), student);
        });

        it('accepts its own email in another case', async () => {
          const answer = await update({ email: String(student.email).toUpperCase() });
          assert.equal(answer.status, 200, answer.text);
          assert.equal(studentIn(answer).email, student.email);
          student = studentIn(answer);
        });

        it('answers 422 on open_time outside the exam window and changes nothing', async () => {
          const answer = await update({ open_time: '2026-06-02T09:00:00Z', name: 'Changed' });
          assert422(answer, 'open_time');
          assert.deepEqual(studentIn(await show(teacher, student.id as number)), student);
        });

        it('answers 422 naming an empty name or email', async () => {
          const noName = await update({ name: '' });
          assert.equal(noName.status, 422, noName.text);
          assert.deepEqual(noName.json, missing('name'));
          const noEmail = await update({ email: ' ' });
          assert.equal(noEmail.status, 422, noEmail.text);
          assert.deepEqual(noEmail.json, missing('email'));
        });

        it('answers 404 for an unknown id', async () => {
          const answer = await teacher.client.v3(method, '/student_sessions/:id', {
            id: 999999,
            name: 'Ghost',
          });
          assert.equal(answer.status, 404, answer.text);
          assert.deepEqual(answer.json, notFound('Student Session', 999999));
        });

        it('answers 403 to a proctor and changes nothing', async () => {
          const answer = await proctor.client.v3(method, '/student_sessions/:id', {
            id: student.id as number,
            name: 'Proctored',
          });
          assert.equal(answer.status, 403, answer.text);
          assert.deepEqual(answer.json, NOT_AUTHORIZED);
          assert.deepEqual(studentIn(await show(teacher, student.id as number)), student);
        });
      });
    }

    describe('DELETE /api/v3/student_sessions/:id', () => {
      it('destroys a session without an end time, with its incidents and files', async () => {
        const student = await createStudent(teacher, exam.id as number);
        const id = student.id as number;
        const { files } = server.app.services;
        const keep = (name: string) =>
          files.keepStream(Readable.from([Buffer.from(`bytes of ${name}`)]), {
            instituteId,
            originalName: name,
            contentType: 'application/octet-stream',
          });
        const idCard = await keep('id.png');
        const face = await keep('face.png');
        const document = await keep('answers.pdf');
        const upload = await keep('upload.txt');
        await setColumns(id, {
          id_card_file_id: idCard.id,
          face_photo_file_id: face.id,
          exam_document_file_id: document.id,
        });
        await server.app.database.db
          .insertInto('session_files')
          .values({
            student_session_id: id,
            kind: 'upload',
            file_id: upload.id,
            sequence: 1,
            created_at: clock.now(),
          })
          .execute();
        assert.equal((await addIncident(teacher, id, { comment: 'Noise' })).status, 201);

        const answer = await teacher.client.v3('DELETE', '/student_sessions/:id', { id });
        assert.equal(answer.status, 200, answer.text);
        assert.deepEqual(answer.json, {});

        const shown = await show(teacher, id);
        assert.equal(shown.status, 404, shown.text);
        assert.deepEqual(shown.json, notFound('Student Session', id));
        const { db } = server.app.database;
        assert.deepEqual(
          await db.selectFrom('incidents').select('id').where('student_session_id', '=', id).execute(),
          [],
        );
        assert.deepEqual(
          await db.selectFrom('session_files').select('id').where('student_session_id', '=', id).execute(),
          [],
        );
        for (const file of [idCard, face, document, upload]) {
          assert.equal(await files.find(file.id), undefined, `file record ${file.originalName} removed`);
          await assert.rejects(files.open(file), `stored object ${file.originalName} removed`);
        }
        const filtered = await listExam(teacher, exam.id as number, {
          filter: JSON.stringify({ id: { eq: id }, archived: { in: [true, false] } }),
        });
        assert.deepEqual(idsIn(filtered), [], 'not even listed as archived');
      });

      it('frees the attempt number of a destroyed session', async () => {
        const student = await createStudent(teacher, exam.id as number, { email: 'reuse@example.org' });
        await teacher.client.v3('DELETE', '/student_sessions/:id', { id: student.id as number });
        const again = await createStudent(teacher, exam.id as number, { email: 'reuse@example.org' });
        assert.equal(again.attempt, 0);
      });

      it('archives a session that has an end time, which then shows archived and leaves the lists', async () => {
        const student = await createStudent(teacher, exam.id as number);
        const id = student.id as number;
        const ended = Date.parse('2026-05-04T11:00:00.000Z');
        await setColumns(id, { end_time: ended, status: 'exam_finished' });
        assert.equal((await addIncident(proctor, id, { comment: 'Kept' })).status, 201);
        clock.current += 1000;

        const answer = await teacher.client.v3('DELETE', '/student_sessions/:id', { id });
        assert.equal(answer.status, 200, answer.text);
        assert.deepEqual(answer.json, {});

        const shown = studentIn(await show(teacher, id));
        assert.equal(shown.archived, true);
        assert.equal(shown.end_time, new Date(ended).toISOString());
        assert.equal(shown.updated_at, new Date(clock.now()).toISOString());
        assert.equal(shown.incidents_count, 1, 'incidents are kept');
        assert.ok(
          !idsIn(await listExam(teacher, exam.id as number)).includes(id),
          'hidden from the exam list',
        );
        assert.ok(!idsIn(await listAll(teacher)).includes(id), 'hidden from the full list');
        const archived = await listExam(teacher, exam.id as number, {
          filter: JSON.stringify({ archived: { eq: true } }),
        });
        assert.ok(idsIn(archived).includes(id), 'listed when filtering on archived');

        const again = await teacher.client.v3('DELETE', '/student_sessions/:id', { id });
        assert.equal(again.status, 200, again.text);
        assert.equal(studentIn(await show(teacher, id)).archived, true);
      });

      it('answers 404 for an unknown id', async () => {
        const answer = await teacher.client.v3('DELETE', '/student_sessions/:id', { id: 999999 });
        assert.equal(answer.status, 404, answer.text);
        assert.deepEqual(answer.json, notFound('Student Session', 999999));
      });

      it('answers 403 to a proctor and keeps the session', async () => {
        const student = await createStudent(teacher, exam.id as number);
        const answer = await proctor.client.v3('DELETE', '/student_sessions/:id', {
          id: student.id as number,
        });
        assert.equal(answer.status, 403, answer.text);
        assert.deepEqual(answer.json, NOT_AUTHORIZED);
        assert.equal((await show(teacher, student.id as number)).status, 200);
      });
    });

    describe('POST /api/v3/student_sessions/:id/incidents', () => {
      let student: Json;
      let reviewer: TestUser;
      let auditor: TestUser;
      let admin: TestUser;
      let otherTeacher: TestUser;
      let outsideAdmin: TestUser;
      let outsideProctor: TestUser;

      before(async () => {
        student = await createStudent(teacher, exam.id as number, { name: 'Watched' });
        reviewer = await server.user(instituteId, 'reviewer');
        auditor = await server.user(instituteId, 'auditor');
        admin = await server.user(instituteId, 'administrator');
        otherTeacher = await server.user(instituteId, 'teacher');
        const elsewhere = await server.institute();
        outsideAdmin = await server.user(elsewhere, 'administrator');
        outsideProctor = await server.user(elsewhere, 'proctor');
      });

      it('answers 201 with the student, the incident in incidents and incidents_count grown (owner teacher)', async () => {
        clock.current += 5000;
        const answer = await addIncident(teacher, student.id as number, {
          comment: 'Looked away',
          offset_time: 125,
        });
        assert.equal(answer.status, 201, answer.text);
        const updated = studentIn(answer);
        assert.equal(updated.incidents_count, 1);
        const incidents = updated.incidents as Json[];
        assert.equal(incidents.length, 1);
        const [incident] = incidents;
        assert.deepEqual(Object.keys(object(incident, 'incident')).sort(), [
          'comment',
          'confidence',
          'created_at',
          'dismissed',
          'dismissed_at',
          'dismissed_by',
          'end_offset_time',
          'id',
          'informational',
          'offset_time',
          'source',
          'student_session_id',
          'type',
          'updated_at',
        ]);
        // A staff incident is no automated flag: the flag fields are null, and it is not dismissed.
        assert.deepEqual(
          [
            incident?.type,
            incident?.source,
            incident?.confidence,
            incident?.end_offset_time,
            incident?.dismissed,
          ],
          [null, null, null, null, false],
        );
        assert.ok(Number.isInteger(incident?.id));
        assert.equal(incident?.student_session_id, student.id);
        assert.equal(incident?.comment, 'Looked away');
        assert.equal(incident?.offset_time, 125);
        assert.equal(incident?.created_at, new Date(clock.now()).toISOString());
        assert.equal(incident?.updated_at, incident?.created_at);
        assert.equal(updated.is_email_sent, false);
        assert.deepEqual(studentIn(await show(teacher, student.id as number)), updated);
      });

      for (const [label, pick] of [
        ['a proctor of the institute', () => proctor],
        ['a reviewer of the institute', () => reviewer],
        ['an administrator of the institute', () => admin],
      ] as const) {
        it(`answers 201 to ${label}`, async () => {
          const count = studentIn(await show(teacher, student.id as number)).incidents_count as number;
          const answer = await addIncident(pick(), student.id as number, {
            comment: `By ${label}`,
            offset_time: '30',
          });
          assert.equal(answer.status, 201, answer.text);
          const updated = studentIn(answer);
          assert.equal(updated.incidents_count, count + 1);
          const last = (updated.incidents as Json[]).at(-1);
          assert.equal(last?.comment, `By ${label}`);
          assert.equal(last?.offset_time, 30);
        });
      }

      it('lists incidents oldest first', async () => {
        const incidents = studentIn(await show(teacher, student.id as number)).incidents as Json[];
        const ids = incidents.map((incident) => incident.id as number);
        assert.deepEqual(
          ids,
          [...ids].sort((a, b) => a - b),
        );
        assert.equal(incidents[0]?.comment, 'Looked away');
      });

      it('accepts an incident without offset_time', async () => {
        const answer = await addIncident(teacher, student.id as number, { comment: 'No offset' });
        assert.equal(answer.status, 201, answer.text);
        assert.equal((studentIn(answer).incidents as Json[]).at(-1)?.offset_time, null);
      });

      it('answers 403 to an auditor, who sees the session, and adds nothing', async () => {
        const unchanged = studentIn(await show(teacher, student.id as number));
        const shown = await show(auditor, student.id as number);
        assert.equal(shown.status, 200, 'the auditor sees the session');
        const answer = await addIncident(auditor, student.id as number, { comment: 'Audit' });
        assert.equal(answer.status, 403, answer.text);
        assert.deepEqual(answer.json, NOT_AUTHORIZED);
        assert.deepEqual(studentIn(await show(teacher, student.id as number)), unchanged);
      });

      for (const [label, pick] of [
        ["another institute's administrator", () => outsideAdmin],
        ["another institute's proctor", () => outsideProctor],
        ['a teacher of the institute who does not manage the exam', () => otherTeacher],
      ] as const) {
        it(`answers 404 to ${label}, as for a missing session`, async () => {
          const answer = await addIncident(pick(), student.id as number, { comment: 'Intruder' });
          assert.equal(answer.status, 404, answer.text);
          assert.deepEqual(answer.json, notFound('Student Session', student.id as number));
        });
      }

      it('answers 422 naming a missing or blank comment', async () => {
        const cases: Record<string, Scalar>[] = [{}, { comment: '' }, { comment: '  ' }, { comment: null }];
        for (const params of cases) {
          const answer = await addIncident(teacher, student.id as number, params);
          assert.equal(answer.status, 422, answer.text);
          assert.deepEqual(answer.json, missing('comment'));
        }
      });

      for (const value of ['abc', -5, 2.5]) {
        it(`answers 422 naming offset_time for ${JSON.stringify(value)}`, async () => {
          assert422(
            await addIncident(teacher, student.id as number, { comment: 'x', offset_time: value }),
            'offset_time',
          );
        });
      }

      it('reads a form-encoded incident', async () => {
        const form = await teacher.client.v3(
          'POST',
          '/student_sessions/:id/incidents',
          { id: student.id as number, comment: 'Form body', offset_time: '8' },
          { as: 'form' },
        );
        assert.equal(form.status, 201, form.text);
        assert.equal((studentIn(form).incidents as Json[]).at(-1)?.offset_time, 8);
      });

      it('answers 404 for an unknown session', async () => {
        const answer = await addIncident(teacher, 999999, { comment: 'Ghost' });
        assert.equal(answer.status, 404, answer.text);
        assert.deepEqual(answer.json, notFound('Student Session', 999999));
      });
    });

    describe('lists', () => {
      let owner: TestUser;
      let home: number;
      let examId: number;
      const HOUR = 3_600_000;
      let base = 0;
      const at = (hours: number) => base + hours * HOUR;
      /** Sessions by letter: A..D listed, E archived. */
      const x = {} as Record<'A' | 'B' | 'C' | 'D' | 'E', Json>;
      const ids = (...letters: (keyof typeof x)[]) => letters.map((letter) => x[letter].id);

      before(async () => {
        const saved = clock.current;
        base = saved - 10 * HOUR;
        home = await server.institute();
        owner = await server.user(home, 'teacher');
        examId = (await createExam(owner, { name: 'Listed' })).id as number;
        const plan: [keyof typeof x, Record<string, Scalar>][] = [
          ['A', { name: 'Mia Ada', email: 'ada@example.org', external_id: 'ext-1', priority: 'high' }],
          ['B', { name: 'Bob', email: 'bob@example.org', open_time: '2026-03-10T09:00:00Z' }],
          ['C', { name: 'Zed', email: 'zed@example.org' }],
          ['D', { name: 'Ann Adams', email: 'ada@example.org', attempt: 1 }],
          ['E', { name: 'Eve', email: 'eve@example.org' }],
        ];
        for (const [index, [letter, params]] of plan.entries()) {
          clock.current = at(index);
          x[letter] = await createStudent(owner, examId, params);
        }
        clock.current = saved;
        await setColumns(x.B.id as number, { status: 'email_sent', is_email_sent: true });
        await setColumns(x.C.id as number, {
          status: 'exam_started',
          start_time: Date.parse('2026-03-10T09:05:00Z'),
          proctor_id: proctor.id,
        });
        await setColumns(x.D.id as number, { status: 'exam_started' });
        await setColumns(x.E.id as number, { status: 'exam_finished', end_time: at(5) });
        const archived = await owner.client.v3('DELETE', '/student_sessions/:id', { id: x.E.id as number });
        assert.equal(archived.status, 200, archived.text);
        for (const [letter, comment] of [
          ['A', 'first'],
          ['C', 'only'],
          ['A', 'second'],
        ] as const) {
          assert.equal((await addIncident(owner, x[letter].id as number, { comment })).status, 201);
        }
      });

      function filtered(filter: unknown, extra: Record<string, Scalar> = {}): Promise<HttpAnswer> {
        return listExam(owner, examId, { filter: JSON.stringify(filter), ...extra });
      }

      function sorted(sort: unknown, extra: Record<string, Scalar> = {}): Promise<HttpAnswer> {
        return listExam(owner, examId, { sort: JSON.stringify(sort), ...extra });
      }

      describe('GET /api/v3/exams/:exam_id/student_sessions', () => {
        it('lists the sessions not archived, by id, with the pagination headers', async () => {
          const answer = await listExam(owner, examId);
          assert.deepEqual(idsIn(answer), ids('A', 'B', 'C', 'D'));
          assert.equal(answer.headers['x-pagination-item-count'], '4');
          assert.equal(answer.headers['x-pagination-page-count'], '1');
          assert.equal(answer.headers['x-pagination-page'], '1');
          assert.equal(answer.headers['x-pagination-limit'], '300');
        });

        it('lists full records with is_email_sent and their incidents', async () => {
          const students = studentsIn(await listExam(owner, examId));
          for (const student of students) {
            for (const field of [...STUDENT_FIELDS, 'is_email_sent']) {
              assert.ok(Object.hasOwn(student, field), `listed student has ${field}`);
            }
          }
          assert.deepEqual(
            students.map((student) => student.incidents_count),
            [2, 0, 1, 0],
          );
          assert.deepEqual(
            (students[0]?.incidents as Json[]).map((incident) => incident.comment),
            ['first', 'second'],
          );
          assert.deepEqual(
            studentIn(await show(owner, x.A.id as number)),
            students[0],
            'a listed record equals the shown record',
          );
        });

        it('answers one page of limit items', async () => {
          const answer = await listExam(owner, examId, { page: 2, limit: 3 });
          assert.deepEqual(idsIn(answer), ids('D'));
          assert.equal(answer.headers['x-pagination-item-count'], '4');
          assert.equal(answer.headers['x-pagination-page-count'], '2');
          assert.equal(answer.headers['x-pagination-page'], '2');
          assert.equal(answer.headers['x-pagination-limit'], '3');
        });

        it('answers an empty page past the end and caps limit at 300', async () => {
          const past = await listExam(owner, examId, { page: 3, limit: 2 });
          assert.deepEqual(idsIn(past), []);
          assert.equal(past.headers['x-pagination-item-count'], '4');
          const capped = await listExam(owner, examId, { limit: 5000 });
          assert.equal(capped.headers['x-pagination-limit'], '300');
        });

        for (const [name, value] of [
          ['page', 0],
          ['limit', 'many'],
        ] as const) {
          it(`answers 422 naming ${name} for ${JSON.stringify(value)}`, async () => {
            assert422(await listExam(owner, examId, { [name]: value }), name);
          });
        }

        const CASES: readonly (readonly [string, () => unknown, readonly (keyof typeof x)[]])[] = [
          ['eq on status', () => ({ status: { eq: 'exam_started' } }), ['C', 'D']],
          ['in on status', () => ({ status: { in: ['registered', 'email_sent'] } }), ['A', 'B']],
          ['eq on email, case-insensitively', () => ({ email: { eq: 'ADA@Example.org' } }), ['A', 'D']],
          [
            'in on email, case-insensitively',
            () => ({ email: { in: ['BOB@example.org', 'nobody@x.org'] } }),
            ['B'],
          ],
          ['like on name', () => ({ name: { like: 'ADA' } }), ['A', 'D']],
          ['eq on attempt', () => ({ attempt: { eq: 1 } }), ['D']],
          ['eq on is_email_sent', () => ({ is_email_sent: { eq: true } }), ['B']],
          ['eq on is_email_sent as "false"', () => ({ is_email_sent: { eq: 'false' } }), ['A', 'C', 'D']],
          ['eq on external_id', () => ({ external_id: { eq: 'ext-1' } }), ['A']],
          ['null on external_id', () => ({ external_id: { null: true } }), ['B', 'C', 'D']],
          ['eq on proctor_id', () => ({ proctor_id: { eq: proctor.id } }), ['C']],
          ['null false on open_time', () => ({ open_time: { null: false } }), ['B']],
          ['gte on start_time', () => ({ start_time: { gte: '2026-03-10' } }), ['C']],
          ['lt on created_at', () => ({ created_at: { lt: new Date(at(1)).toISOString() } }), ['A']],
          [
            'a created_at range in epoch milliseconds',
            () => ({ created_at: { gt: at(0), lte: at(2) } }),
            ['B', 'C'],
          ],
          ['eq on exam_id', () => ({ exam_id: { eq: examId } }), ['A', 'B', 'C', 'D']],
          ['eq on priority', () => ({ priority: { eq: 'high' } }), ['A']],
          ['eq on archived true: only the archived', () => ({ archived: { eq: true } }), ['E']],
          [
            'in on archived: all of them',
            () => ({ archived: { in: [true, false] } }),
            ['A', 'B', 'C', 'D', 'E'],
          ],
          ['null false on end_time: archived stays hidden', () => ({ end_time: { null: false } }), []],
          [
            'status and created_at together',
            () => ({ status: { eq: 'exam_started' }, created_at: { gte: at(2.5) } }),
            ['D'],
          ],
        ];
        for (const [label, filter, expected] of CASES) {
          it(`filters with ${label}`, async () => {
            const answer = await filtered(filter());
            assert.deepEqual(idsIn(answer), ids(...expected));
            assert.equal(answer.headers['x-pagination-item-count'], String(expected.length));
          });
        }

        it('filters on updated_at', async () => {
          const archivedAt = studentIn(await show(owner, x.E.id as number)).updated_at as string;
          const answer = await filtered({ updated_at: { gte: archivedAt }, archived: { in: [true, false] } });
          assert.deepEqual(idsIn(answer), ids('E'));
        });

        const SORTS: readonly (readonly [string, unknown, readonly (keyof typeof x)[]])[] = [
          ['id descending', [{ id: 'desc' }], ['D', 'C', 'B', 'A']],
          ['created_at descending', [{ created_at: 'desc' }], ['D', 'C', 'B', 'A']],
          ['created_at ascending', [{ created_at: 'asc' }], ['A', 'B', 'C', 'D']],
          ['name', [{ name: 'asc' }], ['D', 'B', 'A', 'C']],
          [
            'email, then created_at descending',
            [{ email: 'asc' }, { created_at: 'desc' }],
            ['D', 'A', 'B', 'C'],
          ],
          [
            'status, then created_at descending',
            [{ status: 'asc' }, { created_at: 'desc' }],
            ['B', 'D', 'C', 'A'],
          ],
          ['status, ties broken by id', [{ status: 'desc' }], ['A', 'C', 'D', 'B']],
          ['attempt descending', [{ attempt: 'desc' }], ['D', 'A', 'B', 'C']],
          ['open_time ascending, nulls last', [{ open_time: 'asc' }], ['B', 'A', 'C', 'D']],
          ['open_time descending, nulls first', [{ open_time: 'desc' }], ['A', 'C', 'D', 'B']],
          ['is_email_sent descending', [{ is_email_sent: 'desc' }], ['B', 'A', 'C', 'D']],
          ['external_id ascending, nulls last', [{ external_id: 'asc' }], ['A', 'B', 'C', 'D']],
        ];
        for (const [label, sort, expected] of SORTS) {
          it(`sorts by ${label}`, async () => {
            assert.deepEqual(idsIn(await sorted(sort)), ids(...expected));
          });
        }

        it('pages a filtered list sorted by created_at (the listing index)', async () => {
          const answer = await listExam(owner, examId, {
            filter: JSON.stringify({
              status: { in: ['registered', 'exam_started'] },
              created_at: { gte: at(0) },
            }),
            sort: JSON.stringify([{ created_at: 'desc' }]),
            limit: 2,
            page: 1,
          });
          assert.deepEqual(idsIn(answer), ids('D', 'C'));
          assert.equal(answer.headers['x-pagination-item-count'], '3');
          assert.equal(answer.headers['x-pagination-page-count'], '2');
          const next = await listExam(owner, examId, {
            filter: JSON.stringify({
              status: { in: ['registered', 'exam_started'] },
              created_at: { gte: at(0) },
            }),
            sort: JSON.stringify([{ created_at: 'desc' }]),
            limit: 2,
            page: 2,
          });
          assert.deepEqual(idsIn(next), ids('A'));
        });

        for (const [label, params, field] of [
          ['an unknown filter field', { filter: JSON.stringify({ colour: { eq: 'red' } }) }, 'filter'],
          ['an unknown operator', { filter: JSON.stringify({ name: { near: 'x' } }) }, 'filter'],
          ['a filter that is not JSON', { filter: '{"name":' }, 'filter'],
          [
            'like on a field that is not text',
            { filter: JSON.stringify({ attempt: { like: '1' } }) },
            'filter',
          ],
          ['an unknown sort field', { sort: JSON.stringify([{ token: 'asc' }]) }, 'sort'],
          ['an unknown sort direction', { sort: JSON.stringify([{ name: 'up' }]) }, 'sort'],
        ] as const) {
          it(`answers 422 naming the ${field} for ${label}`, async () => {
            assert422(await listExam(owner, examId, params), field);
          });
        }

        it('answers 404 for an unknown exam', async () => {
          const answer = await listExam(owner, 999999);
          assert.equal(answer.status, 404, answer.text);
          assert.deepEqual(answer.json, notFound('Exam', 999999));
        });

        it('loads the incidents of a whole page in one query', async () => {
          const counter = new QueryCounter();
          const db = server.app.database.db.withPlugin(counter);
          const page = await listStudentSessions(
            db,
            { kind: 'exam', examId },
            parseListQuery({}, STUDENT_SESSION_LIST_FIELDS),
          );
          assert.equal(page.items.length, 4);
          assert.deepEqual(
            page.items.map((item) => item.incidents.length),
            [2, 0, 1, 0],
          );
          assert.equal(counter.count, 3, 'count, page and incidents');
        });
      });

      describe('GET /api/v3/student_sessions', () => {
        let colleague: TestUser;
        let colleagueStudent: Json;
        let admin: TestUser;

        before(async () => {
          colleague = await server.user(home, 'teacher');
          admin = await server.user(home, 'administrator');
          const colleagueExam = await createExam(colleague, { name: 'Colleague' });
          colleagueStudent = await createStudent(colleague, colleagueExam.id as number);
        });

        it("lists every session of a teacher's exams, archived left out, with the pagination headers", async () => {
          const answer = await listAll(owner);
          assert.deepEqual(idsIn(answer), ids('A', 'B', 'C', 'D'));
          assert.equal(answer.headers['x-pagination-item-count'], '4');
          assert.equal(answer.headers['x-pagination-limit'], '300');
        });

        it("leaves out another teacher's sessions", async () => {
          assert.deepEqual(idsIn(await listAll(colleague)), [colleagueStudent.id]);
        });

        it("lists every session of the institute's exams to an administrator", async () => {
          assert.deepEqual(idsIn(await listAll(admin)), [...ids('A', 'B', 'C', 'D'), colleagueStudent.id]);
        });

        it('filters, sorts and pages like the exam list', async () => {
          const answer = await listAll(admin, {
            filter: JSON.stringify({ exam_id: { eq: examId }, archived: { in: [true, false] } }),
            sort: JSON.stringify([{ created_at: 'desc' }]),
            limit: 2,
            page: 2,
          });
          assert.deepEqual(idsIn(answer), ids('C', 'B'));
          assert.equal(answer.headers['x-pagination-item-count'], '5');
          assert.equal(answer.headers['x-pagination-page-count'], '3');
        });

        it('answers 422 naming an unknown filter field', async () => {
          assert422(await listAll(owner, { filter: JSON.stringify({ pin_code: { eq: 1 } }) }), 'filter');
        });
      });
    });

    describe('scope', () => {
      let owner: TestUser;
      let student: Json;
      let scopedExam: Json;
      let outsideAdmin: TestUser;
      let superuser: TestUser;

      before(async () => {
        owner = await server.user(instituteId, 'teacher');
        scopedExam = await createExam(owner, { name: 'Scoped' });
        student = await createStudent(owner, scopedExam.id as number, { name: 'Private' });
        student = { ...student, is_email_sent: false };
        const elsewhere = await server.institute();
        outsideAdmin = await server.user(elsewhere, 'administrator');
        superuser = await server.user(elsewhere, 'superuser');
      });

      it("answers another institute's administrator exactly as for a missing session, everywhere", async () => {
        const id = student.id as number;
        const calls: [string, (user: TestUser, target: number) => Promise<HttpAnswer>][] = [
          ['GET', (user, target) => show(user, target)],
          [
            'PATCH',
            (user, target) => user.client.v3('PATCH', '/student_sessions/:id', { id: target, name: 'X' }),
          ],
          [
            'PUT',
            (user, target) => user.client.v3('PUT', '/student_sessions/:id', { id: target, name: 'X' }),
          ],
          ['DELETE', (user, target) => user.client.v3('DELETE', '/student_sessions/:id', { id: target })],
          ['POST incidents', (user, target) => addIncident(user, target, { comment: 'X' })],
        ];
        for (const [label, call] of calls) {
          const hidden = await call(outsideAdmin, id);
          const unknown = await call(outsideAdmin, 999999);
          assert.equal(hidden.status, 404, `${label}: ${hidden.text}`);
          assert.equal(hidden.text, JSON.stringify(notFound('Student Session', id)), label);
          assert.equal(unknown.text, JSON.stringify(notFound('Student Session', 999999)), label);
          assert.equal(hidden.headers['content-type'], unknown.headers['content-type'], label);
        }
        assert.deepEqual(studentIn(await show(owner, id)), student, 'unchanged');
      });

      it("answers another institute's administrator 404 Exam on the exam's list and create", async () => {
        const examId = scopedExam.id as number;
        const listed = await listExam(outsideAdmin, examId);
        assert.equal(listed.status, 404, listed.text);
        assert.deepEqual(listed.json, notFound('Exam', examId));
        const created = await create(outsideAdmin, examId, {
          name: 'Intruder',
          email: 'intruder@example.org',
        });
        assert.equal(created.status, 404, created.text);
        assert.deepEqual(created.json, notFound('Exam', examId));
      });

      it("never lists another institute's sessions", async () => {
        assert.ok(!idsIn(await listAll(outsideAdmin)).includes(student.id));
        const byId = await listAll(outsideAdmin, {
          filter: JSON.stringify({ id: { eq: student.id }, archived: { in: [true, false] } }),
        });
        assert.deepEqual(idsIn(byId), []);
      });

      it('answers a teacher who does not manage the exam as if the session did not exist', async () => {
        const stranger = await server.user(instituteId, 'teacher');
        const answer = await show(stranger, student.id as number);
        assert.equal(answer.status, 404, answer.text);
        assert.deepEqual(answer.json, notFound('Student Session', student.id as number));
        assert.ok(!idsIn(await listAll(stranger)).includes(student.id));
      });

      for (const role of ['proctor', 'reviewer', 'auditor'] as const) {
        it(`lets a ${role} of the institute show and list the session, and answers 403 to its writes`, async () => {
          const user = await server.user(instituteId, role);
          const id = student.id as number;
          const shown = await show(user, id);
          assert.equal(shown.status, 200, shown.text);
          assert.deepEqual(studentIn(shown), student);
          assert.ok(idsIn(await listExam(user, scopedExam.id as number)).includes(id));
          assert.ok(idsIn(await listAll(user)).includes(id));
          for (const answer of [
            await user.client.v3('PATCH', '/student_sessions/:id', { id, name: 'Renamed' }),
            await user.client.v3('PUT', '/student_sessions/:id', { id, name: 'Renamed' }),
            await user.client.v3('DELETE', '/student_sessions/:id', { id }),
            await create(user, scopedExam.id as number, {
              name: 'Added',
              email: `added-${role}@example.org`,
            }),
          ]) {
            assert.equal(answer.status, 403, answer.text);
            assert.deepEqual(answer.json, NOT_AUTHORIZED);
          }
          assert.deepEqual(studentIn(await show(owner, id)), student, 'unchanged');
        });
      }

      it('lets an administrator of the institute change and add sessions', async () => {
        const admin = await server.user(instituteId, 'administrator');
        const added = await createStudent(admin, scopedExam.id as number, { name: 'By admin' });
        const answer = await admin.client.v3('PATCH', '/student_sessions/:id', {
          id: added.id as number,
          priority: 'urgent',
        });
        assert.equal(answer.status, 200, answer.text);
        assert.equal(studentIn(answer).priority, 'urgent');
      });

      it('lets a co-manager change the sessions of the exam', async () => {
        const comanager = await server.user(instituteId, 'teacher');
        await server.app.database.db
          .insertInto('exam_comanagers')
          .values({ exam_id: scopedExam.id as number, user_id: comanager.id, created_at: clock.now() })
          .execute();
        const answer = await comanager.client.v3('PATCH', '/student_sessions/:id', {
          id: student.id as number,
          individual_info: 'From the co-manager',
        });
        assert.equal(answer.status, 200, answer.text);
        student = studentIn(answer);
      });

      it('lets a superuser read sessions of every institute', async () => {
        const shown = await show(superuser, student.id as number);
        assert.equal(shown.status, 200, shown.text);
        assert.ok(idsIn(await listAll(superuser)).includes(student.id));
      });
    });
  });
}
