import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { systemClock } from '../../src/domain/clock.ts';
import type { JobContext, JobQueue } from '../../src/domain/ports/jobs.ts';
import type { JobHandler } from '../../src/jobs/job.ts';
import { DIALECTS, TestClock } from '../helpers/server.ts';
import { deferred, type JobsDatabase, openJobsDatabase, queueOn, waitFor, workerOn } from './support.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

for (const dialect of DIALECTS) {
  describe(`job worker [${dialect}]`, () => {
    let jobs: JobsDatabase;
    let clock: TestClock;
    let queue: JobQueue;

    before(async () => {
      jobs = await openJobsDatabase(dialect);
    });
    beforeEach(async () => {
      await jobs.reset();
      clock = new TestClock(1_800_000_000_000);
      queue = queueOn(jobs.database, clock);
    });
    after(async () => {
      await jobs.close();
    });

    it('runs a job once with its payload and records success', async () => {
      const seen: Array<{ payload: unknown; jobId: number; attempt: number }> = [];
      const worker = workerOn(jobs.database, clock, [
        {
          kind: 'greet',
          run(payload, ctx) {
            seen.push({ payload, jobId: ctx.jobId, attempt: ctx.attempt });
            return Promise.resolve();
          },
        },
      ]);
      const { id } = await queue.enqueue(jobs.database.db, { kind: 'greet', payload: { name: 'Ada' } });
      clock.current += 5;
      assert.equal(await worker.runOnce(), true);
      assert.equal(await worker.runOnce(), false);
      assert.deepEqual(seen, [{ payload: { name: 'Ada' }, jobId: id, attempt: 1 }]);
      const job = await queue.find(id);
      assert.equal(job?.status, 'succeeded');
      assert.equal(job?.attempts, 1);
      assert.equal(job?.finishedAt, clock.now());
      assert.equal(job?.lockedBy, null);
      assert.equal(job?.lockedUntil, null);
      assert.equal(job?.lastError, null);
    });

    it('leaves a job alone until its run time, then runs the oldest due job first', async () => {
      const order: unknown[] = [];
      const worker = workerOn(jobs.database, clock, [
        {
          kind: 'k',
          run(payload) {
            order.push(payload);
            return Promise.resolve();
          },
        },
      ]);
      await queue.enqueue(jobs.database.db, { kind: 'k', payload: 'later', runAt: clock.now() + 10_000 });
      await queue.enqueue(jobs.database.db, { kind: 'k', payload: 'first' });
      await queue.enqueue(jobs.database.db, { kind: 'k', payload: 'second' });
      assert.equal(await worker.runOnce(), true);
      assert.equal(await worker.runOnce(), true);
      assert.equal(await worker.runOnce(), false);
      clock.current += 10_000;
      assert.equal(await worker.runOnce(), true);
      assert.deepEqual(order, ['first', 'second', 'later']);
    });

    it('records progress while the job runs', async () => {
      const release = deferred();
      const reported = deferred();
      const worker = workerOn(jobs.database, clock, [
        {
          kind: 'slow',
          async run(_payload, ctx) {
            await ctx.progress('3/10 files');
            reported.resolve();
            await release.promise;
          },
        },
      ]);
      const { id } = await queue.enqueue(jobs.database.db, { kind: 'slow', payload: null });
      const running = worker.runOnce();
      await reported.promise;
      const during = await queue.find(id);
      assert.equal(during?.status, 'running');
      assert.equal(during?.progress, '3/10 files');
      assert.equal(during?.lockedBy, worker.id);
      release.resolve();
      await running;
      assert.equal((await queue.find(id))?.status, 'succeeded');
    });

    it('retries a failing job with growing backoff, then fails it with the last error', async () => {
      const attempts: number[] = [];
      const worker = workerOn(jobs.database, clock, [
        {
          kind: 'flaky',
          run(_payload, ctx) {
            attempts.push(ctx.attempt);
            return Promise.reject(new Error(`boom ${ctx.attempt}`));
          },
        },
      ]);
      const { id } = await queue.enqueue(jobs.database.db, { kind: 'flaky', payload: 1, maxAttempts: 3 });

      assert.equal(await worker.runOnce(), true);
      let job = await queue.find(id);
      assert.equal(job?.status, 'queued');
      assert.equal(job?.attempts, 1);
      assert.equal(job?.lastError, 'boom 1');
      assert.equal(job?.lockedBy, null);
      // After attempt n the wait is 2^n seconds with jitter in its upper half.
      let wait = (job?.runAt ?? 0) - clock.now();
      assert.ok(wait >= 1000 && wait <= 2000, `first backoff ${wait} ms`);
      assert.equal(await worker.runOnce(), false, 'not before its backoff has passed');
      clock.current += wait - 1;
      assert.equal(await worker.runOnce(), false, 'not one millisecond early');
      clock.current += 1;

      assert.equal(await worker.runOnce(), true);
      job = await queue.find(id);
      assert.equal(job?.status, 'queued');
      assert.equal(job?.lastError, 'boom 2');
      wait = (job?.runAt ?? 0) - clock.now();
      assert.ok(wait >= 2000 && wait <= 4000, `second backoff ${wait} ms`);
      clock.current += wait;

      assert.equal(await worker.runOnce(), true);
      job = await queue.find(id);
      assert.equal(job?.status, 'failed');
      assert.equal(job?.attempts, 3);
      assert.equal(job?.lastError, 'boom 3');
      assert.equal(job?.finishedAt, clock.now());
      clock.current += 3_600_000;
      assert.equal(await worker.runOnce(), false, 'a failed job is never run again');
      assert.deepEqual(attempts, [1, 2, 3]);
    });

    it('fails a job of an unknown kind at once, naming the kind', async () => {
      const worker = workerOn(jobs.database, clock, [], { workerId: 'w-unknown' });
      const { id } = await queue.enqueue(jobs.database.db, { kind: 'mystery', payload: {} });
      assert.equal(await worker.runOnce(), true);
      const job = await queue.find(id);
      assert.equal(job?.status, 'failed');
      assert.equal(job?.attempts, 1);
      assert.equal(job?.lastError, 'no handler for job kind "mystery" in worker w-unknown');
    });

    it('refuses two handlers for one kind', () => {
      const handler: JobHandler = { kind: 'twice', run: () => Promise.resolve() };
      assert.throws(
        () => workerOn(jobs.database, clock, [handler, handler]),
        /two job handlers for kind "twice"/,
      );
    });

    it('lets another worker take a job whose lease expired, and ignores the first worker late outcome', async () => {
      const release = deferred();
      const started = deferred<JobContext>();
      const runs: string[] = [];
      let failSecond = true;
      const handlerFor = (name: string): JobHandler => ({
        kind: 'lease',
        async run(_payload, ctx) {
          runs.push(`${name}#${ctx.attempt}`);
          if (name === 'first') {
            started.resolve(ctx);
            await release.promise;
            return;
          }
          if (failSecond) throw new Error('second worker failed');
        },
      });
      const other = jobs.connect();
      const first = workerOn(jobs.database, clock, [handlerFor('first')], {
        workerId: 'first',
        leaseMs: 60_000,
      });
      const second = workerOn(other, clock, [handlerFor('second')], { workerId: 'second', leaseMs: 60_000 });
      const { id } = await queue.enqueue(jobs.database.db, { kind: 'lease', payload: null });

      const firstRun = first.runOnce();
      const firstCtx = await started.promise;
      assert.equal(await second.runOnce(), false, 'a leased job is not claimable');
      clock.current += 60_000;
      assert.equal(await second.runOnce(), false, 'still leased at the last millisecond');
      clock.current += 1;

      // The second worker takes it over; its attempt fails and puts the job back in the queue.
      assert.equal(await second.runOnce(), true);
      let job = await queue.find(id);
      assert.equal(job?.status, 'queued');
      assert.equal(job?.attempts, 2);
      assert.equal(job?.lastError, 'second worker failed');

      // The first worker reports progress (it learns it lost the job), then finishes: nothing is written.
      await firstCtx.progress('late');
      assert.equal(firstCtx.signal.aborted, true);
      release.resolve();
      await firstRun;
      job = await queue.find(id);
      assert.equal(job?.status, 'queued', 'the late success must not mark the job done');
      assert.equal(job?.progress, null);
      assert.equal(job?.lastError, 'second worker failed');

      failSecond = false;
      clock.current += 60_000;
      assert.equal(await second.runOnce(), true);
      job = await queue.find(id);
      assert.equal(job?.status, 'succeeded');
      assert.equal(job?.attempts, 3);
      assert.deepEqual(runs, ['first#1', 'second#2', 'second#3']);
    });

    it('recovers a job from a worker that died mid-attempt once its lease expires', async () => {
      // A "crashed" worker: it claimed the job, its handler never returns, and its connection is gone.
      const crashedDb = jobs.connect();
      const hang = deferred();
      const crashed = workerOn(crashedDb, clock, [{ kind: 'crash', run: () => hang.promise }], {
        workerId: 'crashed',
        leaseMs: 30_000,
      });
      const { id } = await queue.enqueue(jobs.database.db, { kind: 'crash', payload: { n: 1 } });
      const crashedRun = crashed.runOnce();
      await waitFor(
        'the crashed worker to claim the job',
        async () => (await queue.find(id))?.status === 'running',
      );
      await crashedDb.destroy();

      const completed: unknown[] = [];
      const rescuer = workerOn(jobs.database, clock, [
        {
          kind: 'crash',
          run(payload) {
            completed.push(payload);
            return Promise.resolve();
          },
        },
      ]);
      assert.equal(await rescuer.runOnce(), false);
      clock.current += 30_001;
      assert.equal(await rescuer.runOnce(), true);
      const job = await queue.find(id);
      assert.equal(job?.status, 'succeeded');
      assert.equal(job?.attempts, 2);
      assert.deepEqual(completed, [{ n: 1 }]);

      hang.resolve();
      await crashedRun; // its outcome cannot be written (connection closed) and is not needed
      assert.equal((await queue.find(id))?.status, 'succeeded');
    });

    it('fails a job whose worker died on its last attempt, once the lease expires', async () => {
      const hang = deferred();
      const crashedDb = jobs.connect();
      const crashed = workerOn(crashedDb, clock, [{ kind: 'once', run: () => hang.promise }], {
        leaseMs: 10_000,
      });
      const { id } = await queue.enqueue(jobs.database.db, { kind: 'once', payload: 1, maxAttempts: 1 });
      const crashedRun = crashed.runOnce();
      await waitFor('the claim', async () => (await queue.find(id))?.status === 'running');
      await crashedDb.destroy();
      const rescuer = workerOn(jobs.database, clock, [{ kind: 'once', run: () => Promise.resolve() }]);
      clock.current += 10_001;
      assert.equal(await rescuer.runOnce(), false, 'no attempt is left to run');
      const job = await queue.find(id);
      assert.equal(job?.status, 'failed');
      assert.match(job?.lastError ?? '', /stopped renewing its lease/);
      assert.equal(job?.finishedAt, clock.now());
      hang.resolve();
      await crashedRun;
    });

    it('renews the lease of a long job so no other worker takes it', async () => {
      const leaseMs = 300;
      const runs: number[] = [];
      const handler: JobHandler = {
        kind: 'long',
        async run(_payload, ctx) {
          runs.push(ctx.attempt);
          await sleep(4 * leaseMs);
        },
      };
      const other = jobs.connect();
      const holder = workerOn(jobs.database, systemClock, [handler], { leaseMs });
      const rival = workerOn(other, systemClock, [handler], { leaseMs });
      const liveQueue = queueOn(jobs.database, systemClock);
      const { id } = await liveQueue.enqueue(jobs.database.db, { kind: 'long', payload: null });
      let done = false;
      const holding = holder.runOnce().finally(() => {
        done = true;
      });
      await waitFor('the claim', async () => (await liveQueue.find(id))?.status === 'running');
      const firstLease = (await liveQueue.find(id))?.lockedUntil ?? 0;
      let latestLease = firstLease;
      while (!done) {
        assert.equal(await rival.runOnce(), false, 'the rival must not take a job whose lease is renewed');
        latestLease = Math.max(latestLease, (await liveQueue.find(id))?.lockedUntil ?? 0);
        await sleep(25);
      }
      await holding;
      const job = await liveQueue.find(id);
      assert.equal(job?.status, 'succeeded');
      assert.equal(job?.attempts, 1);
      assert.deepEqual(runs, [1]);
      assert.ok(latestLease >= firstLease + leaseMs, 'the lease was pushed on while the job ran');
    });

    it('stop() waits for the running job to finish, then claims nothing more', async () => {
      const release = deferred();
      const started = deferred();
      const ran: unknown[] = [];
      const worker = workerOn(jobs.database, clock, [
        {
          kind: 'step',
          async run(payload) {
            ran.push(payload);
            started.resolve();
            await release.promise;
          },
        },
      ]);
      const first = await queue.enqueue(jobs.database.db, { kind: 'step', payload: 1 });
      worker.start();
      worker.start(); // a second start is harmless
      await started.promise;
      let stopped = false;
      const stopping = worker.stop().then(() => {
        stopped = true;
      });
      const second = await queue.enqueue(jobs.database.db, { kind: 'step', payload: 2 });
      await sleep(100);
      assert.equal(stopped, false, 'stop() must wait for the running job');
      assert.equal((await queue.find(first.id))?.status, 'running');
      release.resolve();
      await stopping;
      assert.equal(
        (await queue.find(first.id))?.status,
        'succeeded',
        'the outcome is written before stop() resolves',
      );
      await sleep(50);
      assert.equal((await queue.find(second.id))?.status, 'queued');
      assert.deepEqual(ran, [1]);
    });

    it('runs up to `concurrency` jobs at once and drains the queue while started', async () => {
      let active = 0;
      let peak = 0;
      const worker = workerOn(
        jobs.database,
        clock,
        [
          {
            kind: 'par',
            async run() {
              active += 1;
              peak = Math.max(peak, active);
              await sleep(30);
              active -= 1;
            },
          },
        ],
        { concurrency: 3 },
      );
      const ids: number[] = [];
      for (let n = 0; n < 9; n += 1)
        ids.push((await queue.enqueue(jobs.database.db, { kind: 'par', payload: n })).id);
      worker.start();
      await waitFor('all jobs to succeed', async () => {
        const statuses = await Promise.all(ids.map(async (id) => (await queue.find(id))?.status));
        return statuses.every((status) => status === 'succeeded');
      });
      await worker.stop();
      assert.equal(peak, 3);
    });

    it(`never runs a job twice, even with several workers on separate connections racing`, async () => {
      const WORKERS = 4;
      const JOBS = 200;
      const executions = new Map<number, number>();
      const activeRuns = new Map<number, number>();
      const perWorker = new Array<number>(WORKERS).fill(0);
      let overlaps = 0;
      const handlerFor = (worker: number): JobHandler => ({
        kind: 'race',
        async run(_payload, ctx) {
          perWorker[worker] = (perWorker[worker] ?? 0) + 1;
          executions.set(ctx.jobId, (executions.get(ctx.jobId) ?? 0) + 1);
          const active = (activeRuns.get(ctx.jobId) ?? 0) + 1;
          activeRuns.set(ctx.jobId, active);
          if (active > 1) overlaps += 1;
          await sleep(Math.random() * 3);
          activeRuns.set(ctx.jobId, (activeRuns.get(ctx.jobId) ?? 1) - 1);
        },
      });
      const live = queueOn(jobs.database, systemClock);
      const ids: number[] = [];
      for (let n = 0; n < JOBS; n += 1) {
        ids.push((await live.enqueue(jobs.database.db, { kind: 'race', payload: n })).id);
      }
      // Separate pools on PostgreSQL, separate connections to one file on SQLite: as separate processes would.
      const workers = Array.from({ length: WORKERS }, (_, n) =>
        workerOn(n === 0 ? jobs.database : jobs.connect(), systemClock, [handlerFor(n)], {
          workerId: `racer-${n}`,
          concurrency: 4,
          pollMs: 5,
        }),
      );
      for (const worker of workers) worker.start();
      try {
        await waitFor(
          'every job to succeed',
          async () => {
            const row = await jobs.database.db
              .selectFrom('jobs')
              .select((eb) => eb.fn.countAll<number>().as('count'))
              .where('kind', '=', 'race')
              .where('status', '=', 'succeeded')
              .executeTakeFirstOrThrow();
            return Number(row.count) === JOBS;
          },
          90_000,
        );
      } finally {
        await Promise.all(workers.map((worker) => worker.stop()));
      }
      assert.equal(overlaps, 0, 'no job ran twice at the same time');
      assert.ok(
        perWorker.filter((count) => count > 0).length >= 2,
        `work was shared: ${perWorker.join(', ')}`,
      );
      assert.deepEqual(
        ids.filter((id) => executions.get(id) !== 1),
        [],
        'every job ran exactly once',
      );
      const rows = await jobs.database.db
        .selectFrom('jobs')
        .select(['attempts', 'locked_by'])
        .where('kind', '=', 'race')
        .execute();
      assert.ok(rows.every((row) => row.attempts === 1 && row.locked_by === null));
    });
  });
}
