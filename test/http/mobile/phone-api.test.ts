import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { addCandidate } from '../../helpers/candidates.ts';
import { type HttpAnswer, httpRequest } from '../../helpers/http.ts';
import { type FilePart, multipartBody, SAMPLE } from '../../helpers/multipart.ts';
import { DIALECTS, startTestServer, TestClock, type TestServer } from '../../helpers/server.ts';
import type { Scalar } from '../../helpers/signing.ts';
import { object } from '../../helpers/json.ts';
import { MOBILE_FINISH_GRACE_MS } from '../../../src/domain/mobile/mobile.ts';

type Json = Record<string, unknown>;
type TestUser = Awaited<ReturnType<TestServer['user']>>;

const PUBLIC_URL = 'https://invigil.example.test';
const NO_PHONE = { error: "Couldn't find this phone link: scan the newest code shown in the exam room" };
const NO_ROOM = { error: "Couldn't find the exam room" };
const FINISHED = { error: 'The exam is finished: this student session accepts no more changes' };

/** The first bytes of a WebM stream (EBML header), then media data: enough for the phone's check. */
const WEBM_CLIP = Buffer.concat([Buffer.from([0x1a, 0x45, 0xdf, 0xa3]), crypto.randomBytes(4000)]);

function part(bytes: Buffer, fileName: string, contentType: string): FilePart {
  return { field: 'file', fileName, contentType, bytes };
}

function ok(answer: HttpAnswer, status = 200): Json {
  assert.equal(answer.status, status, answer.text);
  return object(answer.json, 'body');
}

