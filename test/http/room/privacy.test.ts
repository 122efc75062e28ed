/**
 * The privacy panel in the candidate room (docs/room.md "Privacy panel"): the room view's `privacy`
 * states what the exam records, what stays on the device, who sees it, how long it is kept, whom to
 * ask and how to contest, from the exam's and the institute's settings; `POST start` keeps the
 * version accepted together with the terms, and refuses a version no longer in force. The phone's
 * view carries the same panel.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { addCandidate } from '../../helpers/candidates.ts';
import { type HttpAnswer, httpRequest } from '../../helpers/http.ts';
import { object } from '../../helpers/json.ts';
import { DIALECTS, startTestServer, TestClock, type TestServer } from '../../helpers/server.ts';
import type { Scalar } from '../../helpers/signing.ts';

type Json = Record<string, unknown>;
type TestUser = Awaited<ReturnType<TestServer['user']>>;

const PUBLIC_URL = 'https://invigil.example.org';
const VIEWERS = ['teacher', 'proctor', 'reviewer', 'administrator', 'auditor'];

function sha256(text: string): string {
  return crypto.createHash('sha256').update(text, 'utf8').digest('hex');
}

for (const dialect of DIALECTS) {
  describe(`the privacy panel in the candidate room [${dialect}]`, () => {
    const clock = new TestClock(Math.floor(Date.now() / 1000) * 1000);
    let server: TestServer;
    let owner: TestUser;
    let instituteId: number;
    let students = 0;

    before(async () => {
      server = await startTestServer(dialect, { clock, env: { PUBLIC_URL } });
      instituteId = await server.institute('Privacy University');
      owner = await server.user(instituteId, 'teacher');
    });

    after(async () => {
      await server.close();
    });

    async function setInstitute(values: {
      privacy_contact?: string | null;
      dpo_name?: string | null;
      dpo_email?: string | null;
      appeal_period_days?: number;
      session_retention_period?: number | null;
    }): Promise<void> {
      await server.app.database.db
        .updateTable('institutes')
        .set(values)
        .where('id', '=', instituteId)
        .execute();
    }

    async function createExam(params: Record<string, Scalar>): Promise<number> {
      const answer = await owner.client.v3('POST', '/exams', {
        name: 'Privacy exam',
        type: 'record_review',
        duration_minutes: 30,
        ...params,
      });
      assert.equal(answer.status, 201, answer.text);
      return object(object(answer.json, 'body').exam, 'exam').id as number;
    }

    async function createStudent(examId: number): Promise<{ id: number; token: string; pinCode: number }> {
      students += 1;
      const { id, token, student } = await addCandidate(owner.client, examId, students);
      return { id, token, pinCode: student.pin_code as number };
    }

    function call(base: 'room' | 'mobile', token: string, method: string, action = '', body?: Json) {
      return httpRequest({
        url: `${server.baseUrl}/api/${base}/${token}${action === '' ? '' : `/${action}`}`,
        method,
        ...(body === undefined
          ? {}
          : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
      });
    }

    function ok(answer: HttpAnswer): Json {
      assert.equal(answer.status, 200, answer.text);
      return object(answer.json, 'body');
    }

    async function privacyOf(token: string): Promise<Json> {
      return object(ok(await call('room', token, 'GET')).privacy, 'privacy');
    }

    async function storedAcceptance(id: number): Promise<{ at: number | null; record: string | null }> {
      const row = await server.app.database.db
        .selectFrom('student_sessions')
        .select(['terms_accepted_at', 'terms_sha256'])
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      return {
        at: row.terms_accepted_at === null ? null : Number(row.terms_accepted_at),
        record: row.terms_sha256,
      };
    }

    it('states an exam that records nothing: only events, checks on the device, kept until deleted', async () => {
      await setInstitute({
        privacy_contact: null,
        dpo_name: null,
        dpo_email: null,
        appeal_period_days: 14,
        session_retention_period: null,
      });
      const student = await createStudent(await createExam({ type: 'classroom' }));
      const privacy = await privacyOf(student.token);
      assert.deepEqual(Object.keys(privacy), [
        'version',
        'recorded',
        'on_device',
        'viewers',
        'retention',
        'institute',
        'appeal_period_days',
      ]);
      assert.match(privacy.version as string, /^[0-9a-f]{16}$/);
      assert.deepEqual(privacy.recorded, ['events']);
      assert.deepEqual(privacy.on_device, ['equipment_checks']);
      assert.deepEqual(privacy.viewers, VIEWERS);
      // Only the kinds this exam keeps: here the events, kept as incidents, with no period set.
      assert.deepEqual(privacy.retention, [{ kind: 'incidents', days: null, rule: 'kept' }]);
      assert.deepEqual(privacy.institute, {
        name: 'Privacy University',
        privacy_contact: null,
        dpo_name: null,
        dpo_email: null,
      });
      assert.equal(privacy.appeal_period_days, 14);
    });

    it('states everything a fully recorded exam keeps, from the exam and the institute settings', async () => {
      await setInstitute({
        privacy_contact: 'privacy@uni.example.org',
        dpo_name: 'Ada Lovelace',
        dpo_email: 'dpo@uni.example.org',
        appeal_period_days: 30,
        session_retention_period: 90,
      });
      const student = await createStudent(
        await createExam({
          web_cam: true,
          screen_share: true,
          mobile_cam: true,
          upload_answers: true,
          automated_flags: true,
        }),
      );
      const privacy = await privacyOf(student.token);
      assert.deepEqual(privacy.recorded, [
        'camera',
        'microphone',
        'screen',
        'phone_camera',
        'id_photo',
        'face_photo',
        'uploads',
        'flags',
        'events',
      ]);
      assert.deepEqual(privacy.on_device, ['flag_detectors', 'equipment_checks']);
      // The institute's retention per kind (docs/retention.md): the ID photo's own 30 days (or 24 hours
      // after the final verdict), the others following session_retention_period.
      assert.deepEqual(privacy.retention, [
        { kind: 'id_photo', days: 30, rule: 'after_verdict_or_session_end' },
        { kind: 'face_photo', days: 90, rule: 'after_session_end' },
        { kind: 'recordings', days: 90, rule: 'after_session_end' },
        { kind: 'uploads', days: 90, rule: 'after_session_end' },
        { kind: 'incidents', days: 90, rule: 'after_session_end' },
      ]);
      assert.deepEqual(privacy.institute, {
        name: 'Privacy University',
        privacy_contact: 'privacy@uni.example.org',
        dpo_name: 'Ada Lovelace',
        dpo_email: 'dpo@uni.example.org',
      });
      assert.equal(privacy.appeal_period_days, 30);
    });

    it("states the institute's own period of a kind, and changes its version with it", async () => {
      await setInstitute({ session_retention_period: null });
      const student = await createStudent(await createExam({ web_cam: true }));
      const before = await privacyOf(student.token);
      await server.app.database.db
        .insertInto('retention_policies')
        .values({
          institute_id: instituteId,
          kind: 'recording',
          days: 10,
          updated_by: null,
          updated_at: clock.now(),
        })
        .execute();
      try {
        const privacy = await privacyOf(student.token);
        assert.deepEqual(privacy.retention, [
          { kind: 'id_photo', days: 30, rule: 'after_verdict_or_session_end' },
          { kind: 'face_photo', days: null, rule: 'kept' },
          { kind: 'recordings', days: 10, rule: 'after_session_end' },
          { kind: 'incidents', days: null, rule: 'kept' },
        ]);
        assert.notEqual(privacy.version, before.version);
      } finally {
        await server.app.database.db
          .deleteFrom('retention_policies')
          .where('institute_id', '=', instituteId)
          .execute();
      }
    });

    it("leaves out what a candidate's accommodations exempt them from", async () => {
      const exam = await createExam({ web_cam: true, screen_share: true });
      students += 1;
      const answer = await owner.client.v3('POST', '/exams/:exam_id/student_sessions', {
        exam_id: exam,
        name: `Candidate ${students}`,
        email: `privacy${students}@example.org`,
        accommodations: JSON.stringify({
          exemptions: [
            { check: 'screen_share', reason: 'screen reader' },
            { check: 'id_photo', reason: 'no card at hand' },
          ],
        }),
      });
      assert.equal(answer.status, 201, answer.text);
      const token = object(object(answer.json, 'body').student, 'student').token as string;
      const privacy = await privacyOf(token);
      assert.deepEqual(privacy.recorded, ['camera', 'microphone', 'face_photo', 'events']);
      assert.deepEqual(
        (privacy.retention as Json[]).map((fact) => fact.kind),
        ['face_photo', 'recordings', 'incidents'],
      );
    });

    it('changes its version when the terms or a stated setting change, and only then', async () => {
      await setInstitute({ appeal_period_days: 14, dpo_name: null });
      const exam = await createExam({ web_cam: true, terms: 'I work alone.' });
      const student = await createStudent(exam);
      const first = (await privacyOf(student.token)).version;
      assert.equal((await privacyOf(student.token)).version, first);

      const edited = await owner.client.v3('PATCH', '/exams/:id', {
        id: exam,
        terms: 'I work alone, truly.',
      });
      assert.equal(edited.status, 200, edited.text);
      const second = (await privacyOf(student.token)).version;
      assert.notEqual(second, first);

      await setInstitute({ appeal_period_days: 7 });
      const third = (await privacyOf(student.token)).version;
      assert.notEqual(third, second);

      await setInstitute({ dpo_name: 'Grace Hopper' });
      assert.notEqual((await privacyOf(student.token)).version, third);
    });

    it('keeps the accepted version with the terms when the exam starts', async () => {
      const terms = 'No phones.';
      const student = await createStudent(await createExam({ terms }));
      const { version } = await privacyOf(student.token);
      clock.current += 1000;
      const started = ok(
        await call('room', student.token, 'POST', 'start', {
          terms_accepted: true,
          privacy_version: version,
        }),
      );
      assert.equal(object(started.session, 'session').status, 'exam_started');
      assert.deepEqual(await storedAcceptance(student.id), {
        at: clock.now(),
        record: `terms:${sha256(terms)};privacy:${version as string}`,
      });
      const record = await owner.client.v3('GET', '/student_sessions/:id', { id: student.id });
      assert.equal(
        object(object(record.json, 'body').student, 'student').terms_accepted_at,
        new Date(clock.now()).toISOString(),
      );
    });

    it('keeps the acceptance of the panel alone for an exam without terms, leaving terms_accepted_at null', async () => {
      const student = await createStudent(await createExam({}));
      const { version } = await privacyOf(student.token);
      ok(await call('room', student.token, 'POST', 'start', { privacy_version: version }));
      // The V3 record's terms_accepted_at stays null without terms (contract); start_time dates the acceptance.
      assert.deepEqual(await storedAcceptance(student.id), {
        at: null,
        record: `privacy:${version as string}`,
      });
      const record = await owner.client.v3('GET', '/student_sessions/:id', { id: student.id });
      const shown = object(object(record.json, 'body').student, 'student');
      assert.equal(shown.terms_accepted_at, null);
      assert.equal(shown.start_time, new Date(clock.now()).toISOString());
    });

    it('refuses a version no longer in force with 422 naming privacy_version, and does not start', async () => {
      const student = await createStudent(await createExam({ terms: 'Be honest.' }));
      const { version } = await privacyOf(student.token);
      await setInstitute({ appeal_period_days: 21 });
      for (const stale of [version as string, 'not-a-version']) {
        const answer = await call('room', student.token, 'POST', 'start', {
          terms_accepted: true,
          privacy_version: stale,
        });
        assert.equal(answer.status, 422, answer.text);
        assert.deepEqual(answer.json, {
          error: "'privacy_version':['is not the privacy notice in force; read it again']",
          errors: { privacy_version: ['is not the privacy notice in force; read it again'] },
        });
      }
      assert.notEqual(
        object(ok(await call('room', student.token, 'GET')).session, 'session').status,
        'exam_started',
      );
      assert.deepEqual(await storedAcceptance(student.id), { at: null, record: null });
    });

    it('starts as before for a page that sends no version (the terms alone are kept)', async () => {
      const terms = 'Older page.';
      const student = await createStudent(await createExam({ terms }));
      ok(await call('room', student.token, 'POST', 'start', { terms_accepted: true }));
      assert.deepEqual(await storedAcceptance(student.id), { at: clock.now(), record: sha256(terms) });
    });

    it("gives the phone's view the same panel as the room's", async () => {
      const student = await createStudent(await createExam({ web_cam: true, mobile_cam: true }));
      const room = ok(await call('room', student.token, 'GET'));
      const url = object(room.mobile, 'mobile').pairing_url as string;
      const phone = url.slice(url.lastIndexOf('/') + 1);
      const hello = ok(await call('mobile', phone, 'POST', 'hello', { device: 'Chrome on Android' }));
      assert.deepEqual(hello.privacy, room.privacy);
      assert.deepEqual(ok(await call('mobile', phone, 'GET')).privacy, room.privacy);
    });
  });
}
