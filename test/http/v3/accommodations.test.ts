/**
 * A student's accommodations through the API (issue 26, docs/accommodations.md): read and written
 * on create and update (keys merged, null clearing), validated with a 422 naming the field, in
 * lists, audited, the one clock's `deadline_at` and `time_allowed_seconds` (the same instant as the
 * room's `session.deadline_at`), V2 `add_student`, the import's accommodation columns, the
 * `student_session.finished` webhook and the PDF report.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { renderSessionReport } from '../../../src/domain/reports/session-report.ts';
import { invalid } from '../../helpers/answers.ts';
import { type HttpAnswer, httpRequest } from '../../helpers/http.ts';
import { object } from '../../helpers/json.ts';
import { pdfPages } from '../../helpers/pdf.ts';
import { sessionReportData } from '../../helpers/report-data.ts';
import { DIALECTS, startTestServer, TestClock, type TestServer } from '../../helpers/server.ts';
import { canonical, hmac, nextNonce, type Scalar } from '../../helpers/signing.ts';

type Json = Record<string, unknown>;
type TestUser = Awaited<ReturnType<TestServer['user']>>;

const MINUTE = 60_000;
const AUDIT_ACTION = 'student_session_accommodations_changed';

/** The record of a student without accommodations. */
const NONE = {
  extra_time_minutes: 0,
  extra_time_percent: 0,
  breaks: null,
  exemptions: [],
  assistive_technology: false,
  note: null,
};

/** Every accommodation at once, as sent and as recorded. */
const FULL = {
  extra_time_minutes: 10,
  extra_time_percent: 25,
  breaks: { count: 2, minutes: 10 },
  exemptions: [
    { check: 'webcam', reason: 'no camera' },
    { check: 'id_photo', reason: 'blind' },
  ],
  assistive_technology: true,
  note: 'Uses a screen reader',
};

