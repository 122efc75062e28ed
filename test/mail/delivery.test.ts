import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { Actor } from '../../src/domain/access.ts';
import { createMailService } from '../../src/mail/mail.service.ts';
import { MAIL_DELIVER_JOB, MAIL_MAX_ATTEMPTS } from '../../src/domain/mail/outbox.ts';
import { DIALECTS, startTestServer, TestClock, type TestServer } from '../helpers/server.ts';
import {
  capturingLogger,
  freePort,
  mailJobs,
  runDueJobs,
  startSmtpServer,
  type TestSmtpServer,
} from './support.ts';

const PUBLIC_URL = 'https://exams.example.org';
const HOUR = 60 * 60 * 1000;

/** An institute's teacher, and the sessions it emails through the service (not HTTP: faster). */
interface Fixture {
  readonly actor: Actor;
  /** Adds a student to a new exam and sends the exam emails. Returns the student's outbox row id and token. */
  emailOne(email: string): Promise<{ outboxId: number; token: string }>;
}

async function fixture(server: TestServer): Promise<Fixture> {
  const instituteId = await server.institute();
  const user = await server.user(instituteId, 'teacher');
  const actor: Actor = { id: user.id, instituteId, role: 'teacher' };
  const { exams, studentSessions, mail } = server.app.services;
  return {
    actor,
    async emailOne(email) {
      const exam = await exams.create(actor, {
        name: 'Delivery exam',
        type: 'classroom',
        duration_minutes: 30,
      });
      const session = await studentSessions.create(actor, exam.id, { name: 'Student', email });
      const emailed = await mail.sendExamEmails(actor, exam.id);
      assert.deepEqual(
        emailed.map((each) => each.id),
        [session.id],
      );
      const row = await server.app.database.db
        .selectFrom('outbox')
        .select('id')
        .where('student_session_id', '=', session.id)
        .executeTakeFirstOrThrow();
      return { outboxId: row.id, token: session.token };
    },
  };
}

function outboxRow(server: TestServer, id: number) {
  return server.app.database.db
    .selectFrom('outbox')
    .selectAll()
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
}

async function jobOf(server: TestServer, outboxId: number) {
  const jobs = (await mailJobs(server)).filter((job) => {
    const payload = JSON.parse(job.payload) as { outboxId?: unknown };
    return payload.outboxId === outboxId;
  });
  assert.equal(jobs.length, 1, `one delivery job for outbox message ${outboxId}`);
  const [job] = jobs;
  if (job === undefined) throw new Error('unreachable');
  return job;
}

