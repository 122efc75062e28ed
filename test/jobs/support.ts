import pino from 'pino';
import { type Database } from '../../src/db/database.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';
import type { Clock } from '../../src/domain/clock.ts';
import type { JobHandler } from '../../src/jobs/job.ts';
import type { JobQueue } from '../../src/domain/ports/jobs.ts';
import { createJobQueue } from '../../src/jobs/queue.ts';
import { createWorker, type Worker, type WorkerOptions } from '../../src/jobs/worker.ts';
import {
  createTestDatabase,
  type DialectName,
  type TestDatabase,
  openTestDatabase,
} from '../helpers/server.ts';

export const silent = pino({ level: 'silent' });

/** A private, migrated database; `connect` opens further connections (pools) to the same one. */
export interface JobsDatabase {
  readonly dialect: DialectName;
  readonly target: TestDatabase;
  readonly database: Database;
  connect(): Database;
  /** Closes the connections `connect` opened and deletes every job: a clean queue for the next test. */
  reset(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Opens a fresh test database for `dialect` and migrates it. One per test file, not per test: on
 * PostgreSQL each schema created and dropped is churn every other suite running beside this one sees.
 */
export async function openJobsDatabase(dialect: DialectName): Promise<JobsDatabase> {
  const target = await createTestDatabase(dialect);
  let opened: Database[] = [];
  const connect = () => {
    const database = openTestDatabase(target);
    opened.push(database);
    return database;
  };
  const database = connect();
  opened = [];
  await migrateToLatest(database);
  const reset = async () => {
    for (const each of opened) await each.destroy();
    opened = [];
    await database.db.deleteFrom('jobs').execute();
  };
  return {
    dialect,
    target,
    database,
    connect,
    reset,
    async close() {
      await reset();
      await database.destroy();
      await target.drop();
    },
  };
}

/** A queue over the database. */
export function queueOn(database: Database, clock: Clock): JobQueue {
  return createJobQueue({ db: database.db, clock });
}

/** A worker over the database with quiet logs and fast polling unless told otherwise. */
export function workerOn(
  database: Database,
  clock: Clock,
  handlers: readonly JobHandler[],
  options: Partial<Pick<WorkerOptions, 'workerId' | 'leaseMs' | 'pollMs' | 'concurrency'>> = {},
): Worker {
  return createWorker({
    db: database.db,
    dialect: database.dialect,
    clock,
    logger: silent,
    handlers,
    pollMs: 10,
    ...options,
  });
}

/** A promise with its resolve exposed, for handlers the test releases. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((settle) => {
    resolve = settle;
  });
  return { promise, resolve };
}

/** Waits until `check` answers true, polling every 20 ms; throws after `timeoutMs`. */
export async function waitFor(
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs = 30_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
