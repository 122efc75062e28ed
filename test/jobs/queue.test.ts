import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DEFAULT_MAX_ATTEMPTS } from '../../src/jobs/job.ts';
import type { JobQueue } from '../../src/domain/ports/jobs.ts';
import { DIALECTS, TestClock } from '../helpers/server.ts';
import { deferred, type JobsDatabase, openJobsDatabase, queueOn, workerOn } from './support.ts';

for (const dialect of DIALECTS) {
  describe(`job queue [${dialect}]`, () => {
    let jobs: JobsDatabase;
    let clock: TestClock;
    let queue: JobQueue;

    before(async () => {
      jobs = await openJobsDatabase(dialect);
      clock = new TestClock(1_800_000_000_000);
      queue = queueOn(jobs.database, clock);
    });
    after(async () => {
      await jobs.close();
    });

    it('enqueues a queued job that keeps its payload, with default attempts and run time', async () => {
      const payload = { examId: 7, names: ['a', 'ü'], nested: { on: true, none: null } };
      const { id, created } = await queue.enqueue(jobs.database.db, { kind: 'plain', payload });
      assert.equal(created, true);
      const job = await queue.find(id);
      assert.ok(job);
      assert.deepEqual(
        { ...job },
        {
          id,
          kind: 'plain',
          payload,
          status: 'queued',
          dedupeKey: null,
          attempts: 0,
          maxAttempts: DEFAULT_MAX_ATTEMPTS,
          runAt: clock.now(),
          lockedBy: null,
          lockedUntil: null,
          lastError: null,
          progress: null,
          createdAt: clock.now(),
          updatedAt: clock.now(),
          finishedAt: null,
        },
      );
      assert.equal(await queue.find(id + 1000), undefined);
    });

    it('enqueued inside a transaction that rolls back leaves no job; one that commits keeps it', async () => {
      let rolledBackId = 0;
      await assert.rejects(
        jobs.database.db.transaction().execute(async (trx) => {
          rolledBackId = (await queue.enqueue(trx, { kind: 'tx', payload: 1, dedupeKey: 'r' })).id;
          assert.ok(
            await trx.selectFrom('jobs').select('id').where('id', '=', rolledBackId).executeTakeFirst(),
          );
          throw new Error('roll back');
        }),
        /roll back/,
      );
      assert.equal(await queue.find(rolledBackId), undefined);
      assert.equal(await queue.latest('tx', 'r'), undefined);

      const committed = await jobs.database.db
        .transaction()
        .execute((trx) => queue.enqueue(trx, { kind: 'tx', payload: 2, dedupeKey: 'r' }));
      assert.equal(committed.created, true);
      assert.equal((await queue.find(committed.id))?.status, 'queued');
    });

    it('creates no second job of a kind and key while one is queued or running, and a new one after', async () => {
      // Due before every other job in this database, so the worker below claims this one.
      const first = await queue.enqueue(jobs.database.db, {
        kind: 'zip',
        payload: { n: 1 },
        dedupeKey: 'exam:1',
        runAt: clock.now() - 60_000,
      });
      const again = await queue.enqueue(jobs.database.db, {
        kind: 'zip',
        payload: { n: 2 },
        dedupeKey: 'exam:1',
      });
      assert.deepEqual(again, { id: first.id, created: false });
      assert.deepEqual((await queue.find(first.id))?.payload, { n: 1 });

      // The key is scoped to its kind, and other keys are independent.
      const otherKind = await queue.enqueue(jobs.database.db, {
        kind: 'mail',
        payload: 0,
        dedupeKey: 'exam:1',
      });
      const otherKey = await queue.enqueue(jobs.database.db, {
        kind: 'zip',
        payload: 0,
        dedupeKey: 'exam:2',
      });
      assert.equal(otherKind.created, true);
      assert.equal(otherKey.created, true);

      // Running still blocks a duplicate.
      const release = deferred();
      const started = deferred();
      const worker = workerOn(jobs.database, clock, [
        {
          kind: 'zip',
          async run() {
            started.resolve();
            await release.promise;
          },
        },
      ]);
      const running = worker.runOnce();
      await started.promise;
      assert.equal((await queue.find(first.id))?.status, 'running');
      assert.deepEqual(
        await queue.enqueue(jobs.database.db, { kind: 'zip', payload: 3, dedupeKey: 'exam:1' }),
        { id: first.id, created: false },
      );
      release.resolve();
      assert.equal(await running, true);
      assert.equal((await queue.find(first.id))?.status, 'succeeded');

      // Finished: the key is free again, and latest() names the newest job.
      clock.current += 1;
      const next = await queue.enqueue(jobs.database.db, { kind: 'zip', payload: 4, dedupeKey: 'exam:1' });
      assert.equal(next.created, true);
      assert.notEqual(next.id, first.id);
      const latest = await queue.latest('zip', 'exam:1');
      assert.equal(latest?.id, next.id);
      assert.equal(latest?.status, 'queued');
      assert.equal(await queue.latest('zip', 'exam:404'), undefined);
    });

    it('creates exactly one job when many enqueuers on separate connections race for one key', async () => {
      const connections = [jobs.database, jobs.connect(), jobs.connect(), jobs.connect()];
      const results = await Promise.all(
        Array.from({ length: 40 }, (_, index) => {
          const connection = connections[index % connections.length];
          assert.ok(connection);
          const job = { kind: 'race', payload: index, dedupeKey: 'one' };
          const queueHere = queueOn(connection, clock);
          // On PostgreSQL each enqueuer also holds its transaction open a moment after the insert, which
          // is where a check-then-insert without a lock would let a second job in. (SQLite connections in
          // one process cannot hold overlapping write transactions, so there each enqueue autocommits.)
          if (dialect === 'sqlite') return queueHere.enqueue(connection.db, job);
          return connection.db.transaction().execute(async (trx) => {
            const result = await queueHere.enqueue(trx, job);
            await new Promise((resolve) => setTimeout(resolve, 5));
            return result;
          });
        }),
      );
      assert.equal(results.filter((result) => result.created).length, 1);
      assert.equal(new Set(results.map((result) => result.id)).size, 1);
      const rows = await jobs.database.db
        .selectFrom('jobs')
        .select('id')
        .where('kind', '=', 'race')
        .execute();
      assert.equal(rows.length, 1);
    });

    it('rejects a payload JSON cannot hold and fewer than one attempt', async () => {
      await assert.rejects(queue.enqueue(jobs.database.db, { kind: 'bad', payload: undefined }), TypeError);
      await assert.rejects(queue.enqueue(jobs.database.db, { kind: 'bad', payload: () => 1 }), TypeError);
      await assert.rejects(queue.enqueue(jobs.database.db, { kind: 'bad', payload: 10n }), TypeError);
      await assert.rejects(
        queue.enqueue(jobs.database.db, { kind: 'bad', payload: 1, maxAttempts: 0 }),
        /maxAttempts must be a whole number of at least 1/,
      );
      const rows = await jobs.database.db.selectFrom('jobs').select('id').where('kind', '=', 'bad').execute();
      assert.deepEqual(rows, []);
    });

    if (dialect === 'postgres') {
      it('makes a concurrent enqueuer of the same key wait for the first transaction, then dedupe', async () => {
        const other = jobs.connect();
        const holding = deferred();
        const enqueued = deferred<number>();
        const first = jobs.database.db.transaction().execute(async (trx) => {
          const result = await queue.enqueue(trx, { kind: 'held', payload: 1, dedupeKey: 'k' });
          enqueued.resolve(result.id);
          await holding.promise;
          return result;
        });
        const firstId = await enqueued.promise;
        let secondSettled = false;
        const second = other.db
          .transaction()
          .execute((trx) => queueOn(other, clock).enqueue(trx, { kind: 'held', payload: 2, dedupeKey: 'k' }))
          .finally(() => {
            secondSettled = true;
          });
        await new Promise((resolve) => setTimeout(resolve, 200));
        assert.equal(secondSettled, false, 'the second enqueuer must wait for the first transaction');
        holding.resolve();
        assert.deepEqual(await first, { id: firstId, created: true });
        assert.deepEqual(await second, { id: firstId, created: false });

        // After a rollback the waiting enqueuer creates the job itself.
        const rollback = deferred();
        const started = deferred();
        const doomed = jobs.database.db.transaction().execute(async (trx) => {
          await queue.enqueue(trx, { kind: 'held', payload: 3, dedupeKey: 'gone' });
          started.resolve();
          await rollback.promise;
          throw new Error('roll back');
        });
        await started.promise;
        const waiting = queueOn(other, clock).enqueue(other.db, {
          kind: 'held',
          payload: 4,
          dedupeKey: 'gone',
        });
        await new Promise((resolve) => setTimeout(resolve, 100));
        rollback.resolve();
        await assert.rejects(doomed, /roll back/);
        const created = await waiting;
        assert.equal(created.created, true);
        assert.deepEqual((await queue.find(created.id))?.payload, 4);
      });
    }
  });
}
