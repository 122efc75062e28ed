import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import pino from 'pino';
import type { Actor } from '../../../src/domain/access.ts';
import { createMailService } from '../../../src/mail/mail.service.ts';
import { insertOutboxMessage } from '../../../src/domain/mail/outbox.repository.ts';
import { invalid, NOT_AUTHORIZED } from '../../helpers/answers.ts';
import type { HttpAnswer } from '../../helpers/http.ts';
import { DIALECTS, startTestServer, TestClock, type TestServer } from '../../helpers/server.ts';
import { mailJobs, runDueJobs, startSmtpServer, type TestSmtpServer } from '../../mail/support.ts';
import { consoleV3, signIn, staffUser } from '../staff/support.ts';

type Json = Record<string, unknown>;
type Member = Awaited<ReturnType<TestServer['user']>>;

const PUBLIC_URL = 'https://exams.example.org';
const HOUR = 60 * 60 * 1000;

/** The `messages` of a 200 list answer; fails the test otherwise. */
function messagesIn(answer: HttpAnswer): Json[] {
  assert.equal(answer.status, 200, answer.text);
  const list = (answer.json as { messages?: unknown }).messages;
  assert.ok(Array.isArray(list), answer.text);
  return list as Json[];
}

/** The `message` of a 200 answer; fails the test otherwise. */
function messageIn(answer: HttpAnswer): Json {
  assert.equal(answer.status, 200, answer.text);
  const message = (answer.json as { message?: unknown }).message;
  assert.ok(typeof message === 'object' && message !== null, answer.text);
  return message as Json;
}

const ids = (list: readonly Json[]) => list.map((item) => item.id);

