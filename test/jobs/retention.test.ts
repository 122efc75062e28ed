import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { Actor } from '../../src/domain/access.ts';
import { deleteFinishedJobs } from '../../src/jobs/jobs.repository.ts';
import { purgeFinishedHistory, retentionCutoff } from '../../src/jobs/retention.ts';
import { DIALECTS, startTestServer, TestClock, type TestServer } from '../helpers/server.ts';
import { runDueJobs } from '../mail/support.ts';

const DAY = 24 * 60 * 60 * 1000;
const HOUR = 60 * 60 * 1000;
const NOW = 1_800_000_000_000;
const RETENTION_DAYS = 30;
const CUTOFF = NOW - RETENTION_DAYS * DAY;

interface JobRow {
  readonly status: 'queued' | 'running' | 'succeeded' | 'failed';
  readonly finishedAt?: number;
  readonly attempts?: number;
  readonly lockedUntil?: number;
  readonly at?: number;
}

describe('retentionCutoff', () => {
  it('is RETENTION_DAYS whole days before now', () => {
    assert.equal(retentionCutoff(NOW, 30), NOW - 30 * DAY);
    assert.equal(retentionCutoff(NOW, 1), NOW - DAY);
  });
});

for (const dialect of DIALECTS) {
  describe(`retention of finished jobs [${dialect}]`, () => {
    let server: TestServer;
    let clock: TestClock;

    before(async () => {
      clock = new TestClock(NOW);
      server = await startTestServer(dialect, { clock });
    });
    after(async () => {
      await server.close();
    });
    beforeEach(async () => {
      clock.current = NOW;
      await server.app.database.db.deleteFrom('jobs').execute();
    });

    /** Writes a job row as the queue leaves it in `status`. Returns its id. */
    async function job(row: JobRow): Promise<number> {
      const at = row.at ?? CUTOFF - 100 * DAY;
      const running = row.status === 'running';
      const inserted = await server.app.database.db
        .insertInto('jobs')
        .values({
          kind: 'history',
          payload: '{}',
          status: row.status,
          dedupe_key: null,
          attempts: row.attempts ?? 1,
          max_attempts: 5,
          run_at: at,
          locked_by: running ? 'gone:1:abc' : null,
          locked_until: running ? (row.lockedUntil ?? at + 60_000) : null,
          last_error: row.status === 'failed' || (row.attempts ?? 1) > 1 ? 'boom' : null,
          progress: null,
          created_at: at,
          updated_at: row.finishedAt ?? at,
          finished_at: row.finishedAt ?? null,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      return inserted.id;
    }

    async function remainingJobs(): Promise<number[]> {
      const rows = await server.app.database.db.selectFrom('jobs').select('id').orderBy('id').execute();
      return rows.map((row) => row.id);
    }

    function purge(options: { batchSize?: number; signal?: AbortSignal } = {}) {
      const { db, dialect: name } = server.app.database;
      return purgeFinishedHistory(db, name, { now: NOW, retentionDays: RETENTION_DAYS, ...options });
    }

    it('deletes jobs that finished more than RETENTION_DAYS ago and keeps recent and unfinished ones', async () => {
      await job({ status: 'succeeded', finishedAt: CUTOFF - 1 });
      await job({ status: 'failed', attempts: 5, finishedAt: CUTOFF - 10 * DAY });
      const kept = [
        await job({ status: 'succeeded', finishedAt: CUTOFF }),
        await job({ status: 'succeeded', finishedAt: NOW - DAY }),
        await job({ status: 'failed', attempts: 5, finishedAt: NOW - 29 * DAY }),
        // Enqueued long ago and never run, or still waiting out a retry's backoff.
        await job({ status: 'queued' }),
        await job({ status: 'queued', attempts: 3 }),
        // A dead worker's job: claimable again, or failed by the next idle worker, never purged.
        await job({ status: 'running' }),
        await job({ status: 'running', attempts: 5 }),
      ];

      assert.deepEqual(await purge(), { jobs: 2, mail: 0 });
      assert.deepEqual(await remainingJobs(), kept);
      assert.deepEqual(await purge(), { jobs: 0, mail: 0 }, 'a second sweep finds nothing more');
    });

    it('deletes in batches of batchSize, oldest first, until a batch comes back short', async () => {
      const old: number[] = [];
      for (let index = 0; index < 7; index += 1) {
        old.push(await job({ status: 'succeeded', finishedAt: CUTOFF - (index + 1) * HOUR }));
      }
      const recent = [
        await job({ status: 'succeeded', finishedAt: NOW }),
        await job({ status: 'failed', finishedAt: NOW, attempts: 5 }),
      ];
      const { db, dialect: name } = server.app.database;

      // One batch is one bounded statement.
      assert.equal(await deleteFinishedJobs(db, name, { before: CUTOFF, limit: 3 }), 3);
      assert.deepEqual(await remainingJobs(), [...old.slice(3), ...recent]);

      // A stopped sweep deletes nothing more.
      const stopped = new AbortController();
      stopped.abort();
      assert.deepEqual(await purge({ batchSize: 2, signal: stopped.signal }), { jobs: 0, mail: 0 });
      assert.equal((await remainingJobs()).length, 6);

      assert.deepEqual(await purge({ batchSize: 2 }), { jobs: 4, mail: 0 });
      assert.deepEqual(await remainingJobs(), recent);
      await assert.rejects(purge({ batchSize: 0 }), TypeError);
    });

    it('leaves the zip status and download as they were when it deletes an export’s finished job', async () => {
      const instituteId = await server.institute();
      const teacher = await server.user(instituteId, 'teacher');
      const actor: Actor = { id: teacher.id, instituteId, role: 'teacher' };
      const { exams, studentSessions, files, examExports } = server.app.services;
      const { db } = server.app.database;
      const exam = async (name: string) =>
        (await exams.create(actor, { name, type: 'classroom', duration_minutes: 30 })).id;

      // Built: an exam whose one student handed in a document.
      const built = await exam('Built');
      const builtSession = await studentSessions.create(actor, built, { name: 'A', email: 'a@example.org' });
      const document = await files.keepStream(Readable.from([Buffer.from('answers')]), {
        instituteId,
        originalName: 'answers.txt',
        contentType: 'text/plain',
      });
      await db
        .updateTable('student_sessions')
        .set({ exam_document_file_id: document.id })
        .where('id', '=', builtSession.id)
        .execute();
      // Failed for good: its student's document is missing from storage, on every attempt.
      const broken = await exam('Broken');
      const brokenSession = await studentSessions.create(actor, broken, {
        name: 'B',
        email: 'b@example.org',
      });
      const lost = await files.keepStream(Readable.from([Buffer.from('lost')]), {
        instituteId,
        originalName: 'lost.txt',
        contentType: 'text/plain',
      });
      await db
        .updateTable('files')
        .set({ storage_key: 'nowhere/lost.txt' })
        .where('id', '=', lost.id)
        .execute();
      await db
        .updateTable('student_sessions')
        .set({ exam_document_file_id: lost.id })
        .where('id', '=', brokenSession.id)
        .execute();

      assert.deepEqual(await examExports.generate(actor, built), { created: true });
      assert.deepEqual(await examExports.generate(actor, broken), { created: true });
      for (let round = 0; round < 3; round += 1) {
        await runDueJobs(server, dialect, clock);
        clock.current += HOUR;
      }
      assert.equal(await examExports.status(actor, built), 'success');
      assert.equal(await examExports.status(actor, broken), 'failure');
      // Requested long ago and not run yet: its job is queued, whatever its age.
      const waiting = await exam('Waiting');
      assert.deepEqual(await examExports.generate(actor, waiting), { created: true });
      assert.equal(await examExports.status(actor, waiting), 'queued');
      const statuses = await db.selectFrom('jobs').select('status').orderBy('id').execute();
      assert.deepEqual(
        statuses.map((row) => row.status),
        ['succeeded', 'failed', 'queued'],
      );

      clock.current += (RETENTION_DAYS + 1) * DAY;
      const removed = await purgeFinishedHistory(db, server.app.database.dialect, {
        now: clock.now(),
        retentionDays: RETENTION_DAYS,
      });
      assert.deepEqual(removed, { jobs: 2, mail: 0 });

      const exportRows = await db
        .selectFrom('exam_zip_exports')
        .select(['exam_id', 'status', 'job_id'])
        .where('exam_id', 'in', [built, broken, waiting])
        .orderBy('id')
        .execute();
      assert.deepEqual(
        exportRows.map((row) => [row.exam_id, row.status, row.job_id === null]),
        [
          [built, 'success', true],
          [broken, 'failure', true],
          [waiting, 'queued', false],
        ],
      );
      assert.equal(await examExports.status(actor, built), 'success');
      assert.equal(await examExports.status(actor, broken), 'failure');
      assert.equal(await examExports.status(actor, waiting), 'queued');
      const download = await examExports.download(actor, built);
      assert.equal(download.fileName, `exam-${built}-documents.zip`);
      download.body.destroy();

      // A new request after the purge starts a new export as usual.
      assert.deepEqual(await examExports.generate(actor, broken), { created: true });
      assert.equal(await examExports.status(actor, broken), 'queued');
    });
  });
}
