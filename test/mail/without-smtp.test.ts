import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Actor } from '../../src/domain/access.ts';
import { createMailDeliveryJob } from '../../src/jobs/mail-delivery.job.ts';
import { createWorker } from '../../src/jobs/worker.ts';
import { createMailService } from '../../src/mail/mail.service.ts';
import { DIALECTS, startTestServer, TestClock, type TestServer } from '../helpers/server.ts';
import { capturingLogger, mailJobs, outboxRows, runDueJobs, startSmtpServer } from './support.ts';

const PUBLIC_URL = 'https://exams.example.org';

for (const dialect of DIALECTS) {
  describe(`mail without SMTP_URL [${dialect}]`, () => {
    let server: TestServer;
    let clock: TestClock;
    let actor: Actor;

    before(async () => {
      clock = new TestClock(Date.now());
      server = await startTestServer(dialect, { clock, env: { PUBLIC_URL } });
      const instituteId = await server.institute();
      const user = await server.user(instituteId, 'teacher');
      actor = { id: user.id, instituteId, role: 'teacher' };
    });

    after(async () => {
      await server.close();
    });

    it('keeps every message in the outbox as held, whole, and logs its recipient and subject only', async () => {
      const { exams, studentSessions, mail } = server.app.services;
      const exam = await exams.create(actor, {
        name: 'Offline exam',
        type: 'classroom',
        duration_minutes: 20,
      });
      const first = await studentSessions.create(actor, exam.id, { name: 'Kim', email: 'kim@example.org' });
      const second = await studentSessions.create(actor, exam.id, { name: 'Lou', email: 'lou@example.org' });
      assert.equal((await mail.sendExamEmails(actor, exam.id)).length, 2);
      await mail.endExam(actor, second.id);

      // The job of the first message runs through a service with a capturing logger; the rest through
      // the server's own handlers. Both hold.
      const [firstRow] = await outboxRows(server);
      if (firstRow === undefined) throw new Error('no outbox row');
      const { logger, lines } = capturingLogger();
      const logged = createMailService({
        db: server.app.database.db,
        clock,
        config: server.app.config,
        logger,
        jobs: server.app.services.jobs,
        examStaff: server.app.services.examStaff,
        liveEvents: server.app.services.liveEvents,
      });
      assert.equal(await logged.deliver(firstRow.id, { last: false }), 'held');
      assert.equal(await logged.deliver(firstRow.id, { last: false }), 'held', 'held stays held');
      assert.equal(await runDueJobs(server, dialect, clock), 3);

      const rows = await outboxRows(server);
      assert.deepEqual(
        rows.map((row) => [row.kind, row.to_address, row.status, row.sent_at]),
        [
          ['exam_link', 'kim@example.org', 'held', null],
          ['exam_link', 'lou@example.org', 'held', null],
          ['exam_finished', 'lou@example.org', 'held', null],
        ],
      );
      const link = `${PUBLIC_URL}/room/${first.token}`;
      assert.equal(rows[0]?.subject, 'Your exam link: Offline exam');
      assert.ok(rows[0]?.text_body.includes(link), 'the whole message is kept');
      assert.ok(rows[0]?.html_body.includes(`href="${link}"`));
      assert.deepEqual(
        (await mailJobs(server)).map((job) => job.status),
        ['succeeded', 'succeeded', 'succeeded'],
      );

      const heldLines = lines.filter((line) => line.msg === 'mail held in the outbox: SMTP_URL is not set');
      assert.equal(heldLines.length, 1);
      assert.equal(heldLines[0]?.level, 30, 'info');
      assert.equal(heldLines[0]?.to, 'kim@example.org');
      assert.equal(heldLines[0]?.subject, 'Your exam link: Offline exam');
      assert.ok(!JSON.stringify(lines).includes(first.token), 'the room link is not logged');
    });

    it('loses nothing: once SMTP works, redeliver() sends every held message exactly once', async () => {
      const smtp = await startSmtpServer();
      try {
        const config = { ...server.app.config, smtpUrl: smtp.url };
        const { logger } = capturingLogger();
        const mail = createMailService({
          db: server.app.database.db,
          clock,
          config,
          logger,
          jobs: server.app.services.jobs,
          examStaff: server.app.services.examStaff,
          liveEvents: server.app.services.liveEvents,
        });
        const services = { ...server.app.services, mail };
        const worker = createWorker({
          db: server.app.database.db,
          dialect,
          clock,
          logger,
          handlers: [createMailDeliveryJob({ config, logger, db: server.app.database.db, clock, services })],
        });
        assert.equal(await mail.redeliver(), 3);
        assert.equal(await mail.redeliver(), 0, 'a second call finds nothing held');
        while (await worker.runOnce()) {
          // run every due delivery
        }
        assert.deepEqual(
          smtp.messages.map((message) => [message.envelopeTo.join(), message.subject]),
          [
            ['kim@example.org', 'Your exam link: Offline exam'],
            ['lou@example.org', 'Your exam link: Offline exam'],
            ['lou@example.org', 'Your exam has ended: Offline exam'],
          ],
        );
        assert.deepEqual(
          (await outboxRows(server)).map((row) => [row.status, row.sent_at]),
          [
            ['sent', clock.now()],
            ['sent', clock.now()],
            ['sent', clock.now()],
          ],
        );
      } finally {
        await smtp.close();
      }
    });
  });
}
