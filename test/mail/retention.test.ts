import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Actor } from '../../src/domain/access.ts';
import { purgeFinishedHistory } from '../../src/jobs/retention.ts';
import { deleteSentOutboxMessages } from '../../src/domain/mail/outbox.repository.ts';
import type { OutboxStatus } from '../../src/domain/mail/outbox.ts';
import { enqueueDelivery } from '../../src/domain/mail/outbox-writer.ts';
import { DIALECTS, startTestServer, TestClock, type TestServer } from '../helpers/server.ts';
import { mailJobs, outboxRows, runDueJobs, startSmtpServer, type TestSmtpServer } from './support.ts';

const DAY = 24 * 60 * 60 * 1000;
const HOUR = 60 * 60 * 1000;
const RETENTION_DAYS = 30;

for (const dialect of DIALECTS) {
  describe(`retention of sent mail [${dialect}]`, () => {
    let smtp: TestSmtpServer;
    let server: TestServer;
    let clock: TestClock;
    let actor: Actor;

    before(async () => {
      smtp = await startSmtpServer();
      clock = new TestClock(1_800_000_000_000);
      server = await startTestServer(dialect, { clock, env: { SMTP_URL: smtp.url } });
      const instituteId = await server.institute();
      const teacher = await server.user(instituteId, 'teacher');
      actor = { id: teacher.id, instituteId, role: 'teacher' };
    });
    after(async () => {
      await server.close();
      await smtp.close();
    });

    /** Emails one new student through the service and delivers it. Returns its outbox id. */
    async function sendOne(email: string): Promise<number> {
      const { exams, studentSessions, mail } = server.app.services;
      const exam = await exams.create(actor, { name: 'Kept exam', type: 'classroom', duration_minutes: 30 });
      const session = await studentSessions.create(actor, exam.id, { name: 'Student', email });
      await mail.sendExamEmails(actor, exam.id);
      await runDueJobs(server, dialect, clock);
      const row = await server.app.database.db
        .selectFrom('outbox')
        .select(['id', 'status'])
        .where('student_session_id', '=', session.id)
        .executeTakeFirstOrThrow();
      assert.equal(row.status, 'sent');
      return row.id;
    }

    /** Writes an outbox row as delivery leaves it in `status`, created at `at`. Returns its id. */
    async function message(status: OutboxStatus, at: number): Promise<number> {
      const row = await server.app.database.db
        .insertInto('outbox')
        .values({
          kind: 'exam_link',
          to_address: `${status}@example.org`,
          subject: 'Your exam',
          text_body: 'text',
          html_body: '<p>html</p>',
          status,
          attempts: status === 'pending' || status === 'held' ? 0 : 1,
          next_attempt_at: at,
          last_error: status === 'failed' ? '550 no such user' : null,
          student_session_id: null,
          created_at: at,
          sent_at: status === 'sent' ? at : null,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      return row.id;
    }

    function purge(batchSize?: number) {
      const { db, dialect: name } = server.app.database;
      return purgeFinishedHistory(db, name, {
        now: clock.now(),
        retentionDays: RETENTION_DAYS,
        ...(batchSize === undefined ? {} : { batchSize }),
      });
    }

    async function remaining(ids: readonly number[]): Promise<number[]> {
      return (await outboxRows(server)).map((row) => row.id).filter((id) => ids.includes(id));
    }

    it('deletes mail sent more than RETENTION_DAYS ago with its job, and keeps the rest for redelivery', async () => {
      const delivered = await sendOne('delivered@example.org');
      const longAgo = clock.now();
      const undelivered = [
        await message('held', longAgo),
        await message('failed', longAgo),
        await message('pending', longAgo),
        await message('sending', longAgo),
      ];
      clock.current += RETENTION_DAYS * DAY;
      // Exactly RETENTION_DAYS old is not "more than"; sent yesterday is recent.
      const atCutoff = await message('sent', longAgo + 1);
      const recent = await message('sent', clock.now() - DAY);
      const all = [delivered, ...undelivered, atCutoff, recent];
      clock.current += 1;

      const removed = await purge();
      assert.deepEqual(removed, { jobs: 1, mail: 1 }, 'the sent message and its succeeded job');
      assert.deepEqual(await remaining(all), [...undelivered, atCutoff, recent]);
      const jobs = await mailJobs(server);
      assert.equal(
        jobs.some((job) => job.payload === JSON.stringify({ outboxId: delivered })),
        false,
      );

      // What `invigil mail redeliver` needs is all still there.
      assert.equal(await server.app.services.mail.redeliver(), 2);
      smtp.messages.length = 0;
      await runDueJobs(server, dialect, clock);
      assert.deepEqual(smtp.messages.map((each) => each.envelopeTo).sort(), [
        ['failed@example.org'],
        ['held@example.org'],
      ]);
    });

    it('keeps an old sent message while a delivery job for it is still queued or running', async () => {
      const { db, dialect: name } = server.app.database;
      const old = await message('sent', clock.now() - (RETENTION_DAYS + 5) * DAY);
      const unrelated = await message('sent', clock.now() - (RETENTION_DAYS + 5) * DAY);
      await enqueueDelivery(server.app.services.jobs, db, old);
      const before = clock.now() - RETENTION_DAYS * DAY;

      assert.equal(await deleteSentOutboxMessages(db, name, { before, limit: 10 }), 1);
      assert.deepEqual(await remaining([old, unrelated]), [old]);

      // The job finds it sent and succeeds without sending; once that is past retention, both go.
      smtp.messages.length = 0;
      await runDueJobs(server, dialect, clock);
      assert.equal(smtp.messages.length, 0);
      clock.current += (RETENTION_DAYS + 1) * DAY;
      await purge();
      assert.deepEqual(await remaining([old]), []);
      const jobs = await mailJobs(server);
      assert.equal(
        jobs.some((job) => job.payload === JSON.stringify({ outboxId: old })),
        false,
      );
    });

    it('deletes sent mail in batches of batchSize, oldest first', async () => {
      const { db, dialect: name } = server.app.database;
      // Whatever earlier tests left behind goes first, so the counts below are this test's own.
      await purge();
      const sentAt = clock.now() - (RETENTION_DAYS + 1) * DAY;
      const old: number[] = [];
      for (let index = 0; index < 5; index += 1) old.push(await message('sent', sentAt + index * HOUR));
      const held = await message('held', sentAt);
      const before = clock.now() - RETENTION_DAYS * DAY;

      assert.equal(await deleteSentOutboxMessages(db, name, { before, limit: 2 }), 2);
      assert.deepEqual(await remaining([...old, held]), [...old.slice(2), held]);
      assert.deepEqual(await purge(2), { jobs: 0, mail: 3 });
      assert.deepEqual(await remaining([...old, held]), [held]);
    });
  });
}