for (const dialect of DIALECTS) {
  describe(`mail delivery over SMTP [${dialect}]`, () => {
    let smtp: TestSmtpServer;
    let server: TestServer;
    let clock: TestClock;
    let world: Fixture;
    let sequence = 0;
    const address = (label: string) => {
      sequence += 1;
      return `${label}-${sequence}@example.org`;
    };

    before(async () => {
      smtp = await startSmtpServer();
      clock = new TestClock(Date.now());
      server = await startTestServer(dialect, {
        clock,
        env: { SMTP_URL: smtp.url, PUBLIC_URL, MAIL_FROM: 'Exams <exams@example.org>' },
      });
      world = await fixture(server);
    });

    after(async () => {
      await server.close();
      await smtp.close();
    });

    beforeEach(async () => {
      smtp.mode = 'accept';
      clock.current += HOUR;
      await runDueJobs(server, dialect, clock);
      smtp.messages.length = 0;
    });

    it('sends a message once, from MAIL_FROM, with a stable Message-ID, and marks it sent', async () => {
      const to = address('once');
      const { outboxId } = await world.emailOne(to);
      assert.equal((await outboxRow(server, outboxId)).status, 'pending');
      assert.equal(await runDueJobs(server, dialect, clock), 1);
      assert.equal(smtp.messages.length, 1);
      const [message] = smtp.messages;
      assert.equal(message?.from, 'Exams <exams@example.org>');
      assert.equal(message?.envelopeFrom, 'exams@example.org');
      assert.deepEqual(message?.envelopeTo, [to]);
      assert.equal(message?.messageId, `<invigil-outbox-${outboxId}@exams.example.org>`);
      const row = await outboxRow(server, outboxId);
      assert.equal(row.status, 'sent');
      assert.equal(row.sent_at, clock.now());
      assert.equal(row.attempts, 1);
      assert.equal(row.last_error, null);
      assert.equal((await jobOf(server, outboxId)).status, 'succeeded');
    });

    it('sends nothing when a delivery job runs again after success', async () => {
      const { outboxId } = await world.emailOne(address('retried'));
      await runDueJobs(server, dialect, clock);
      assert.equal(smtp.messages.length, 1);
      // As a retry would: the same payload, run again.
      await server.app.services.jobs.enqueue(server.app.database.db, {
        kind: MAIL_DELIVER_JOB,
        payload: { outboxId },
      });
      assert.equal(await runDueJobs(server, dialect, clock), 1);
      assert.equal(smtp.messages.length, 1, 'not sent twice');
      const row = await outboxRow(server, outboxId);
      assert.equal(row.status, 'sent');
      assert.equal(row.attempts, 1);
    });

    it('retries with backoff while the server refuses for now (451), then delivers once', async () => {
      const { outboxId } = await world.emailOne(address('later'));
      smtp.mode = 'tempfail';
      const failedAt = clock.now();
      assert.equal(await runDueJobs(server, dialect, clock), 1);
      assert.equal(smtp.messages.length, 0);
      let row = await outboxRow(server, outboxId);
      assert.equal(row.status, 'pending');
      assert.equal(row.attempts, 1);
      assert.match(String(row.last_error), /451/);
      let job = await jobOf(server, outboxId);
      assert.equal(job.status, 'queued');
      assert.equal(job.attempts, 1);
      assert.ok(job.run_at >= failedAt + 1000 && job.run_at <= failedAt + 2000, 'first backoff: 1-2 s');
      assert.match(String(job.last_error), /could not deliver outbox message/);

      assert.equal(await runDueJobs(server, dialect, clock), 0, 'nothing is due during the backoff');
      clock.current = job.run_at;
      assert.equal(await runDueJobs(server, dialect, clock), 1, 'the second attempt fails too');
      job = await jobOf(server, outboxId);
      assert.equal(job.attempts, 2);
      assert.ok(job.run_at - clock.now() >= 2000, 'the backoff grows');

      smtp.mode = 'accept';
      clock.current = job.run_at;
      assert.equal(await runDueJobs(server, dialect, clock), 1);
      assert.equal(smtp.messages.length, 1);
      row = await outboxRow(server, outboxId);
      assert.equal(row.status, 'sent');
      assert.equal(row.attempts, 3);
      assert.equal(row.last_error, null);
      assert.equal((await jobOf(server, outboxId)).status, 'succeeded');
    });

    it('marks a message refused for good (550) failed without retrying; redeliver() sends it later', async () => {
      const { outboxId } = await world.emailOne(address('refused'));
      smtp.mode = 'reject';
      await runDueJobs(server, dialect, clock);
      let row = await outboxRow(server, outboxId);
      assert.equal(row.status, 'failed');
      assert.match(String(row.last_error), /550/);
      assert.equal((await jobOf(server, outboxId)).status, 'succeeded', 'nothing left to retry');
      clock.current += HOUR;
      assert.equal(await runDueJobs(server, dialect, clock), 0);

      smtp.mode = 'accept';
      assert.ok((await server.app.services.mail.redeliver()) >= 1);
      await runDueJobs(server, dialect, clock);
      assert.equal(smtp.messages.length, 1);
      row = await outboxRow(server, outboxId);
      assert.equal(row.status, 'sent');
      assert.equal(row.last_error, null);
    });

    it('marks the message failed when the last attempt fails', async () => {
      const { outboxId } = await world.emailOne(address('exhausted'));
      const job = await jobOf(server, outboxId);
      assert.equal(job.max_attempts, MAIL_MAX_ATTEMPTS);
      await server.app.database.db
        .updateTable('jobs')
        .set({ attempts: MAIL_MAX_ATTEMPTS - 1 })
        .where('id', '=', job.id)
        .execute();
      smtp.mode = 'tempfail';
      await runDueJobs(server, dialect, clock);
      assert.equal((await jobOf(server, outboxId)).status, 'failed');
      const row = await outboxRow(server, outboxId);
      assert.equal(row.status, 'failed');
      assert.match(String(row.last_error), /451/);
    });

    it('does not send a message another attempt is sending; takes it over once that claim has run out', async () => {
      const { outboxId } = await world.emailOne(address('claimed'));
      // Another attempt claimed it a moment ago (and may be talking to the server right now).
      await server.app.database.db
        .updateTable('outbox')
        .set({ status: 'sending', attempts: 1, next_attempt_at: clock.now() + 2 * 60 * 1000 })
        .where('id', '=', outboxId)
        .execute();
      assert.equal(await runDueJobs(server, dialect, clock), 1);
      assert.equal(smtp.messages.length, 0, 'not sent beside the other attempt');
      const job = await jobOf(server, outboxId);
      assert.equal(job.status, 'queued');
      assert.match(String(job.last_error), /being sent by another attempt/);

      // That attempt never finished (its worker died): once its claim is over, the message goes out.
      clock.current += 3 * 60 * 1000;
      await runDueJobs(server, dialect, clock);
      assert.equal(smtp.messages.length, 1);
      const row = await outboxRow(server, outboxId);
      assert.equal(row.status, 'sent');
      assert.equal(row.attempts, 2);
    });

    it('finishes quietly when the message is gone (e.g. with its institute)', async () => {
      const { outboxId } = await world.emailOne(address('gone'));
      await server.app.database.db.deleteFrom('outbox').where('id', '=', outboxId).execute();
      assert.equal(await runDueJobs(server, dialect, clock), 1);
      assert.equal(smtp.messages.length, 0);
      assert.equal((await jobOf(server, outboxId)).status, 'succeeded');
    });

    it('logs the recipient and subject of a sent message, never its body or room link', async () => {
      const to = address('logged');
      const { outboxId, token } = await world.emailOne(to);
      const { logger, lines } = capturingLogger();
      const mail = createMailService({
        db: server.app.database.db,
        clock,
        config: server.app.config,
        logger,
        jobs: server.app.services.jobs,
        examStaff: server.app.services.examStaff,
        liveEvents: server.app.services.liveEvents,
      });
      assert.equal(await mail.deliver(outboxId, { last: false }), 'sent');
      assert.equal(await mail.deliver(outboxId, { last: false }), 'already_sent');
      assert.equal(smtp.messages.length, 1);
      const sent = lines.filter((line) => line.msg === 'mail sent');
      assert.equal(sent.length, 1);
      assert.equal(sent[0]?.level, 30, 'info');
      assert.equal(sent[0]?.to, to);
      assert.equal(sent[0]?.subject, 'Your exam link: Delivery exam');
      assert.equal(sent[0]?.outboxId, outboxId);
      const everything = JSON.stringify(lines);
      assert.ok(!everything.includes(token), 'the room token is never logged');
      assert.ok(!everything.includes('/room/'), 'the room link is never logged');
    });

    it('delivers once the server comes up when it was not running at first', async () => {
      const port = await freePort();
      const laterClock = new TestClock(Date.now());
      const later = await startTestServer(dialect, {
        clock: laterClock,
        env: { SMTP_URL: `smtp://127.0.0.1:${port}`, PUBLIC_URL },
      });
      let lateSmtp: TestSmtpServer | undefined;
      try {
        const { outboxId, token } = await (await fixture(later)).emailOne(address('down'));
        assert.equal(await runDueJobs(later, dialect, laterClock), 1);
        let row = await outboxRow(later, outboxId);
        assert.equal(row.status, 'pending');
        assert.match(String(row.last_error), /ECONNREFUSED|connect/i);
        const job = await jobOf(later, outboxId);
        assert.equal(job.status, 'queued');

        lateSmtp = await startSmtpServer(port);
        laterClock.current = job.run_at;
        assert.equal(await runDueJobs(later, dialect, laterClock), 1);
        assert.equal(lateSmtp.messages.length, 1);
        assert.ok(lateSmtp.messages[0]?.text?.includes(`${PUBLIC_URL}/room/${token}`));
        row = await outboxRow(later, outboxId);
        assert.equal(row.status, 'sent');
        assert.equal(row.attempts, 2);
      } finally {
        await later.close();
        await lateSmtp?.close();
      }
    });
  });
}