for (const dialect of DIALECTS) {
  describe(`the phone as a second camera: /api/mobile and the room's phone [${dialect}]`, () => {
    const clock = new TestClock(Math.floor(Date.now() / 1000) * 1000);
    let server: TestServer;
    let owner: TestUser;
    let phoneExam: number;
    let plainExam: number;

    before(async () => {
      server = await startTestServer(dialect, { clock, env: { PUBLIC_URL } });
      const institute = await server.institute();
      owner = await server.user(institute, 'teacher');
      phoneExam = await createExam({
        name: 'Side view exam',
        type: 'record_review',
        duration_minutes: 60,
        mobile_cam: true,
        timezone: 'Europe/Amsterdam',
      });
      plainExam = await createExam({ name: 'Plain exam', type: 'classroom', duration_minutes: 30 });
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
    async function createStudent(examId: number): Promise<{ id: number; token: string; pinCode: number }> {
      students += 1;
      const { id, token, student } = await addCandidate(owner.client, examId, students);
      return { id, token, pinCode: student.pin_code as number };
    }

    function call(
      base: 'room' | 'mobile',
      token: string,
      method: string,
      action = '',
      body?: Json,
    ): Promise<HttpAnswer> {
      return httpRequest({
        url: `${server.baseUrl}/api/${base}/${token}${action === '' ? '' : `/${action}`}`,
        method,
        ...(body === undefined
          ? {}
          : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
      });
    }

    function multipart(
      base: 'room' | 'mobile',
      token: string,
      action: string,
      fields: Record<string, string>,
      files: readonly FilePart[],
    ): Promise<HttpAnswer> {
      const { body, contentType } = multipartBody(fields, files);
      return httpRequest({
        url: `${server.baseUrl}/api/${base}/${token}/${action}`,
        method: 'POST',
        headers: { 'content-type': contentType },
        body,
      });
    }

    function phoneChunk(
      token: string,
      sequence: number,
      fields: Record<string, string> = {},
    ): Promise<HttpAnswer> {
      return multipart('mobile', token, 'recordings', { sequence: String(sequence), ...fields }, [
        part(WEBM_CLIP, `mobile-${sequence}.webm`, 'video/webm'),
      ]);
    }

    /** The room's `mobile` object of a session. */
    async function roomMobile(token: string): Promise<Json> {
      return object(ok(await call('room', token, 'GET')).mobile, 'mobile');
    }

    /** The pairing token in the room's pairing_url. */
    async function pairingToken(roomToken: string): Promise<string> {
      const url = (await roomMobile(roomToken)).pairing_url as string;
      assert.match(url, new RegExp(`^${PUBLIC_URL}/m/[0-9a-f]{32}$`));
      return url.slice(url.lastIndexOf('/') + 1);
    }

    async function incidents(sessionId: number): Promise<{ comment: string; offset_time: number | null }[]> {
      const answer = await owner.client.v3('GET', '/student_sessions/:id', { id: sessionId });
      const student = object(ok(answer).student, 'student');
      return (student.incidents as Json[])
        .map((incident) => ({
          comment: incident.comment as string,
          offset_time: incident.offset_time as number | null,
        }))
        .filter((incident) => incident.comment.startsWith('The phone camera'));
    }

    /** A session of the phone exam, paired and checked by its phone, its connection measured, then started. */
    async function startedWithPhone(): Promise<{ id: number; token: string; phone: string }> {
      const student = await createStudent(phoneExam);
      const phone = await pairingToken(student.token);
      ok(await call('mobile', phone, 'POST', 'hello', { device: 'Chrome 131 on Android 14' }));
      ok(await multipart('mobile', phone, 'check', {}, [part(WEBM_CLIP, 'check.webm', 'video/webm')]));
      ok(
        await call('room', student.token, 'PUT', 'checks', {
          bandwidth_check: 'succeeded',
          bandwidth_speed: 20,
        }),
      );
      ok(await call('room', student.token, 'POST', 'start'));
      return { ...student, phone };
    }

    it('shows the pairing in the room of a mobile_cam exam only', async () => {
      const plain = await createStudent(plainExam);
      assert.equal(Object.hasOwn(ok(await call('room', plain.token, 'GET')), 'mobile'), false);
      const student = await createStudent(phoneExam);
      const view = ok(await call('room', student.token, 'GET'));
      const session = object(view.session, 'session');
      assert.deepEqual(session.required_checks, ['mobile_check', 'bandwidth_check']);
      const mobile = object(view.mobile, 'mobile');
      assert.equal(mobile.pairing_address, `${PUBLIC_URL}/m`);
      assert.equal(mobile.pin_code, String(student.pinCode).padStart(6, '0'));
      assert.equal(mobile.status, 'not_paired');
      assert.equal(mobile.chunks_count, 0);
      // The same token on every read until it is replaced.
      assert.equal((await roomMobile(student.token)).pairing_url, mobile.pairing_url);
      const qr = await httpRequest({ url: `${server.baseUrl}/api/room/${student.token}/mobile/qr.svg` });
      assert.equal(qr.status, 200);
      assert.match(qr.headers['content-type'] ?? '', /^image\/svg\+xml/);
      assert.match(qr.text, /^<svg/);
      const noPhone = await httpRequest({ url: `${server.baseUrl}/api/room/${plain.token}/mobile/qr.svg` });
      assert.equal(noPhone.status, 404, noPhone.text);
    });

    it('keeps each token to its own purpose', async () => {
      const student = await createStudent(phoneExam);
      const phone = await pairingToken(student.token);
      assert.deepEqual((await call('mobile', student.token, 'GET')).json, NO_PHONE);
      assert.equal((await call('room', phone, 'GET')).status, 404);
      assert.deepEqual((await call('room', phone, 'GET')).json, NO_ROOM);
      assert.deepEqual((await call('mobile', 'f'.repeat(32), 'GET')).json, NO_PHONE);
      // Another session's phone leaves this one untouched.
      const other = await createStudent(phoneExam);
      const otherPhone = await pairingToken(other.token);
      assert.notEqual(otherPhone, phone);
      ok(await call('mobile', otherPhone, 'POST', 'hello', {}));
      assert.equal((await roomMobile(student.token)).status, 'not_paired');
      assert.equal((await roomMobile(other.token)).status, 'paired');
    });

    it('passes mobile_check only when the phone’s frames arrive, never from the room', async () => {
      const student = await createStudent(phoneExam);
      const refused = await call('room', student.token, 'PUT', 'checks', { mobile_check: 'succeeded' });
      assert.equal(refused.status, 422, refused.text);
      assert.deepEqual(refused.json, {
        error: "'mobile_check':['is passed by the phone camera check, not by the room']",
        errors: { mobile_check: ['is passed by the phone camera check, not by the room'] },
      });
      const phone = await pairingToken(student.token);
      const hello = ok(await call('mobile', phone, 'POST', 'hello', { device: 'Safari 18 on iOS 18' }));
      assert.deepEqual(object(hello.mobile, 'mobile'), {
        status: 'paired',
        check: 'not_started',
        next_sequence: 0,
        chunks_count: 0,
      });
      assert.equal(object(hello.session, 'session').student_name, 'Candidate ' + String(students));
      assert.deepEqual(object(hello.exam, 'exam'), {
        name: 'Side view exam',
        live_proctoring: false,
        timezone: 'Europe/Amsterdam',
        record_during_breaks: true,
      });
      const notVideo = await multipart('mobile', phone, 'check', {}, [
        part(SAMPLE.pdf, 'x.webm', 'video/webm'),
      ]);
      assert.equal(notVideo.status, 415, notVideo.text);
      const tiny = await multipart('mobile', phone, 'check', {}, [
        part(WEBM_CLIP.subarray(0, 100), 'x.webm', 'video/webm'),
      ]);
      assert.equal(tiny.status, 422, tiny.text);
      const checked = ok(
        await multipart('mobile', phone, 'check', {}, [part(WEBM_CLIP, 'check.webm', 'video/webm')]),
      );
      assert.deepEqual(object(checked.mobile, 'mobile').check, 'succeeded');
      assert.equal(object(checked.mobile, 'mobile').status, 'streaming');
      const mobile = await roomMobile(student.token);
      assert.equal(mobile.status, 'streaming');
      assert.equal(mobile.device, 'Safari 18 on iOS 18');
      const session = object(ok(await call('room', student.token, 'GET')).session, 'session');
      assert.equal(session.mobile_check, 'succeeded');
    });

    it('refuses the start until the phone is checked, then records the phone as its own stream', async () => {
      const student = await createStudent(phoneExam);
      ok(
        await call('room', student.token, 'PUT', 'checks', {
          bandwidth_check: 'succeeded',
          bandwidth_speed: 20,
        }),
      );
      const early = await call('room', student.token, 'POST', 'start');
      assert.equal(early.status, 409, early.text);
      assert.match(early.text, /mobile_check/);
      const { id, token, phone } = await startedWithPhone();
      assert.equal(object(ok(await call('room', token, 'GET')).session, 'session').status, 'exam_started');
      assert.equal(
        (await multipart('mobile', phone, 'check', {}, [part(WEBM_CLIP, 'c.webm', 'video/webm')])).status,
        409,
      );
      assert.deepEqual((await phoneChunk(phone, 0)).json, { next_sequence: 1 });
      assert.equal((await phoneChunk(phone, 1, { source: 'mobile' })).status, 201);
      assert.equal((await phoneChunk(phone, 1)).status, 200); // a resend
      const gap = await phoneChunk(phone, 5);
      assert.deepEqual(gap.json, { error: 'Expected mobile recording chunk 2, not 5' });
      const webcam = await phoneChunk(phone, 2, { source: 'webcam' });
      assert.equal(webcam.status, 422, webcam.text);
      // The computer cannot send the phone's stream.
      const fromRoom = await multipart('room', token, 'recordings', { sequence: '2', source: 'mobile' }, [
        part(WEBM_CLIP, 'c.webm', 'video/webm'),
      ]);
      assert.equal(fromRoom.status, 422, fromRoom.text);
      const rows = await server.app.database.db
        .selectFrom('session_files')
        .innerJoin('files', 'files.id', 'session_files.file_id')
        .select(['session_files.kind', 'session_files.sequence', 'files.original_name'])
        .where('student_session_id', '=', id)
        .orderBy('sequence')
        .execute();
      assert.deepEqual(
        rows.map((row) => [row.kind, row.sequence, row.original_name]),
        [
          ['mobile_recording', 0, 'mobile-0.webm'],
          ['mobile_recording', 1, 'mobile-1.webm'],
        ],
      );
      const mobile = await roomMobile(token);
      assert.equal(mobile.chunks_count, 2);
      assert.equal(mobile.status, 'streaming');
      const view = ok(await call('mobile', phone, 'GET'));
      assert.equal(object(view.mobile, 'mobile').next_sequence, 2);
      assert.equal(object(view.session, 'session').status, 'exam_started');
      assert.equal(typeof object(view.session, 'session').time_left_seconds, 'number');
    });

    it('records a phone lost and back during the exam as incidents at their times', async () => {
      const { id, token, phone } = await startedWithPhone();
      assert.equal((await phoneChunk(phone, 0)).status, 201);
      const heard = clock.now();
      clock.current += 20_000;
      assert.equal((await roomMobile(token)).status, 'lost');
      assert.equal((await roomMobile(token)).status, 'lost'); // recorded once
      clock.current += 10_000;
      ok(
        await call('mobile', phone, 'POST', 'heartbeat', {
          streaming: true,
          visible: true,
          battery_level: 0.5,
        }),
      );
      assert.equal((await roomMobile(token)).status, 'streaming');
      const session = object(ok(await call('room', token, 'GET')).session, 'session');
      const started = Date.parse(session.start_time as string);
      assert.deepEqual(await incidents(id), [
        {
          comment: 'The phone camera stopped sending video',
          offset_time: Math.floor((heard + 15_000 - started) / 1000),
        },
        {
          comment: 'The phone camera is sending video again',
          offset_time: Math.floor((clock.now() - started) / 1000),
        },
      ]);
      // Leaving the page: lost at once.
      ok(await call('mobile', phone, 'POST', 'leave'));
      assert.equal((await roomMobile(token)).status, 'lost');
      assert.equal((await incidents(id)).length, 3);
      // Back: the numbering goes on where it stopped.
      const back = ok(await call('mobile', phone, 'POST', 'hello', {}));
      assert.equal(object(back.mobile, 'mobile').next_sequence, 1);
      assert.equal((await phoneChunk(phone, 1)).status, 201);
      assert.equal((await incidents(id)).length, 4);
    });

    it('replaces the pairing on request: the old phone link stops working at once', async () => {
      const student = await createStudent(phoneExam);
      const first = await pairingToken(student.token);
      ok(await call('mobile', first, 'POST', 'hello', {}));
      const renewed = object(
        ok(await call('room', student.token, 'POST', 'mobile/pairing')).mobile,
        'mobile',
      );
      assert.equal(renewed.status, 'not_paired');
      const second = (renewed.pairing_url as string).split('/').pop() ?? '';
      assert.notEqual(second, first);
      assert.deepEqual((await call('mobile', first, 'GET')).json, NO_PHONE);
      assert.deepEqual((await call('mobile', first, 'POST', 'heartbeat', {})).json, NO_PHONE);
      ok(await call('mobile', second, 'GET'));
    });

    it('lets the phone see the end, and refuses its writes and a new pairing once finished', async () => {
      const { id, token, phone } = await startedWithPhone();
      assert.equal((await phoneChunk(phone, 0)).status, 201);
      ok(await call('room', token, 'POST', 'finish'));
      const finishedAt = clock.now();
      const view = ok(await call('mobile', phone, 'GET'));
      assert.equal(object(view.session, 'session').status, 'exam_finished');
      // The phone's last chunk, recorded before the end, is still taken for a short while after it,
      // and the finalisation waits as long.
      clock.current += 10_000;
      assert.deepEqual((await phoneChunk(phone, 1)).json, { next_sequence: 2 });
      clock.current += 10_000;
      assert.deepEqual((await phoneChunk(phone, 2)).json, FINISHED);
      const job = await server.app.database.db
        .selectFrom('jobs')
        .select('run_at')
        .where('kind', '=', 'recording.finalize')
        .where('dedupe_key', '=', `session:${id}`)
        .executeTakeFirstOrThrow();
      assert.equal(Number(job.run_at), finishedAt + MOBILE_FINISH_GRACE_MS);
      // A phone that had recorded nothing before the end does not begin after it.
      const other = await startedWithPhone();
      ok(await call('room', other.token, 'POST', 'finish'));
      assert.deepEqual((await phoneChunk(other.phone, 0)).json, FINISHED);
      const mobile = await roomMobile(token);
      assert.equal(mobile.pairing_url, null);
      assert.equal(mobile.pin_code, null);
      assert.equal((await call('room', token, 'POST', 'mobile/pairing')).status, 409);
      const qr = await httpRequest({ url: `${server.baseUrl}/api/room/${token}/mobile/qr.svg` });
      assert.equal(qr.status, 409, qr.text);
      // A heartbeat still answers (the page learns the exam ended), changing nothing.
      const beat = ok(await call('mobile', phone, 'POST', 'heartbeat', {}));
      assert.equal(object(beat.session, 'session').status, 'exam_finished');
    });

    it('pairs by PIN and email, either case, and refuses a wrong PIN or a finished session', async () => {
      const student = await createStudent(phoneExam);
      const pin = String(student.pinCode).padStart(6, '0');
      const paired = await server.app.services.mobile.pairByPin(pin, `CANDIDATE${students}@Example.org`);
      assert.equal(paired.mobileToken, await pairingToken(student.token));
      const wrong = String((student.pinCode + 1) % 1_000_000).padStart(6, '0');
      await assert.rejects(
        server.app.services.mobile.pairByPin(wrong, `candidate${students}@example.org`),
        /do not match/,
      );
      await assert.rejects(
        server.app.services.mobile.pairByPin('12ab56', `candidate${students}@example.org`),
        /do not match/,
      );
      ok(
        await call('room', student.token, 'PUT', 'checks', {
          bandwidth_check: 'succeeded',
          bandwidth_speed: 20,
        }),
      );
      const phone = await pairingToken(student.token);
      ok(await multipart('mobile', phone, 'check', {}, [part(WEBM_CLIP, 'c.webm', 'video/webm')]));
      ok(await call('room', student.token, 'POST', 'start'));
      ok(await call('room', student.token, 'POST', 'finish'));
      await assert.rejects(
        server.app.services.mobile.pairByPin(pin, `candidate${students}@example.org`),
        /no longer needed/,
      );
    });
  });
}
