import crypto from 'node:crypto';
import { type ExpressionBuilder, type Selectable, sql } from 'kysely';
import type { Db, DialectName } from '../db/database.ts';
import type { JobsTable, Tables } from '../db/tables.ts';
import { ACTIVE_JOB_STATUSES, JOB_STATUSES, type Job, type JobStatus } from '../domain/ports/jobs.ts';

/** Longest `last_error` kept; a stack trace belongs in the log, not the row. */
const MAX_ERROR_LENGTH = 2000;

/** First key of PostgreSQL's two-key advisory locks taken by the queue ("JOBS"), apart from any other use. */
const DEDUPE_LOCK_CLASS = 0x4a4f4253;

/** The error of a job whose last attempt's worker vanished. */
const ABANDONED =
  'the worker running the last attempt stopped renewing its lease (crashed or lost the database)';

/** Which attempt of which job a worker holds; every write after the claim is conditional on it. */
export interface Claim {
  readonly id: number;
  readonly workerId: string;
  readonly attempt: number;
}

/** A job just claimed: the claim plus what the handler needs. */
export interface ClaimedJob extends Claim {
  readonly kind: string;
  readonly payload: unknown;
  readonly maxAttempts: number;
}

/** Columns of a new row. */
export interface JobValues {
  readonly kind: string;
  readonly payload: string;
  readonly dedupeKey: string | null;
  readonly maxAttempts: number;
  readonly runAt: number;
  readonly now: number;
}

function statusFromRow(value: string): JobStatus {
  const status = JOB_STATUSES.find((candidate) => candidate === value);
  if (status === undefined) throw new Error(`job row has an unknown status "${value}"`);
  return status;
}

function jobFromRow(row: Selectable<JobsTable>): Job {
  return {
    id: row.id,
    kind: row.kind,
    payload: JSON.parse(row.payload) as unknown,
    status: statusFromRow(row.status),
    dedupeKey: row.dedupe_key,
    attempts: row.attempts,
    maxAttempts: row.max_attempts,
    runAt: row.run_at,
    lockedBy: row.locked_by,
    lockedUntil: row.locked_until,
    lastError: row.last_error,
    progress: row.progress,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    finishedAt: row.finished_at,
  };
}

function clip(error: string): string {
  return error.length <= MAX_ERROR_LENGTH ? error : `${error.slice(0, MAX_ERROR_LENGTH - 1)}…`;
}