for (const dialect of DIALECTS) {
  describe(`accommodations through the API [${dialect}]`, () => {
    const clock = new TestClock(Math.floor(Date.now() / 1000) * 1000);
    let server: TestServer;
    let instituteId: number;
    let owner: TestUser;
    let examId: number;
    let students = 0;

    before(async () => {
      server = await startTestServer(dialect, { clock, env: { OUTBOUND_ALLOWLIST: '127.0.0.1' } });
      instituteId = await server.institute();
      owner = await server.user(instituteId, 'teacher');
      const administrator = await server.user(instituteId, 'administrator');
      // A callback_url makes finished sessions queue their webhook (read back from the job queue).
      const patched = await administrator.client.v3('PATCH', '/institutes/:id', {
        id: instituteId,
        callback_url: 'http://127.0.0.1:9/hooks',
        exam_finalized_emails_enabled: false,
      });
      assert.equal(patched.status, 200, patched.text);
      examId = await createExam({ name: 'Thirty minutes', type: 'classroom', duration_minutes: 30 });
    });

    after(async () => {
      await server.close();
    });

    async function createExam(params: Record<string, Scalar>): Promise<number> {
      const answer = await owner.client.v3('POST', '/exams', params);
      assert.equal(answer.status, 201, answer.text);
      return object(object(answer.json, 'body').exam, 'exam').id as number;
    }

    /** POST /exams/:exam_id/student_sessions with `accommodations` as JSON text (signed values are scalars). */
    function create(accommodations: unknown, exam = examId): Promise<HttpAnswer> {
      students += 1;
      return owner.client.v3('POST', '/exams/:exam_id/student_sessions', {
        exam_id: exam,
        name: `Accommodated ${students}`,
        email: `accommodated${students}@example.org`,
        ...(accommodations === undefined ? {} : { accommodations: JSON.stringify(accommodations) }),
      });
    }

    async function created(accommodations: unknown, exam = examId): Promise<Json> {
      const answer = await create(accommodations, exam);
      assert.equal(answer.status, 201, answer.text);
      return object(object(answer.json, 'body').student, 'student');
    }

    async function update(id: number, params: Record<string, Scalar>): Promise<HttpAnswer> {
      return owner.client.v3('PATCH', '/student_sessions/:id', { id, ...params });
    }

    async function record(id: number): Promise<Json> {
      const answer = await owner.client.v3('GET', '/student_sessions/:id', { id });
      assert.equal(answer.status, 200, answer.text);
      return object(object(answer.json, 'body').student, 'student');
    }

    function room(token: string, method: string, action = ''): Promise<HttpAnswer> {
      return httpRequest({
        url: `${server.baseUrl}/api/room/${token}${action === '' ? '' : `/${action}`}`,
        method,
      });
    }

    async function auditCount(sessionId: number): Promise<number> {
      const rows = await server.app.database.db
        .selectFrom('audit_events')
        .select(['action', 'target_type', 'user_id', 'institute_id'])
        .where('action', '=', AUDIT_ACTION)
        .where('target_id', '=', sessionId)
        .execute();
      for (const row of rows) {
        assert.deepEqual(
          { ...row },
          {
            action: AUDIT_ACTION,
            target_type: 'student_sessions',
            user_id: owner.id,
            institute_id: instituteId,
          },
        );
      }
      return rows.length;
    }

    async function studentCount(): Promise<number> {
      const row = await server.app.database.db
        .selectFrom('student_sessions')
        .select((eb) => eb.fn.countAll<number>().as('count'))
        .where('exam_id', '=', examId)
        .executeTakeFirstOrThrow();
      return Number(row.count);
    }

    it('must show: 10 extra minutes on a 30-minute exam end 40 minutes after start_time, as the room says', async () => {
      const student = await created({ extra_time_minutes: 10 });
      assert.deepEqual(student.accommodations, { ...NONE, extra_time_minutes: 10 });
      assert.equal(student.deadline_at, null, 'no deadline before the start');
      assert.equal(student.time_allowed_seconds, 40 * 60);
      assert.equal(student.breaks_taken, 0);
      assert.equal(student.on_break, false);
      assert.deepEqual(student.practice, { status: 'not_tried', failed_check: null, at: null });

      const token = student.token as string;
      const started = await room(token, 'POST', 'start');
      assert.equal(started.status, 200, started.text);
      const after = await record(student.id as number);
      const startTime = Date.parse(after.start_time as string);
      assert.equal(after.deadline_at, new Date(startTime + 40 * MINUTE).toISOString());
      assert.equal(after.time_allowed_seconds, 2400);

      const view = await room(token, 'GET');
      assert.equal(view.status, 200, view.text);
      const session = object(object(view.json, 'body').session, 'session');
      assert.equal(
        session.deadline_at,
        after.deadline_at,
        "the room's session.deadline_at is the same instant",
      );

      // A change to a running session applies at once: the record and the room's next poll agree.
      const changed = await update(student.id as number, {
        accommodations: JSON.stringify({ extra_time_minutes: 20 }),
      });
      assert.equal(changed.status, 200, changed.text);
      const moved = object(object(changed.json, 'body').student, 'student');
      assert.equal(moved.deadline_at, new Date(startTime + 50 * MINUTE).toISOString());
      const polled = object(object((await room(token, 'GET')).json, 'body').session, 'session');
      assert.equal(polled.deadline_at, moved.deadline_at);
    });

    it('percent first, then minutes; no duration, no time allowed', async () => {
      const student = await created({ extra_time_percent: 50, extra_time_minutes: 5 });
      assert.equal(student.time_allowed_seconds, (30 + 15 + 5) * 60);
      const untimed = await created({ extra_time_minutes: 5, breaks: { count: 1, minutes: 5 } });
      const patched = await update(untimed.id as number, { use_duration: false });
      assert.equal(patched.status, 200, patched.text);
      const record = object(object(patched.json, 'body').student, 'student');
      assert.equal(record.time_allowed_seconds, null);
      assert.equal(record.deadline_at, null);
    });

    it('records every key and answers it in the create, show and list answers', async () => {
      const student = await created(FULL);
      assert.deepEqual(student.accommodations, FULL);
      assert.deepEqual((await record(student.id as number)).accommodations, FULL);
      const page = await owner.client.v3('GET', '/exams/:exam_id/student_sessions', { exam_id: examId });
      assert.equal(page.status, 200, page.text);
      const listed = (object(page.json, 'body').students as Json[]).find((item) => item.id === student.id);
      assert.deepEqual(listed?.accommodations, FULL);
      const everywhere = await owner.client.v3('GET', '/student_sessions', {
        filter: JSON.stringify({ id: { eq: student.id } }),
      });
      assert.equal(everywhere.status, 200, everywhere.text);
      const [only] = object(everywhere.json, 'body').students as Json[];
      assert.deepEqual(only?.accommodations, FULL);
      // A student without any has the same keys, all empty.
      assert.deepEqual((await created(undefined)).accommodations, NONE);
    });

    it('refuses out-of-range values, unknown checks and keys with a 422 naming the field', async () => {
      const before = await studentCount();
      const cases: [unknown, string, string][] = [
        [
          { extra_time_minutes: 601 },
          'accommodations.extra_time_minutes',
          'must be less than or equal to 600',
        ],
        [
          { extra_time_percent: 301 },
          'accommodations.extra_time_percent',
          'must be less than or equal to 300',
        ],
        [
          { extra_time_minutes: -1 },
          'accommodations.extra_time_minutes',
          'must be greater than or equal to 0',
        ],
        [
          { exemptions: [{ check: 'keyboard', reason: 'none' }] },
          'accommodations.exemptions[0].check',
          'must be one of webcam, microphone, screen_share, mobile, id_photo, face_photo, fullscreen',
        ],
        [{ exemptions: [{ check: 'webcam' }] }, 'accommodations.exemptions[0].reason', "can't be blank"],
        [
          { breaks: { count: 1, minutes: 0 } },
          'accommodations.breaks.minutes',
          'must be greater than or equal to 1',
        ],
        [{ extra_time: 10 }, 'accommodations.extra_time', 'is not an accommodation'],
        ['ten minutes', 'accommodations', 'must be an object'],
      ];
      for (const [accommodations, field, detail] of cases) {
        const answer =
          typeof accommodations === 'string'
            ? await owner.client.v3('POST', '/exams/:exam_id/student_sessions', {
                exam_id: examId,
                name: 'Refused',
                email: 'refused@example.org',
                accommodations,
              })
            : await create(accommodations);
        assert.equal(answer.status, 422, `${JSON.stringify(accommodations)}: ${answer.text}`);
        assert.deepEqual(answer.json, invalid(field, detail));
      }
      assert.equal(await studentCount(), before, 'nothing was created');
    });

    it('merges an update over the current accommodations; null clears them; audited when they change', async () => {
      const student = await created({ extra_time_minutes: 10, note: 'Dyslexia' });
      const id = student.id as number;
      assert.equal(await auditCount(id), 1, 'a create with accommodations is audited');

      const merged = await update(id, {
        accommodations: JSON.stringify({ breaks: { count: 2, minutes: 10 } }),
      });
      assert.equal(merged.status, 200, merged.text);
      assert.deepEqual(object(object(merged.json, 'body').student, 'student').accommodations, {
        ...NONE,
        extra_time_minutes: 10,
        note: 'Dyslexia',
        breaks: { count: 2, minutes: 10 },
      });
      assert.equal(await auditCount(id), 2);

      // The same values again, or other fields only: nothing to audit.
      assert.equal(
        (await update(id, { accommodations: JSON.stringify({ extra_time_minutes: 10 }) })).status,
        200,
      );
      assert.equal((await update(id, { name: 'Renamed' })).status, 200);
      assert.equal(await auditCount(id), 2);

      // A refused update changes nothing.
      const refused = await update(id, { accommodations: JSON.stringify({ extra_time_percent: 400 }) });
      assert.equal(refused.status, 422, refused.text);
      assert.deepEqual(
        refused.json,
        invalid('accommodations.extra_time_percent', 'must be less than or equal to 300'),
      );
      assert.equal(object((await record(id)).accommodations, 'accommodations').extra_time_minutes, 10);

      const noteCleared = await update(id, { accommodations: JSON.stringify({ note: null }) });
      assert.equal(noteCleared.status, 200, noteCleared.text);
      assert.equal(
        object(object(noteCleared.json, 'body').student, 'student').accommodations === undefined,
        false,
      );
      assert.equal(object((await record(id)).accommodations, 'accommodations').note, null);

      const cleared = await update(id, { accommodations: null });
      assert.equal(cleared.status, 200, cleared.text);
      assert.deepEqual((await record(id)).accommodations, NONE);
      assert.equal(await auditCount(id), 4);

      // The audit log keeps no values (reasons and notes are about a student's health).
      const rows = await server.app.database.db
        .selectFrom('audit_events')
        .selectAll()
        .where('target_id', '=', id)
        .execute();
      assert.ok(!JSON.stringify(rows).includes('Dyslexia'));
    });

    it('V2 add_student takes accommodations as an extra (JSON body and form)', async () => {
      for (const as of ['json', 'form'] as const) {
        students += 1;
        const answer = await owner.client.v2(
          'POST',
          '/exams/:id/add_student',
          {
            id: examId,
            name: `V2 student ${students}`,
            email: `v2-${students}@example.org`,
            accommodations: JSON.stringify({
              extra_time_percent: 50,
              exemptions: [{ check: 'mobile', reason: 'no phone' }],
            }),
          },
          { as },
        );
        assert.equal(answer.status, 200, answer.text);
        const v2 = object(object(answer.json, 'body').student_session, 'student_session');
        assert.equal('accommodations' in v2, false, 'the V2 record keeps its fields');
        const v3 = await record(v2.student_id as number);
        assert.deepEqual(v3.accommodations, {
          ...NONE,
          extra_time_percent: 50,
          exemptions: [{ check: 'mobile', reason: 'no phone' }],
        });
        assert.equal(await auditCount(v2.student_id as number), 1);
      }
      // A form that nests the keys, as Rails clients send a hash; signed over the hash as Ruby
      // prints it (docs/signing.md).
      students += 1;
      const signed: Record<string, Scalar> = {
        api_token: owner.credentials.apiToken,
        timestamp: String(owner.client.now()),
        nonce: nextNonce(),
        name: `V2 nested ${students}`,
        email: `v2-nested-${students}@example.org`,
        accommodations: '{"extra_time_minutes"=>"10", "assistive_technology"=>"1"}',
      };
      const signature = hmac(owner.credentials.secretKey, canonical({ ...signed, id: String(examId) }));
      const { accommodations: _hash, ...plain } = signed;
      const form = new URLSearchParams({
        ...Object.fromEntries(Object.entries(plain).map(([name, value]) => [name, String(value)])),
        'accommodations[extra_time_minutes]': '10',
        'accommodations[assistive_technology]': '1',
        signature,
      });
      const nested = await httpRequest({
        url: `${server.baseUrl}/api/exams/${examId}/add_student`,
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: form.toString(),
      });
      assert.equal(nested.status, 200, nested.text);
      const nestedId = object(object(nested.json, 'body').student_session, 'student_session').student_id;
      assert.deepEqual((await record(nestedId as number)).accommodations, {
        ...NONE,
        extra_time_minutes: 10,
        assistive_technology: true,
      });

      const refused = await owner.client.v2('POST', '/exams/:id/add_student', {
        id: examId,
        name: 'V2 refused',
        email: 'v2-refused@example.org',
        accommodations: JSON.stringify({ extra_time_minutes: 601 }),
      });
      assert.equal(refused.status, 400, refused.text);
      assert.deepEqual(refused.json, {
        errors: { 'accommodations.extra_time_minutes': ['must be less than or equal to 600'] },
      });
    });

    describe('the import', () => {
      let importExam: number;
      before(async () => {
        importExam = await createExam({ name: 'Import exam', type: 'classroom', duration_minutes: 60 });
      });

      function importRows(rows: Json[], extra: Record<string, Scalar> = {}): Promise<HttpAnswer> {
        return owner.client.v3('POST', '/exams/:exam_id/student_sessions/import', {
          exam_id: importExam,
          students: JSON.stringify(rows),
          ...extra,
        });
      }

      it('reads the accommodation columns into the accommodations object, and audits it', async () => {
        const answer = await importRows([
          {
            name: 'Ada Column',
            email: 'ada.column@example.org',
            extra_time_minutes: '15',
            extra_time_percent: '',
            break_count: '1',
            break_minutes: '10',
            exemptions: 'webcam:no camera; ID photo: blind',
            assistive_technology: 'Yes',
            accommodation_note: 'Screen reader',
          },
          { name: 'Bo Plain', email: 'bo.plain@example.org', extra_time_minutes: '', exemptions: ' ' },
          {
            name: 'Cy Object',
            email: 'cy.object@example.org',
            accommodations: { extra_time_minutes: 5 },
          },
        ]);
        assert.equal(answer.status, 201, answer.text);
        const body = object(answer.json, 'body');
        assert.deepEqual(body.ignored_fields, []);
        const [ada, bo, cy] = body.students as Json[];
        assert.deepEqual(ada?.accommodations, {
          extra_time_minutes: 15,
          extra_time_percent: 0,
          breaks: { count: 1, minutes: 10 },
          exemptions: [
            { check: 'webcam', reason: 'no camera' },
            { check: 'id_photo', reason: 'blind' },
          ],
          assistive_technology: true,
          note: 'Screen reader',
        });
        assert.equal(ada?.time_allowed_seconds, 75 * 60);
        assert.deepEqual(bo?.accommodations, NONE);
        assert.deepEqual(cy?.accommodations, { ...NONE, extra_time_minutes: 5 });
        assert.equal(await auditCount(ada?.id as number), 1);
        assert.equal(await auditCount(bo?.id as number), 0);

        // An update row changes only what its cells say: the break count stays.
        const updated = await importRows(
          [{ email: 'ada.column@example.org', name: 'Ada Column', break_minutes: '20', exemptions: 'none' }],
          { existing: 'update' },
        );
        assert.equal(updated.status, 201, updated.text);
        assert.deepEqual((await record(ada?.id as number)).accommodations, {
          extra_time_minutes: 15,
          extra_time_percent: 0,
          breaks: { count: 1, minutes: 20 },
          exemptions: [],
          assistive_technology: true,
          note: 'Screen reader',
        });
        assert.equal(await auditCount(ada?.id as number), 2);
      });

      it('refuses bad cells with a row error naming the column, and imports nothing', async () => {
        const answer = await importRows([
          { name: 'Good Row', email: 'good.row@example.org', extra_time_minutes: '10' },
          { name: 'Bad Check', email: 'bad.check@example.org', exemptions: 'keyboard:cannot type' },
          { name: 'No Reason', email: 'no.reason@example.org', exemptions: 'webcam' },
          { name: 'Long Break', email: 'long.break@example.org', break_count: '1', break_minutes: '500' },
          { name: 'No Count', email: 'no.count@example.org', break_minutes: '10' },
          { name: 'Word Time', email: 'word.time@example.org', extra_time_percent: 'half' },
          { name: 'Maybe', email: 'maybe@example.org', assistive_technology: 'maybe' },
          { name: 'Too Much', email: 'too.much@example.org', extra_time_minutes: '601' },
        ]);
        assert.equal(answer.status, 422, answer.text);
        assert.deepEqual(object(answer.json, 'body').row_errors, [
          {
            row: 2,
            field: 'exemptions',
            message:
              'keyboard is not a check (webcam, microphone, screen_share, mobile, id_photo, face_photo, fullscreen)',
          },
          { row: 3, field: 'exemptions', message: 'needs a reason for webcam (check:reason)' },
          { row: 4, field: 'break_minutes', message: 'must be less than or equal to 240' },
          { row: 5, field: 'break_count', message: "can't be blank when break_minutes is set" },
          { row: 6, field: 'extra_time_percent', message: 'is not a number' },
          { row: 7, field: 'assistive_technology', message: 'must be yes or no' },
          { row: 8, field: 'extra_time_minutes', message: 'must be less than or equal to 600' },
        ]);
        const found = await server.app.database.db
          .selectFrom('student_sessions')
          .select('id')
          .where('email', '=', 'good.row@example.org')
          .execute();
        assert.deepEqual(found, []);
      });
    });

    it('the student_session.finished webhook carries the accommodations and the breaks taken', async () => {
      const student = await created(FULL);
      const id = student.id as number;
      assert.equal((await room(student.token as string, 'POST', 'start')).status, 200);
      const ended = await owner.client.v3('POST', '/student_sessions/:id/end_exam', { id });
      assert.equal(ended.status, 200, ended.text);
      const jobs = await server.app.database.db
        .selectFrom('jobs')
        .select('payload')
        .where('kind', '=', 'webhook.deliver')
        .execute();
      const events = jobs.map((job) => {
        const payload = object(JSON.parse(job.payload), 'payload');
        return object(JSON.parse(payload.body as string), 'event');
      });
      const event = events.find((item) => object(item.data, 'data').student_session_id === id);
      assert.ok(event !== undefined, 'the event was queued');
      assert.equal(event.type, 'student_session.finished');
      const data = object(event.data, 'data');
      assert.deepEqual(data.accommodations, FULL);
      assert.equal(data.breaks_taken, 0);
    });

    it('the PDF report lists the accommodations', async () => {
      const student = await created(FULL);
      const answer = await owner.client.v3('GET', '/student_sessions/:id/report.pdf', {
        id: student.id as number,
      });
      assert.equal(answer.status, 200, answer.text);
      const text = pdfPages(answer.bytes).join('\n');
      for (const expected of [
        'Accommodations',
        'Extra time',
        '25% of the exam’s duration, plus 10 minutes',
        'Up to 2 breaks of up to 10 minutes each',
        'Breaks taken',
        'Webcam: no camera',
        'ID photo: blind',
        'Assistive technology',
        'Uses a screen reader',
      ]) {
        assert.ok(text.includes(expected), `the report shows "${expected}":\n${text}`);
      }
      const plain = await created(undefined);
      const plainReport = await owner.client.v3('GET', '/student_sessions/:id/report.pdf', {
        id: plain.id as number,
      });
      assert.ok(!pdfPages(plainReport.bytes).join('\n').includes('Accommodations'), 'no section without any');
    });

    it('exams have record_during_breaks and extra_time_beyond_end, true by default', async () => {
      const answer = await owner.client.v3('GET', '/exams/:id', { id: examId });
      const exam = object(object(answer.json, 'body').exam, 'exam');
      assert.equal(exam.record_during_breaks, true);
      assert.equal(exam.extra_time_beyond_end, true);
      const patched = await owner.client.v3('PATCH', '/exams/:id', {
        id: examId,
        record_during_breaks: false,
        extra_time_beyond_end: false,
      });
      assert.equal(patched.status, 200, patched.text);
      const changed = object(object(patched.json, 'body').exam, 'exam');
      assert.equal(changed.record_during_breaks, false);
      assert.equal(changed.extra_time_beyond_end, false);
    });
  });
}

describe('the PDF report lists accommodations in Arabic', () => {
  it('draws the section in Arabic, the reasons as typed', async () => {
    const start = Date.UTC(2026, 10, 21, 8, 30);
    const base = sessionReportData(start);
    const bytes = await renderSessionReport({
      ...base,
      locale: 'ar',
      session: {
        ...base.session,
        accommodations: {
          extraTimeMinutes: 10,
          extraTimePercent: 0,
          breaks: { count: 1, minutes: 10 },
          breaksTaken: 1,
          exemptions: [{ check: 'webcam', reason: 'no camera' }],
          assistiveTechnology: false,
          note: null,
        },
      },
    });
    const text = pdfPages(bytes)
      .join('\n')
      .replace(/[\u200e\u200f\u202a-\u202e\u2066-\u2069]/gu, '');
    for (const expected of ['الترتيبات التيسيرية', 'وقت إضافي', 'كاميرا الويب', 'no camera']) {
      assert.ok(text.includes(expected), `the report shows "${expected}":\n${text}`);
    }
  });
});
