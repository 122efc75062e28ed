import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { invalid } from '../../helpers/answers.ts';
import { assertStored, fetchAddress } from '../../helpers/files.ts';
import { type HttpAnswer, httpRequest } from '../../helpers/http.ts';
import { type FilePart, multipartBody, SAMPLE, v3Multipart } from '../../helpers/multipart.ts';
import { DIALECTS, startTestServer, TestClock, type TestServer } from '../../helpers/server.ts';
import type { Scalar } from '../../helpers/signing.ts';
import { object } from '../../helpers/json.ts';

type Json = Record<string, unknown>;
type TestUser = Awaited<ReturnType<TestServer['user']>>;

const PUBLIC_URL = 'https://invigil.example.test';
const NO_ROOM = { error: "Couldn't find the exam room" };
const FINISHED = { error: 'The exam is finished: this student session accepts no more changes' };
const MINUTE = 60_000;

/** The first bytes of a WebM stream (EBML header), then media data. */
const WEBM_HEAD = Buffer.concat([Buffer.from([0x1a, 0x45, 0xdf, 0xa3]), crypto.randomBytes(500)]);

function assertAnswer(answer: HttpAnswer, status: number, body: Json): void {
  assert.equal(answer.status, status, answer.text);
  assert.deepEqual(answer.json, body);
}

function conflict(from: string, to: string): Json {
  return { error: `Cannot move a student session from ${from} to ${to}` };
}

/** The session of a room answer (`{"session", "exam", "document", "server_time", "live", "language"}`), checking the status. */
function roomSession(answer: HttpAnswer, status = 200): Json {
  assert.equal(answer.status, status, answer.text);
  const body = object(answer.json, 'body');
  assert.deepEqual(Object.keys(body), [
    'session',
    'exam',
    'accommodations',
    'document',
    'server_time',
    'live',
    'language',
    'message_overrides',
    'privacy',
  ]);
  return object(body.session, 'session');
}

function part(bytes: Buffer, fileName: string, contentType: string): FilePart {
  return { field: 'file', fileName, contentType, bytes };
}