/** Inserts a queued job. Returns its id. */
export async function insertJob(db: Db, job: JobValues): Promise<number> {
  const row = await db
    .insertInto('jobs')
    .values({
      kind: job.kind,
      payload: job.payload,
      status: 'queued',
      dedupe_key: job.dedupeKey,
      attempts: 0,
      max_attempts: job.maxAttempts,
      run_at: job.runAt,
      created_at: job.now,
      updated_at: job.now,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/**
 * Inserts a queued job unless one of the same kind and dedupe key is queued or running, in one
 * statement. On SQLite that statement holds the single write lock from its check to its insert; on
 * PostgreSQL the caller must hold lockDedupeKey first. Returns the new id, or undefined when blocked.
 */
export async function insertJobUnlessActive(
  db: Db,
  job: JobValues & { readonly dedupeKey: string },
): Promise<number | undefined> {
  // INSERT ... SELECT needs the parameters typed: PostgreSQL reads a bare parameter there as text.
  const row = await db
    .insertInto('jobs')
    .columns([
      'kind',
      'payload',
      'status',
      'dedupe_key',
      'attempts',
      'max_attempts',
      'run_at',
      'created_at',
      'updated_at',
    ])
    .expression(
      db
        .selectNoFrom((eb) => [
          eb.cast<string>(eb.val(job.kind), 'text').as('kind'),
          eb.cast<string>(eb.val(job.payload), 'text').as('payload'),
          eb.cast<string>(eb.val('queued'), 'text').as('status'),
          eb.cast<string>(eb.val(job.dedupeKey), 'text').as('dedupe_key'),
          eb.cast<number>(eb.val(0), 'integer').as('attempts'),
          eb.cast<number>(eb.val(job.maxAttempts), 'integer').as('max_attempts'),
          eb.cast<number>(eb.val(job.runAt), 'bigint').as('run_at'),
          eb.cast<number>(eb.val(job.now), 'bigint').as('created_at'),
          eb.cast<number>(eb.val(job.now), 'bigint').as('updated_at'),
        ])
        .where((eb) =>
          eb.not(
            eb.exists(
              eb
                .selectFrom('jobs')
                .select(sql.lit(1).as('one'))
                .where('kind', '=', job.kind)
                .where('dedupe_key', '=', job.dedupeKey)
                .where('status', 'in', ACTIVE_JOB_STATUSES),
            ),
          ),
        ),
    )
    .returning('id')
    .executeTakeFirst();
  return row?.id;
}

/**
 * PostgreSQL only: takes a transaction-scoped advisory lock on (kind, dedupe key), so concurrent
 * enqueuers of the same key run their check-and-insert one after another; released at commit or
 * rollback. `db` must be a transaction. Two keys sharing a hash only wait for each other.
 */
export async function lockDedupeKey(db: Db, kind: string, dedupeKey: string): Promise<void> {
  const digest = crypto.createHash('sha256').update(`${kind}\u0000${dedupeKey}`).digest();
  await sql`select pg_advisory_xact_lock(${DEDUPE_LOCK_CLASS}::int, ${digest.readInt32BE(0)}::int)`.execute(
    db,
  );
}

/** Returns the id of the queued or running job of this kind and key, or undefined. */
export async function findActiveJobId(db: Db, kind: string, dedupeKey: string): Promise<number | undefined> {
  const row = await db
    .selectFrom('jobs')
    .select('id')
    .where('kind', '=', kind)
    .where('dedupe_key', '=', dedupeKey)
    .where('status', 'in', ACTIVE_JOB_STATUSES)
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row?.id;
}

/** Returns the job, or undefined. */
export async function findJob(db: Db, id: number): Promise<Job | undefined> {
  const row = await db.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirst();
  return row === undefined ? undefined : jobFromRow(row);
}

/** Returns the most recently enqueued job of this kind and dedupe key, whatever its status, or undefined. */
export async function findLatestJob(db: Db, kind: string, dedupeKey: string): Promise<Job | undefined> {
  const row = await db
    .selectFrom('jobs')
    .selectAll()
    .where('kind', '=', kind)
    .where('dedupe_key', '=', dedupeKey)
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row === undefined ? undefined : jobFromRow(row);
}

/**
 * Claims the next due job for `workerId` in one statement: the oldest queued job whose time has come,
 * or a running one whose lease expired with attempts left. It becomes running, leased until
 * `leaseUntil`, with one more attempt. SQLite's single writer makes the statement exclusive; on
 * PostgreSQL the candidate row is locked with FOR UPDATE SKIP LOCKED, so racing workers each take a
 * different job instead of queueing behind one another. Returns the claimed job, or undefined.
 */
export async function claimNextJob(
  db: Db,
  dialect: DialectName,
  claim: { readonly workerId: string; readonly now: number; readonly leaseUntil: number },
): Promise<ClaimedJob | undefined> {
  const { workerId, now, leaseUntil } = claim;
  const due = db
    .selectFrom('jobs')
    .select('id')
    .where((eb) =>
      eb.or([
        eb.and([eb('status', '=', 'queued'), eb('run_at', '<=', now)]),
        eb.and([
          eb('status', '=', 'running'),
          eb('locked_until', '<', now),
          eb('attempts', '<', eb.ref('max_attempts')),
        ]),
      ]),
    )
    .orderBy('run_at')
    .orderBy('id')
    .limit(1);
  const candidate = dialect === 'postgres' ? due.forUpdate().skipLocked() : due;
  const row = await db
    .updateTable('jobs')
    .set((eb) => ({
      status: 'running',
      locked_by: workerId,
      locked_until: leaseUntil,
      attempts: eb('attempts', '+', 1),
      updated_at: now,
    }))
    .where('id', '=', candidate)
    .returning(['id', 'kind', 'payload', 'attempts', 'max_attempts'])
    .executeTakeFirst();
  if (row === undefined) return undefined;
  return {
    id: row.id,
    workerId,
    attempt: row.attempts,
    kind: row.kind,
    payload: JSON.parse(row.payload) as unknown,
    maxAttempts: row.max_attempts,
  };
}

/** Narrows an update to the attempt the claim names, while it is still running. */
function held(claim: Claim) {
  return (eb: ExpressionBuilder<Tables, 'jobs'>) =>
    eb.and([
      eb('id', '=', claim.id),
      eb('status', '=', 'running'),
      eb('locked_by', '=', claim.workerId),
      eb('attempts', '=', claim.attempt),
    ]);
}

/**
 * Extends the lease of a held job (and records progress when given).
 * Returns false when the claim no longer holds the job (its lease expired and another worker took it).
 */
export async function renewLease(
  db: Db,
  claim: Claim,
  change: { readonly now: number; readonly leaseUntil: number; readonly progress?: string },
): Promise<boolean> {
  const result = await db
    .updateTable('jobs')
    .set({
      locked_until: change.leaseUntil,
      updated_at: change.now,
      ...(change.progress === undefined ? {} : { progress: change.progress }),
    })
    .where(held(claim))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Marks a held job succeeded. Returns false when the claim no longer holds it (nothing written). */
export async function markSucceeded(db: Db, claim: Claim, now: number): Promise<boolean> {
  const result = await db
    .updateTable('jobs')
    .set({ status: 'succeeded', locked_by: null, locked_until: null, updated_at: now, finished_at: now })
    .where(held(claim))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Puts a held job back in the queue until `runAt`, recording the error. Returns false when not held. */
export async function markForRetry(
  db: Db,
  claim: Claim,
  change: { readonly now: number; readonly runAt: number; readonly error: string },
): Promise<boolean> {
  const result = await db
    .updateTable('jobs')
    .set({
      status: 'queued',
      run_at: change.runAt,
      last_error: clip(change.error),
      locked_by: null,
      locked_until: null,
      updated_at: change.now,
    })
    .where(held(claim))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Marks a held job failed for good, recording the error. Returns false when not held. */
export async function markFailed(
  db: Db,
  claim: Claim,
  change: { readonly now: number; readonly error: string },
): Promise<boolean> {
  const result = await db
    .updateTable('jobs')
    .set({
      status: 'failed',
      last_error: clip(change.error),
      locked_by: null,
      locked_until: null,
      updated_at: change.now,
      finished_at: change.now,
    })
    .where(held(claim))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * Fails running jobs whose lease expired on their last attempt: their worker vanished and no attempt
 * is left to hand them to another. Returns how many.
 */
export async function failAbandonedJobs(db: Db, now: number): Promise<number> {
  const result = await db
    .updateTable('jobs')
    .set({
      status: 'failed',
      last_error: ABANDONED,
      locked_by: null,
      locked_until: null,
      updated_at: now,
      finished_at: now,
    })
    .where('status', '=', 'running')
    .where('locked_until', '<', now)
    .where((eb) => eb('attempts', '>=', eb.ref('max_attempts')))
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** The statuses after which a job never runs again (`failed` is only reached with no attempts left). */
const FINISHED_JOB_STATUSES: readonly JobStatus[] = ['succeeded', 'failed'];

/**
 * Deletes up to `limit` jobs that finished (succeeded, or failed for good) before `before`, oldest
 * id first, in one statement: a bounded batch, so a long history never holds its locks for long.
 * Queued and running jobs (a retry waiting out its backoff is queued) are never touched. An
 * `exam_zip_exports` row pointing at a deleted job has its `job_id` set to null by the foreign key;
 * the zip status reads the same without a finished job. On PostgreSQL the batch skips rows another
 * sweeper has locked. Returns how many were deleted.
 */
export async function deleteFinishedJobs(
  db: Db,
  dialect: DialectName,
  batch: { readonly before: number; readonly limit: number },
): Promise<number> {
  const old = db
    .selectFrom('jobs')
    .select('id')
    .where('status', 'in', FINISHED_JOB_STATUSES)
    .where('finished_at', '<', batch.before)
    .orderBy('id')
    .limit(batch.limit);
  const candidates = dialect === 'postgres' ? old.forUpdate().skipLocked() : old;
  const result = await db.deleteFrom('jobs').where('id', 'in', candidates).executeTakeFirst();
  return Number(result.numDeletedRows);
}