for (const dialect of DIALECTS) {
  describe(`the outbox API [${dialect}]`, () => {
    let smtp: TestSmtpServer;
    let server: TestServer;
    let clock: TestClock;
    let instituteA: number;
    let instituteB: number;
    let superuser: Member;
    let adminA: Member;
    let adminB: Member;
    let teacherA: Member;
    let others: Member[];
    let sequence = 0;

    const actorOf = (member: Member, instituteId: number, role: Actor['role']): Actor => ({
      id: member.id,
      instituteId,
      role,
    });

    /** Emails one new student of a new exam of the institute. Returns the outbox id. */
    async function examEmail(instituteId: number, teacher: Member): Promise<number> {
      sequence += 1;
      const actor = actorOf(teacher, instituteId, 'teacher');
      const { exams, studentSessions, mail } = server.app.services;
      const exam = await exams.create(actor, {
        name: `Outbox exam ${sequence}`,
        type: 'classroom',
        duration_minutes: 30,
      });
      const session = await studentSessions.create(actor, exam.id, {
        name: 'Student',
        email: `student-${sequence}@example.org`,
      });
      await mail.sendExamEmails(actor, exam.id);
      const row = await server.app.database.db
        .selectFrom('outbox')
        .select('id')
        .where('student_session_id', '=', session.id)
        .executeTakeFirstOrThrow();
      return row.id;
    }

    /** Marks a message held, as a worker without SMTP_URL does. */
    async function hold(outboxId: number): Promise<void> {
      const withoutSmtp = createMailService({
        db: server.app.database.db,
        clock,
        config: { ...server.app.config, smtpUrl: undefined },
        logger: pino({ level: 'silent' }),
        jobs: server.app.services.jobs,
        examStaff: server.app.services.examStaff,
        liveEvents: server.app.services.liveEvents,
      });
      assert.equal(await withoutSmtp.deliver(outboxId, { last: false }), 'held');
    }

    /** Runs the due jobs with the SMTP server refusing for good: the pending messages end failed. */
    async function failPending(): Promise<void> {
      smtp.mode = 'reject';
      await runDueJobs(server, dialect, clock);
      smtp.mode = 'accept';
    }

    const status = async (id: number) =>
      (
        await server.app.database.db
          .selectFrom('outbox')
          .select('status')
          .where('id', '=', id)
          .executeTakeFirstOrThrow()
      ).status;

    before(async () => {
      smtp = await startSmtpServer();
      clock = new TestClock(Date.now());
      server = await startTestServer(dialect, { clock, env: { SMTP_URL: smtp.url, PUBLIC_URL } });
      instituteA = await server.institute();
      instituteB = await server.institute();
      superuser = await server.user(instituteA, 'superuser');
      adminA = await server.user(instituteA, 'administrator');
      adminB = await server.user(instituteB, 'administrator');
      teacherA = await server.user(instituteA, 'teacher');
      others = [
        teacherA,
        await server.user(instituteA, 'proctor'),
        await server.user(instituteA, 'reviewer'),
        await server.user(instituteA, 'auditor'),
      ];
    });
    after(async () => {
      await server.close();
      await smtp.close();
    });
    beforeEach(async () => {
      smtp.mode = 'accept';
      clock.current += HOUR;
      // Nothing left over from a previous test: every due delivery runs now.
      await runDueJobs(server, dialect, clock);
      smtp.messages.length = 0;
    });

    describe('GET /api/v3/outbox', () => {
      it("lists an administrator's institute's emails, newest first, without bodies, with pagination headers", async () => {
        const first = await examEmail(instituteA, teacherA);
        const second = await examEmail(instituteA, teacherA);
        const ofB = await examEmail(instituteB, await server.user(instituteB, 'teacher'));
        const answer = await adminA.client.v3('GET', '/outbox', { limit: 2 });
        const listed = messagesIn(answer);
        assert.deepEqual(ids(listed), [second, first]);
        assert.deepEqual(Object.keys(listed[0] ?? {}).sort(), [
          'attempts',
          'created_at',
          'id',
          'institute_id',
          'kind',
          'last_error',
          'next_attempt_at',
          'sent_at',
          'status',
          'student_session_id',
          'subject',
          'to',
        ]);
        assert.equal(listed[0]?.institute_id, instituteA);
        assert.equal(listed[0]?.kind, 'exam_link');
        assert.equal(listed[0]?.status, 'pending');
        assert.equal(answer.headers['x-pagination-page'], '1');
        assert.equal(answer.headers['x-pagination-limit'], '2');
        const all = messagesIn(await adminA.client.v3('GET', '/outbox'));
        assert.ok(!ids(all).includes(ofB), "B's email is not A's administrator's to see");
        assert.ok(all.every((item) => item.institute_id === instituteA));
        const page2 = messagesIn(await adminA.client.v3('GET', '/outbox', { limit: 1, page: 2 }));
        assert.deepEqual(ids(page2), [first]);
        // A superuser sees every institute's.
        const everything = ids(messagesIn(await superuser.client.v3('GET', '/outbox')));
        assert.ok(everything.includes(ofB) && everything.includes(second));
        assert.ok(ids(messagesIn(await adminB.client.v3('GET', '/outbox'))).includes(ofB));
      });

      it('narrows by status: held, failed, sent and queued (pending or sending)', async () => {
        const failed = await examEmail(instituteA, teacherA);
        await failPending();
        const held = await examEmail(instituteA, teacherA);
        await hold(held);
        const sent = await examEmail(instituteA, teacherA);
        await runDueJobs(server, dialect, clock);
        const queued = await examEmail(instituteA, teacherA);
        const byStatus = async (name: string) =>
          ids(messagesIn(await adminA.client.v3('GET', '/outbox', { status: name })));
        const expected: Record<string, number> = { failed, held, sent, queued };
        for (const [name, id] of Object.entries(expected)) {
          const found = await byStatus(name);
          assert.ok(found.includes(id), `${name} lists ${id}`);
          for (const [other, otherId] of Object.entries(expected)) {
            if (other !== name) assert.ok(!found.includes(otherId), `${name} does not list ${other}`);
          }
        }
        assert.ok((await byStatus('pending')).includes(queued));
        const failedRow = messagesIn(await adminA.client.v3('GET', '/outbox', { status: 'failed' })).find(
          (item) => item.id === failed,
        );
        assert.match(String(failedRow?.last_error), /No such mailbox/);
        assert.equal(failedRow?.attempts, 1);
        const sentRow = messagesIn(await adminA.client.v3('GET', '/outbox', { status: 'sent' })).find(
          (item) => item.id === sent,
        );
        assert.equal(typeof sentRow?.sent_at, 'string');
        // The usual filter works as well.
        const filtered = await adminA.client.v3('GET', '/outbox', {
          filter: JSON.stringify({ id: { eq: held } }),
        });
        assert.deepEqual(ids(messagesIn(filtered)), [held]);
      });

      it('answers 422 for an unknown status or filter field', async () => {
        const status = await adminA.client.v3('GET', '/outbox', { status: 'lost' });
        assert.equal(status.status, 422);
        assert.deepEqual(status.json, invalid('status', 'is not included in the list'));
        const filter = await adminA.client.v3('GET', '/outbox', {
          filter: JSON.stringify({ text_body: { like: 'token' } }),
        });
        assert.equal(filter.status, 422);
        assert.deepEqual(filter.json, invalid('filter', 'has an unknown field: text_body'));
      });

      it('refuses every other role with 403, and an unsigned request', async () => {
        for (const member of others) {
          const answer = await member.client.v3('GET', '/outbox');
          assert.equal(answer.status, 403);
          assert.deepEqual(answer.json, NOT_AUTHORIZED);
        }
        const unsigned = await adminA.client.v3('GET', '/outbox', {}, { unsigned: true });
        assert.equal(unsigned.status, 403);
        const wrong = await adminA.client.v3('GET', '/outbox', {}, { signature: '0'.repeat(64) });
        assert.equal(wrong.status, 403);
      });

      it('shows an email no institute could be found for to superusers only', async () => {
        const orphan = await insertOutboxMessage(server.app.database.db, {
          kind: 'exam_link',
          to: 'orphan@example.org',
          message: { subject: 'Orphan', text: 'Old mail', html: '<p>Old mail</p>' },
          studentSessionId: null,
          now: clock.now(),
        });
        assert.ok(ids(messagesIn(await superuser.client.v3('GET', '/outbox'))).includes(orphan));
        assert.ok(!ids(messagesIn(await adminA.client.v3('GET', '/outbox'))).includes(orphan));
        const shown = await adminA.client.v3('GET', '/outbox/:id', { id: orphan });
        assert.equal(shown.status, 404);
        assert.equal(
          messageIn(await superuser.client.v3('GET', '/outbox/:id', { id: orphan })).institute_id,
          null,
        );
      });
    });

    describe('GET /api/v3/outbox/:id', () => {
      it('shows the email with its text body (the room link of an exam email)', async () => {
        const id = await examEmail(instituteA, teacherA);
        const message = messageIn(await adminA.client.v3('GET', '/outbox/:id', { id }));
        assert.equal(message.id, id);
        assert.equal(message.kind, 'exam_link');
        assert.match(String(message.text), new RegExp(`${PUBLIC_URL}/room/[0-9a-f]{32}`));
        assert.equal('html' in message, false);
      });

      it('hides the token of an invitation link, which would set the recipient’s password', async () => {
        const invited = await server.user(instituteA, 'superuser');
        const answer = await superuser.client.v3('POST', '/institutes/:institute_id/users/:id/invite', {
          institute_id: instituteA,
          id: invited.id,
        });
        assert.equal(answer.status, 200, answer.text);
        // SMTP is configured: the email carries the link, the answer does not.
        const invitation = (answer.json as { invitation: Json }).invitation;
        assert.equal(invitation.invitation_url, null);
        assert.equal(invitation.user_id, invited.id);
        const row = await server.app.database.db
          .selectFrom('outbox')
          .select(['id', 'text_body', 'institute_id'])
          .where('kind', '=', 'staff_invitation')
          .orderBy('id', 'desc')
          .executeTakeFirstOrThrow();
        assert.equal(row.institute_id, instituteA);
        const token = /token=([A-Za-z0-9_-]+)/.exec(row.text_body)?.[1];
        assert.ok(token !== undefined);
        const shown = messageIn(await adminA.client.v3('GET', '/outbox/:id', { id: row.id }));
        assert.equal(shown.kind, 'staff_invitation');
        assert.ok(!String(shown.text).includes(token), 'the token is not shown');
        assert.match(String(shown.text), /accept-invitation\?token=\[hidden\]/);
        // The invitee's own copy has it.
        await runDueJobs(server, dialect, clock);
        assert.ok(smtp.messages.some((mail) => mail.text?.includes(token) === true));
      });

      it("answers another institute's email, for its administrator, exactly as a missing one (404)", async () => {
        const id = await examEmail(instituteA, teacherA);
        const hidden = await adminB.client.v3('GET', '/outbox/:id', { id });
        const missing = await adminB.client.v3('GET', '/outbox/:id', { id: 987654321 });
        assert.equal(hidden.status, 404);
        assert.deepEqual(hidden.json, { error: `Couldn't find Email with 'id'=${id}` });
        assert.deepEqual(missing.json, { error: "Couldn't find Email with 'id'=987654321" });
        for (const member of others) {
          const refused = await member.client.v3('GET', '/outbox/:id', { id });
          assert.equal(refused.status, 403);
          assert.deepEqual(refused.json, NOT_AUTHORIZED);
        }
      });
    });

    describe('POST /api/v3/outbox/:id/redeliver', () => {
      it('queues a failed email again; the worker sends it through the SMTP server', async () => {
        const id = await examEmail(instituteA, teacherA);
        await failPending();
        assert.equal(await status(id), 'failed');
        assert.equal(smtp.messages.length, 0);
        const jobsBefore = (await mailJobs(server)).length;
        const answer = await adminA.client.v3('POST', '/outbox/:id/redeliver', { id });
        const message = messageIn(answer);
        assert.equal(message.status, 'pending');
        assert.equal(message.last_error, null);
        assert.equal((await mailJobs(server)).length, jobsBefore + 1);
        assert.equal(await runDueJobs(server, dialect, clock), 1);
        assert.equal(await status(id), 'sent');
        assert.equal(smtp.messages.length, 1);
        assert.equal(smtp.messages[0]?.messageId, `<invigil-outbox-${id}@exams.example.org>`);
        // Recorded like every staff write.
        const event = await server.app.database.db
          .selectFrom('audit_events')
          .selectAll()
          .where('user_id', '=', adminA.id)
          .where('action', '=', 'POST /api/v3/outbox/:id/redeliver')
          .orderBy('id', 'desc')
          .executeTakeFirstOrThrow();
        assert.equal(event.target_type, 'outbox');
        assert.equal(Number(event.target_id), id);
      });

      it('queues a held email again (SMTP configured since); the worker sends it', async () => {
        const id = await examEmail(instituteA, teacherA);
        await hold(id);
        assert.equal(await runDueJobs(server, dialect, clock), 1, 'its first job finds it held');
        assert.equal(await status(id), 'held');
        assert.equal(smtp.messages.length, 0);
        messageIn(await superuser.client.v3('POST', '/outbox/:id/redeliver', { id }));
        await runDueJobs(server, dialect, clock);
        assert.equal(await status(id), 'sent');
        assert.equal(smtp.messages.length, 1);
      });

      it('answers 409 for an email that is sent or on its way, and queues nothing', async () => {
        const queued = await examEmail(instituteA, teacherA);
        const jobs = (await mailJobs(server)).length;
        const pending = await adminA.client.v3('POST', '/outbox/:id/redeliver', { id: queued });
        assert.equal(pending.status, 409);
        assert.deepEqual(pending.json, {
          error: `Only a held or failed email can be delivered again; email ${queued} is pending`,
        });
        await runDueJobs(server, dialect, clock);
        const sent = await adminA.client.v3('POST', '/outbox/:id/redeliver', { id: queued });
        assert.equal(sent.status, 409);
        assert.equal((await mailJobs(server)).length, jobs);
        assert.equal(smtp.messages.length, 1, 'sent once');
      });

      it("refuses other roles (403) and hides another institute's email (404)", async () => {
        const id = await examEmail(instituteA, teacherA);
        await failPending();
        for (const member of others) {
          const answer = await member.client.v3('POST', '/outbox/:id/redeliver', { id });
          assert.equal(answer.status, 403);
          assert.deepEqual(answer.json, NOT_AUTHORIZED);
        }
        const hidden = await adminB.client.v3('POST', '/outbox/:id/redeliver', { id });
        assert.equal(hidden.status, 404);
        assert.deepEqual(hidden.json, { error: `Couldn't find Email with 'id'=${id}` });
        assert.equal(await status(id), 'failed');
      });

      it('works from the console with the cookie and X-CSRF-Token, and refuses the cookie without it', async () => {
        const admin = await staffUser(server, instituteA, 'administrator');
        const browser = await signIn(server, admin.email);
        const id = await examEmail(instituteA, teacherA);
        await failPending();
        const listed = await consoleV3(server, browser, 'GET', '/outbox?status=failed');
        assert.ok(ids(messagesIn(listed)).includes(id));
        const refused = await consoleV3(server, browser, 'POST', `/outbox/${id}/redeliver`);
        assert.equal(refused.status, 403);
        assert.deepEqual(refused.json, NOT_AUTHORIZED);
        assert.equal(await status(id), 'failed');
        const accepted = await consoleV3(server, browser, 'POST', `/outbox/${id}/redeliver`, {
          csrf: browser.csrf,
        });
        assert.equal(messageIn(accepted).status, 'pending');
        await runDueJobs(server, dialect, clock);
        assert.equal(await status(id), 'sent');
      });
    });

    it("an institute's deletion takes its staff emails with it", async () => {
      const doomed = await server.institute();
      const member = await server.user(doomed, 'teacher');
      await server.app.services.staffAuth.invite(member.id);
      const before = await server.app.database.db
        .selectFrom('outbox')
        .select('id')
        .where('institute_id', '=', doomed)
        .execute();
      assert.equal(before.length, 1);
      const answer = await superuser.client.v3('DELETE', '/institutes/:id', { id: doomed });
      assert.equal(answer.status, 200, answer.text);
      const after = await server.app.database.db
        .selectFrom('outbox')
        .select('id')
        .where('id', '=', before[0]?.id ?? 0)
        .execute();
      assert.deepEqual(after, []);
    });
  });
}