for (const dialect of DIALECTS) {
  describe(`candidate room /api/room/:token [${dialect}]`, () => {
    const start = Math.floor(Date.now() / 1000) * 1000;
    const clock = new TestClock(start);
    let server: TestServer;
    let owner: TestUser;
    let proctoredExam: number;
    let plainExam: number;
    let attachmentPlaceholder: string;

    before(async () => {
      server = await startTestServer(dialect, { clock, env: { PUBLIC_URL } });
      const institute = await server.institute();
      owner = await server.user(institute, 'teacher');
      proctoredExam = await createExam({
        name: 'Proctored exam',
        type: 'live_proctoring',
        duration_minutes: 60,
        web_cam: true,
        screen_share: true,
        upload_answers: true,
        allow_calculator: true,
        allowed_calculator_type: 'scientific',
      });
      plainExam = await createExam({ name: 'Plain exam', type: 'classroom', duration_minutes: 30 });
      const document = await owner.client.v3('POST', '/exams/:exam_id/documents', {
        exam_id: proctoredExam,
        exam_content: 'Questions below.',
      });
      assert.equal(document.status, 201, document.text);
      const attached = await v3Multipart(
        owner.client,
        'POST',
        '/exams/:exam_id/attachments',
        { exam_id: proctoredExam },
        [{ field: 'document', fileName: 'formulas.pdf', contentType: 'application/pdf', bytes: SAMPLE.pdf }],
      );
      assert.equal(attached.status, 201, attached.text);
      attachmentPlaceholder = object(object(attached.json, 'body').attachment, 'attachment')
        .placeholder as string;
      const patched = await owner.client.v3('PATCH', '/exams/:exam_id/documents/:id', {
        exam_id: proctoredExam,
        id: object(object(document.json, 'body').document, 'document').id as number,
        exam_content: `Questions below. Formulas: ${attachmentPlaceholder}`,
      });
      assert.equal(patched.status, 200, patched.text);
    });

    after(async () => {
      await server.close();
    });

    async function createExam(params: Record<string, Scalar>): Promise<number> {
      const answer = await owner.client.v3('POST', '/exams', params);
      assert.equal(answer.status, 201, answer.text);
      return object(object(answer.json, 'body').exam, 'exam').id as number;
    }

    let students = 0;
    /** A new session of `examId`; returns its id, token and pin code as the V3 API shows them. */
    async function createStudent(
      examId: number,
      extra: Record<string, Scalar> = {},
    ): Promise<{ id: number; token: string; pinCode: number }> {
      students += 1;
      const answer = await owner.client.v3('POST', '/exams/:exam_id/student_sessions', {
        exam_id: examId,
        name: `Candidate ${students}`,
        email: `candidate${students}@example.org`,
        ...extra,
      });
      assert.equal(answer.status, 201, answer.text);
      const student = object(object(answer.json, 'body').student, 'student');
      return {
        id: student.id as number,
        token: student.token as string,
        pinCode: student.pin_code as number,
      };
    }

    function room(token: string, method: string, action = '', body?: Json): Promise<HttpAnswer> {
      return httpRequest({
        url: `${server.baseUrl}/api/room/${token}${action === '' ? '' : `/${action}`}`,
        method,
        ...(body === undefined
          ? {}
          : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
      });
    }

    function roomMultipart(
      token: string,
      action: string,
      fields: Record<string, string>,
      files: readonly FilePart[],
    ): Promise<HttpAnswer> {
      const { body, contentType } = multipartBody(fields, files);
      return httpRequest({
        url: `${server.baseUrl}/api/room/${token}/${action}`,
        method: 'POST',
        headers: { 'content-type': contentType },
        body,
      });
    }

    function chunk(token: string, sequence: number, bytes: Buffer): Promise<HttpAnswer> {
      return roomMultipart(token, 'recordings', { sequence: String(sequence) }, [
        part(bytes, `chunk-${sequence}.webm`, 'video/webm'),
      ]);
    }

    async function v3Student(id: number): Promise<Json> {
      const answer = await owner.client.v3('GET', '/student_sessions/:id', { id });
      assert.equal(answer.status, 200, answer.text);
      return object(object(answer.json, 'body').student, 'student');
    }

    async function sessionFiles(
      sessionId: number,
    ): Promise<{ kind: string; sequence: number; file_id: number }[]> {
      return server.app.database.db
        .selectFrom('session_files')
        .select(['kind', 'sequence', 'file_id'])
        .where('student_session_id', '=', sessionId)
        .orderBy('kind')
        .orderBy('sequence')
        .execute();
    }

    /** A started session of the plain exam (no checks required). */
    async function startedPlain(extra: Record<string, Scalar> = {}): Promise<{ id: number; token: string }> {
      const student = await createStudent(plainExam, extra);
      roomSession(await room(student.token, 'POST', 'start'));
      return student;
    }

    it('walks the whole flow and the V3 record shows it', async () => {
      clock.current = start;
      const student = await createStudent(proctoredExam, { individual_info: 'Room 4' });
      const { token } = student;

      const first = await room(token, 'GET');
      const session = roomSession(first);
      assert.equal(session.status, 'registered');
      assert.equal(session.individual_info, 'Room 4');
      assert.deepEqual(session.required_checks, [
        'screenshare_check',
        'microphone_check',
        'webcam_check',
        'bandwidth_check',
      ]);
      assert.equal(session.time_left_seconds, null);
      for (const hidden of ['token', 'pin_code', 'email', 'proctor_id', 'exam_id']) {
        assert.ok(!(hidden in session), `${hidden} is not shown`);
      }
      // The token is not echoed, but in the path of the live socket, which the page opens with it.
      const { live, ...rest } = object(first.json, 'body');
      assert.ok(!JSON.stringify(rest).includes(token), 'the token is not echoed');
      assert.deepEqual(live, {
        enabled: true,
        socket: `/live/room/${token}`,
        awaiting_admission: false,
        clock_paused: false,
      });
      assert.ok(!first.text.includes(String(student.pinCode)), 'nor the pin code');
      const body = object(first.json, 'body');
      assert.equal(body.document, null, 'the document is withheld until the exam starts');
      assert.equal(body.server_time, new Date(start).toISOString());
      const exam = object(body.exam, 'exam');
      assert.equal(exam.name, 'Proctored exam');
      assert.equal(exam.duration_minutes, 60);
      assert.equal(exam.web_cam, true);
      assert.equal(exam.allowed_calculator_type, 'scientific');
      // The times of the room are shown in the exam's zone: UTC unless the exam names another.
      assert.equal(exam.timezone, 'UTC');
      // The recording profile's level (docs/recordings.md): standard unless the exam says otherwise.
      assert.equal(exam.recording_quality, 'standard');
      assert.ok(!('id' in exam) && !('user_id' in exam) && !('comanager_ids' in exam));

      // Checks: a partial set keeps the status, the full set moves it.
      const partial = roomSession(
        await room(token, 'PUT', 'checks', { webcam_check: 'succeeded', microphone_check: 'succeeded' }),
      );
      assert.equal(partial.status, 'registered');
      assertAnswer(await room(token, 'PUT', 'checks', { webcam_check: 'great' }), 422, {
        error: "'webcam_check':['is not included in the list']",
        errors: { webcam_check: ['is not included in the list'] },
      });
      const checked = roomSession(
        await room(token, 'PUT', 'checks', {
          screenshare_check: 'succeeded',
          bandwidth_check: 'succeeded',
          speakers_check: 'failed',
          bandwidth_speed: 12.5,
          operating_system: 'Linux',
          browser: 'Firefox',
          browser_version: '140',
        }),
      );
      assert.equal(checked.status, 'after_check_req');
      assert.equal(checked.bandwidth_speed, 12.5);

      // Photos: images only, by content.
      const idCard = roomSession(
        await roomMultipart(token, 'id_card', {}, [part(SAMPLE.png, 'id.png', 'image/png')]),
      );
      assert.equal(idCard.has_id_card, true);
      assert.equal(idCard.has_face_photo, false);
      const notImage = await roomMultipart(token, 'face_photo', {}, [
        part(SAMPLE.pdf, 'me.png', 'image/png'),
      ]);
      assertAnswer(notImage, 415, { error: 'File type not allowed: application/pdf' });
      assertAnswer(await roomMultipart(token, 'face_photo', {}, []), 422, {
        error: "Param is missing or the value is empty: 'file'",
      });
      assert.equal(
        roomSession(await roomMultipart(token, 'face_photo', {}, [part(SAMPLE.png, 'me.png', 'image/png')]))
          .has_face_photo,
        true,
      );

      // Setup: enter, leave, enter again; entering twice is no move.
      const entered = roomSession(await room(token, 'POST', 'enter'));
      assert.equal(entered.status, 'in_setup');
      assert.equal(entered.entered_room, true);
      assert.equal(roomSession(await room(token, 'POST', 'leave')).status, 'exam_not_started');
      assert.equal(roomSession(await room(token, 'POST', 'enter')).status, 'in_setup');
      assertAnswer(await room(token, 'POST', 'enter'), 409, conflict('in_setup', 'in_setup'));
      assertAnswer(
        await roomMultipart(token, 'uploads', {}, [part(SAMPLE.pdf, 'early.pdf', 'application/pdf')]),
        409,
        { error: 'Answer files are accepted only while the exam is started (the session is in_setup)' },
      );
      assertAnswer(await chunk(token, 0, WEBM_HEAD), 409, {
        error: 'Recording chunks are accepted only while the exam is started (the session is in_setup)',
      });

      // Start: the document arrives with its attachment's link.
      clock.current = start + MINUTE;
      const startedAnswer = await room(token, 'POST', 'start');
      const started = roomSession(startedAnswer);
      assert.equal(started.status, 'exam_started');
      assert.equal(started.start_time, new Date(start + MINUTE).toISOString());
      assert.equal(started.time_left_seconds, 3600);
      assert.equal(started.ends_at, new Date(start + 61 * MINUTE).toISOString());
      const document = object(object(startedAnswer.json, 'body').document, 'document');
      assert.equal(document.exam_content, `Questions below. Formulas: ${attachmentPlaceholder}`);
      const attachments = document.attachments as Json[];
      assert.equal(attachments.length, 1);
      const attachment = object(attachments[0], 'attachment');
      assert.equal(attachment.placeholder, attachmentPlaceholder);
      assert.equal(attachment.file_name, 'formulas.pdf');
      assert.equal(attachment.expires_at, new Date(start + 2 * MINUTE).toISOString(), 'valid one minute');
      assert.equal(document.content_with_links, `Questions below. Formulas: ${String(attachment.url)}`);
      assert.ok(!String(document.content_with_links).includes('[attachment:'));
      const link = String(attachment.url).replace(/&/g, '&amp;');
      assert.equal(
        document.content_html,
        `Questions below. Formulas: <a href="${link}" target="_blank" rel="noopener noreferrer">formulas.pdf</a>`,
        'plain text escaped, the placeholder a link named after its file',
      );
      const download = await fetchAddress(server, String(attachment.url));
      assert.equal(download.status, 200);
      assert.ok(download.bytes.equals(SAMPLE.pdf), 'the link downloads the attachment');
      assertAnswer(await room(token, 'POST', 'enter'), 409, conflict('exam_started', 'in_setup'));
      assertAnswer(await room(token, 'POST', 'leave'), 409, conflict('exam_started', 'exam_not_started'));

      // Recording chunks: in order, a resend acknowledged once, a gap refused.
      const later = crypto.randomBytes(700);
      assertAnswer(await chunk(token, 0, WEBM_HEAD), 201, { next_sequence: 1 });
      assertAnswer(await chunk(token, 1, later), 201, { next_sequence: 2 });
      assertAnswer(await chunk(token, 1, later), 200, { next_sequence: 2 });
      assertAnswer(await chunk(token, 0, WEBM_HEAD), 200, { next_sequence: 2 });
      assertAnswer(await chunk(token, 3, later), 409, { error: 'Expected webcam recording chunk 2, not 3' });
      assertAnswer(await roomMultipart(token, 'recordings', {}, [part(later, 'c.webm', 'video/webm')]), 422, {
        error: "Param is missing or the value is empty: 'sequence'",
      });

      // Answer files: the allow-list by content.
      assertAnswer(
        await roomMultipart(token, 'uploads', {}, [part(SAMPLE.pdf, 'answers.pdf', 'application/pdf')]),
        201,
        { upload: { file_name: 'answers.pdf', size: SAMPLE.pdf.length, content_type: 'application/pdf' } },
      );
      assertAnswer(
        await roomMultipart(token, 'uploads', {}, [part(SAMPLE.elf, 'answers.pdf', 'application/pdf')]),
        415,
        { error: 'File type not allowed' },
      );

      // Events become incidents.
      clock.current = start + 2 * MINUTE;
      const focus = await room(token, 'POST', 'events', { type: 'focus_lost', offset_time: 12 });
      assertAnswer(focus, 201, {
        event: {
          type: 'focus_lost',
          comment: 'The exam window lost focus',
          offset_time: 12,
          created_at: new Date(start + 2 * MINUTE).toISOString(),
        },
      });
      const fullscreen = await room(token, 'POST', 'events', { type: 'fullscreen_left' });
      assert.equal(fullscreen.status, 201, fullscreen.text);
      assert.equal(
        object(object(fullscreen.json, 'body').event, 'event').offset_time,
        60,
        'from the server clock',
      );
      assertAnswer(await room(token, 'POST', 'events', { type: 'bored' }), 422, {
        error: "'type':['is not included in the list']",
        errors: { type: ['is not included in the list'] },
      });
      assertAnswer(await room(token, 'POST', 'events', {}), 422, {
        error: "Param is missing or the value is empty: 'type'",
      });

      const during = roomSession(await room(token, 'GET'));
      assert.equal(during.uploads_count, 1);
      assert.equal(during.recording_chunks_count, 2);
      assert.equal(during.time_left_seconds, 3540);

      // Finish, then nothing more is accepted.
      clock.current = start + 3 * MINUTE;
      const finished = roomSession(await room(token, 'POST', 'finish'));
      assert.equal(finished.status, 'exam_finished');
      assert.equal(finished.end_reason, 'finished');
      assert.equal(finished.end_time, new Date(start + 3 * MINUTE).toISOString());
      assert.equal(finished.time_left_seconds, null);
      assertAnswer(await room(token, 'POST', 'finish'), 409, conflict('exam_finished', 'exam_finished'));
      assertAnswer(await room(token, 'POST', 'start'), 409, conflict('exam_finished', 'exam_started'));
      assertAnswer(await room(token, 'POST', 'events', { type: 'focus_lost' }), 409, FINISHED);
      assertAnswer(await room(token, 'PUT', 'checks', { webcam_check: 'failed' }), 409, FINISHED);
      assertAnswer(await chunk(token, 2, later), 409, FINISHED);
      assertAnswer(
        await roomMultipart(token, 'uploads', {}, [part(SAMPLE.pdf, 'late.pdf', 'application/pdf')]),
        409,
        FINISHED,
      );
      assertAnswer(
        await roomMultipart(token, 'id_card', {}, [part(SAMPLE.png, 'id.png', 'image/png')]),
        409,
        FINISHED,
      );
      assert.equal(object((await room(token, 'GET')).json, 'body').document, null);

      // The V3 record shows what the room did.
      const record = await v3Student(student.id);
      assert.equal(record.status, 'exam_finished');
      assert.equal(record.end_reason, 'finished');
      assert.equal(record.webcam_check, 'succeeded');
      assert.equal(record.microphone_check, 'succeeded');
      assert.equal(record.screenshare_check, 'succeeded');
      assert.equal(record.bandwidth_check, 'succeeded');
      assert.equal(record.speakers_check, 'failed');
      assert.equal(record.bandwidth_speed, 12.5);
      assert.equal(record.operating_system, 'Linux');
      assert.equal(record.browser, 'Firefox');
      assert.equal(record.browser_version, '140');
      assert.equal(record.entered_room, true);
      assert.equal(record.id_card_file_name, 'id.png');
      assert.equal(record.face_photo_file_name, 'me.png');
      assert.equal(record.start_time, new Date(start + MINUTE).toISOString());
      assert.equal(record.recording_started_at, new Date(start + MINUTE).toISOString());
      assert.equal(record.end_time, new Date(start + 3 * MINUTE).toISOString());
      assert.equal(record.recording_ended_at, new Date(start + 3 * MINUTE).toISOString());
      const incidents = (record.incidents as Json[]).map((incident) => [
        incident.comment,
        incident.offset_time,
      ]);
      assert.deepEqual(incidents, [
        ['The exam window lost focus', 12],
        ['The student left full-screen mode', 60],
      ]);

      // Stored as the zip export expects: kind 'recording' and 'upload', each in sequence, nothing twice.
      const stored = await sessionFiles(student.id);
      assert.deepEqual(
        stored.map((file) => [file.kind, file.sequence]),
        [
          ['recording', 0],
          ['recording', 1],
          ['upload', 0],
        ],
      );
      const [chunk0, chunk1, answers] = stored;
      assert.ok(chunk0 && chunk1 && answers);
      assert.equal((await assertStored(server, chunk0.file_id, WEBM_HEAD)).contentType, 'video/webm');
      assert.equal((await assertStored(server, chunk1.file_id, later)).contentType, 'video/webm');
      assert.equal((await assertStored(server, answers.file_id, SAMPLE.pdf)).contentType, 'application/pdf');
    });

    it('finishes a session whose time is up with end_reason time_up and refuses writes', async () => {
      clock.current = start;
      const { id, token } = await startedPlain();
      clock.current = start + 10 * MINUTE;
      assert.equal(roomSession(await room(token, 'GET')).time_left_seconds, 20 * 60);
      clock.current = start + 30 * MINUTE + 1;
      assertAnswer(await room(token, 'POST', 'events', { type: 'focus_lost' }), 409, FINISHED);
      const shown = roomSession(await room(token, 'GET'));
      assert.equal(shown.status, 'exam_finished');
      assert.equal(shown.end_reason, 'time_up');
      assert.equal(
        shown.end_time,
        new Date(start + 30 * MINUTE).toISOString(),
        'ended when the time ran out',
      );
      assertAnswer(await chunk(token, 0, WEBM_HEAD), 409, FINISHED);
      assertAnswer(await room(token, 'POST', 'finish'), 409, conflict('exam_finished', 'exam_finished'));
      const record = await v3Student(id);
      assert.equal(record.status, 'exam_finished');
      assert.equal(record.end_reason, 'time_up');
      assert.equal(record.recording_ended_at, new Date(start + 30 * MINUTE).toISOString());
    });

    it('finishes on the first request after the deadline, whichever it is', async () => {
      clock.current = start;
      const { token } = await startedPlain();
      clock.current = start + 31 * MINUTE;
      assertAnswer(await room(token, 'POST', 'finish'), 409, conflict('exam_finished', 'exam_finished'));
      assert.equal(roomSession(await room(token, 'GET')).end_reason, 'time_up');
    });

    it('keeps no deadline for a session that does not use the duration', async () => {
      clock.current = start;
      const { token } = await startedPlain({ use_duration: false });
      clock.current = start + 5 * 60 * MINUTE;
      const shown = roomSession(await room(token, 'GET'));
      assert.equal(shown.status, 'exam_started');
      assert.equal(shown.time_left_seconds, null);
    });

    it('refuses to start before the open_time, then starts', async () => {
      clock.current = start;
      const openTime = start + 60 * MINUTE;
      const { token } = await createStudent(plainExam, { open_time: new Date(openTime).toISOString() });
      assertAnswer(await room(token, 'POST', 'start'), 409, {
        error: `The exam cannot be started before ${new Date(openTime).toISOString()}`,
      });
      assert.equal(roomSession(await room(token, 'GET')).status, 'registered');
      clock.current = openTime;
      assert.equal(roomSession(await room(token, 'POST', 'start')).status, 'exam_started');
    });

    it('refuses to start once the exam window has closed', async () => {
      clock.current = start;
      const closing = await createExam({
        name: 'Closing exam',
        type: 'classroom',
        duration_minutes: 30,
        start_time: new Date(start - 60 * MINUTE).toISOString(),
        end_time: new Date(start + 10 * MINUTE).toISOString(),
      });
      const { token } = await createStudent(closing);
      clock.current = start + 10 * MINUTE;
      assertAnswer(await room(token, 'POST', 'start'), 409, {
        error: `The exam closed at ${new Date(start + 10 * MINUTE).toISOString()}`,
      });
    });

    it('ends a started session at the exam end_time when that comes before the duration', async () => {
      clock.current = start;
      const closing = await createExam({
        name: 'Short window',
        type: 'classroom',
        duration_minutes: 60,
        end_time: new Date(start + 15 * MINUTE).toISOString(),
      });
      const { token } = await createStudent(closing);
      assert.equal(roomSession(await room(token, 'POST', 'start')).time_left_seconds, 15 * 60);
      clock.current = start + 16 * MINUTE;
      const shown = roomSession(await room(token, 'GET'));
      assert.equal(shown.end_reason, 'time_up');
      assert.equal(shown.end_time, new Date(start + 15 * MINUTE).toISOString());
    });

    it('requires the checks the exam needs unless the session skips requirements', async () => {
      clock.current = start;
      const { token } = await createStudent(proctoredExam);
      await room(token, 'PUT', 'checks', { webcam_check: 'succeeded', screenshare_check: 'skipped' });
      assertAnswer(await room(token, 'POST', 'start'), 409, {
        error:
          'The requirement checks have not all succeeded: screenshare_check, microphone_check, bandwidth_check',
      });
      const skipping = await createStudent(proctoredExam, { skip_requirements: true });
      const started = roomSession(await room(skipping.token, 'POST', 'start'));
      assert.equal(started.status, 'exam_started');
      assert.equal(started.skip_requirements, true);
    });

    it('moves a session with nothing to check to after_check_req on its first checks', async () => {
      clock.current = start;
      const { token } = await createStudent(plainExam);
      assert.deepEqual(roomSession(await room(token, 'GET')).required_checks, []);
      assert.equal(
        roomSession(await room(token, 'PUT', 'checks', { speakers_check: 'succeeded' })).status,
        'after_check_req',
      );
    });

    it('names the exam’s time zone, and none for a stored name that is no zone', async () => {
      const zoned = await createExam({
        name: 'Zoned exam',
        type: 'classroom',
        duration_minutes: 30,
        timezone: 'America/New_York',
      });
      const student = await createStudent(zoned);
      const view = object((await room(student.token, 'GET')).json, 'body');
      assert.equal(object(view.exam, 'exam').timezone, 'America/New_York');
      // A row written before zones were checked: the page falls back to the browser's own zone.
      await server.app.database.db
        .updateTable('exams')
        .set({ timezone: 'Amsterdam Standard Time' })
        .where('id', '=', zoned)
        .execute();
      const unknown = object((await room(student.token, 'GET')).json, 'body');
      assert.equal(object(unknown.exam, 'exam').timezone, null);
    });

    it('answers 404 for a token that names no session, with a JSON body', async () => {
      const unknown = crypto.randomBytes(16).toString('hex');
      assertAnswer(await room(unknown, 'GET'), 404, NO_ROOM);
      assertAnswer(await room(unknown, 'POST', 'start'), 404, NO_ROOM);
      assertAnswer(await room(unknown, 'PUT', 'checks', { webcam_check: 'succeeded' }), 404, NO_ROOM);
      assertAnswer(await room(unknown, 'GET', 'nothing-here'), 404, { error: 'Not Found' });
    });

    it('refuses a token holding a NUL byte with 422 naming it, as every input (never a failure)', async () => {
      const nul = invalid('token', 'contains a NUL character');
      assertAnswer(await room(`${'a'.repeat(31)}%00`, 'GET'), 422, nul);
      assertAnswer(await room(`${'a'.repeat(31)}%00`, 'POST', 'start'), 422, nul);
    });

    it('answers 404 once the exam is destroyed', async () => {
      const doomed = await createExam({ name: 'Doomed', type: 'classroom', duration_minutes: 30 });
      const { token } = await createStudent(doomed);
      const destroyed = await owner.client.v3('DELETE', '/exams/:id', { id: doomed });
      assert.equal(destroyed.status, 200, destroyed.text);
      assertAnswer(await room(token, 'GET'), 404, NO_ROOM);
    });

    it('takes answer files only when the exam asks for them', async () => {
      clock.current = start;
      const { token } = await startedPlain();
      assertAnswer(
        await roomMultipart(token, 'uploads', {}, [part(SAMPLE.pdf, 'answers.pdf', 'application/pdf')]),
        422,
        {
          error: "'file':['is not accepted: this exam takes no uploaded answers']",
          errors: { file: ['is not accepted: this exam takes no uploaded answers'] },
        },
      );
    });

    it('refuses a first recording chunk that is no video, and takes later chunks as they are', async () => {
      clock.current = start;
      const { id, token } = await startedPlain();
      assertAnswer(await chunk(token, 0, SAMPLE.png), 415, { error: 'File type not allowed: image/png' });
      assertAnswer(await chunk(token, 1, SAMPLE.binary), 409, {
        error: 'Expected webcam recording chunk 0, not 1',
      });
      const mp4 = Buffer.concat([
        Buffer.from([0, 0, 0, 0x18]),
        Buffer.from('ftypmp42'),
        crypto.randomBytes(100),
      ]);
      assertAnswer(await chunk(token, 0, mp4), 201, { next_sequence: 1 });
      assertAnswer(await chunk(token, 1, SAMPLE.binary), 201, { next_sequence: 2 });
      const stored = await sessionFiles(id);
      assert.equal(stored.length, 2);
      const later = stored[1];
      assert.ok(later);
      assert.equal((await assertStored(server, later.file_id, SAMPLE.binary)).contentType, 'video/mp4');
    });

    it('keeps the webcam and the screen as two recordings, each numbered on its own', async () => {
      clock.current = start;
      const { id, token } = await startedPlain();
      const screen = (sequence: number, bytes: Buffer) =>
        roomMultipart(token, 'recordings', { sequence: String(sequence), source: 'screen' }, [
          part(bytes, `screen-${sequence}.webm`, 'video/webm'),
        ]);
      assertAnswer(await chunk(token, 0, WEBM_HEAD), 201, { next_sequence: 1 });
      assertAnswer(await screen(0, WEBM_HEAD), 201, { next_sequence: 1 });
      assertAnswer(await screen(1, SAMPLE.binary), 201, { next_sequence: 2 });
      assertAnswer(await screen(3, SAMPLE.binary), 409, {
        error: 'Expected screen recording chunk 2, not 3',
      });
      const wrong = await roomMultipart(token, 'recordings', { sequence: '1', source: 'mobile' }, [
        part(SAMPLE.binary, 'c.webm', 'video/webm'),
      ]);
      assertAnswer(wrong, 422, {
        error: "'source':['is not included in the list']",
        errors: { source: ['is not included in the list'] },
      });
      const view = roomSession(await room(token, 'GET'));
      assert.equal(view.recording_chunks_count, 1);
      assert.equal(view.screen_recording_chunks_count, 2);
      assert.deepEqual(
        (await sessionFiles(id)).map((file) => `${file.kind}:${file.sequence}`),
        ['recording:0', 'screen_recording:0', 'screen_recording:1'],
      );
    });

    it('shows HTML instructions and individual information sanitised, and text escaped', async () => {
      clock.current = start;
      const htmlExam = await createExam({ name: 'HTML exam', type: 'classroom', duration_minutes: 30 });
      const created = await owner.client.v3('POST', '/exams/:exam_id/documents', {
        exam_id: htmlExam,
        exam_content: '<h2 onclick="x()">Part 1</h2><script>steal()</script><p>Answer <b>all</b>.</p>',
      });
      assert.equal(created.status, 201, created.text);
      const html = await createStudent(htmlExam, {
        individual_info: '<p>Desk <b>4</b></p><img src=x onerror=alert(1)>',
        is_individual_info_html: true,
      });
      const text = await createStudent(htmlExam, { individual_info: 'Desk <4>\nbring ID' });
      assert.equal(roomSession(await room(html.token, 'GET')).individual_info_html, '<p>Desk <b>4</b></p>');
      assert.equal(
        roomSession(await room(text.token, 'GET')).individual_info_html,
        'Desk &lt;4&gt;<br>\nbring ID',
      );
      const started = await room(html.token, 'POST', 'start');
      roomSession(started);
      const document = object(object(started.json, 'body').document, 'document');
      assert.equal(document.content_html, '<h2>Part 1</h2><p>Answer <b>all</b>.</p>');
    });

    it('documents its routes in the OpenAPI document, unsigned', async () => {
      const answer = await httpRequest({ url: `${server.baseUrl}/api/openapi.json` });
      const paths = object(object(answer.json, 'body').paths, 'paths');
      const routes = Object.entries(paths)
        .filter(([path]) => path.startsWith('/api/room/'))
        .flatMap(([path, item]) =>
          Object.keys(object(item, path)).map((method) => `${method.toUpperCase()} ${path}`),
        )
        .sort();
      assert.deepEqual(routes, [
        'GET /api/room/{token}',
        'GET /api/room/{token}/appeal',
        'GET /api/room/{token}/messages',
        'GET /api/room/{token}/mobile/qr.svg',
        'GET /api/room/{token}/practice/{run}',
        'POST /api/room/practice/exam/{key}',
        'POST /api/room/{token}/appeal',
        'POST /api/room/{token}/break',
        'POST /api/room/{token}/break/end',
        'POST /api/room/{token}/data/access',
        'POST /api/room/{token}/data/code',
        'POST /api/room/{token}/enter',
        'POST /api/room/{token}/events',
        'POST /api/room/{token}/face_photo',
        'POST /api/room/{token}/finish',
        'POST /api/room/{token}/flags',
        'POST /api/room/{token}/flags/rate',
        'POST /api/room/{token}/id_card',
        'POST /api/room/{token}/leave',
        'POST /api/room/{token}/messages',
        'POST /api/room/{token}/mobile/pairing',
        'POST /api/room/{token}/practice',
        'POST /api/room/{token}/practice/{run}/finish',
        'POST /api/room/{token}/practice/{run}/photo',
        'POST /api/room/{token}/practice/{run}/recording',
        'POST /api/room/{token}/recordings',
        'POST /api/room/{token}/start',
        'POST /api/room/{token}/uploads',
        'PUT /api/room/{token}/checks',
        'PUT /api/room/{token}/language',
        'PUT /api/room/{token}/practice/{run}/checks',
      ]);
    });

    it('limits each token to 120 requests a minute with a JSON 429', async () => {
      const { token } = await createStudent(plainExam);
      const other = await createStudent(plainExam);
      for (let batch = 0; batch < 6; batch += 1) {
        const answers = await Promise.all(Array.from({ length: 20 }, () => room(token, 'GET')));
        for (const answer of answers) assert.equal(answer.status, 200, answer.text);
      }
      const limited = await room(token, 'GET');
      assert.equal(limited.status, 429, limited.text);
      assert.match(limited.headers['content-type'] ?? '', /^application\/json/);
      assert.match(
        String(object(limited.json, 'body').error),
        /^Too many requests: try again in \d+ seconds$/,
      );
      assert.equal((await room(other.token, 'GET')).status, 200, 'another token has its own allowance');
    });
  });
}
