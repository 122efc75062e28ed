import { type ExpressionBuilder, type Selectable, sql } from 'kysely';
import type { Db, DialectName } from '../../db/database.ts';
import type { OutboxTable, Tables } from '../../db/tables.ts';
import { applyConditions, applyOrderAndPage } from '../list-query.ts';
import type { ListQuery, Page } from '../listing.ts';
import { ACTIVE_JOB_STATUSES } from '../ports/jobs.ts';
import {
  MAIL_DELIVER_JOB,
  type MailKind,
  OUTBOX_STATUSES,
  type OutboxMessage,
  type OutboxStatus,
} from './outbox.ts';
import type { RenderedMail } from './templates.ts';

/** Longest `last_error` kept; the log has the rest. */
const MAX_ERROR_LENGTH = 2000;

type OutboxRow = Selectable<OutboxTable>;

/** The attempt holding a message: every write after the claim is conditional on it. */
export interface OutboxClaim {
  readonly id: number;
  readonly attempts: number;
}

function messageFromRow(row: OutboxRow): OutboxMessage {
  const status = OUTBOX_STATUSES.find((known) => known === row.status);
  if (status === undefined) throw new Error(`outbox message ${row.id} has an unknown status ${row.status}`);
  return {
    id: row.id,
    kind: row.kind,
    to: row.to_address,
    subject: row.subject,
    text: row.text_body,
    html: row.html_body,
    status,
    attempts: row.attempts,
    nextAttemptAt: row.next_attempt_at,
    lastError: row.last_error,
    studentSessionId: row.student_session_id,
    createdAt: row.created_at,
    sentAt: row.sent_at,
    instituteId: row.institute_id,
  };
}

/**
 * A message an attempt may take now: waiting (`pending`), given up on earlier (`failed`, taken only
 * by a job enqueued again), or `sending` under a claim that has run out.
 */
function claimable(now: number) {
  return (eb: ExpressionBuilder<Tables, 'outbox'>) =>
    eb.or([
      eb('status', 'in', ['pending', 'failed']),
      eb.and([eb('status', '=', 'sending'), eb('next_attempt_at', '<=', now)]),
    ]);
}

/** Inserts a `pending` message. Returns its id. */
export async function insertOutboxMessage(
  db: Db,
  mail: {
    readonly kind: MailKind;
    readonly to: string;
    readonly message: RenderedMail;
    readonly studentSessionId: number | null;
    /** Left out: the institute of the student session's exam, read in the same statement. */
    readonly instituteId?: number | null;
    readonly now: number;
  },
): Promise<number> {
  const sessionId = mail.studentSessionId;
  const institute =
    mail.instituteId !== undefined || sessionId === null
      ? (mail.instituteId ?? null)
      : db
          .selectFrom('student_sessions')
          .innerJoin('exams', 'exams.id', 'student_sessions.exam_id')
          .select('exams.institute_id')
          .where('student_sessions.id', '=', sessionId);
  const row = await db
    .insertInto('outbox')
    .values({
      kind: mail.kind,
      to_address: mail.to,
      subject: mail.message.subject,
      text_body: mail.message.text,
      html_body: mail.message.html,
      status: 'pending',
      attempts: 0,
      next_attempt_at: mail.now,
      student_session_id: mail.studentSessionId,
      institute_id: institute,
      created_at: mail.now,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** Returns the message, or undefined. */
export async function findOutboxMessage(db: Db, id: number): Promise<OutboxMessage | undefined> {
  const row = await db.selectFrom('outbox').selectAll().where('id', '=', id).executeTakeFirst();
  return row === undefined ? undefined : messageFromRow(row);
}

/**
 * Claims the message for one delivery attempt when it is claimable: `sending` until `until`, one
 * more attempt counted. One statement, so two attempts never both win. Returns the claimed message,
 * or undefined when it is missing or not claimable.
 */
export async function claimOutboxMessage(
  db: Db,
  id: number,
  change: { readonly now: number; readonly until: number },
): Promise<OutboxMessage | undefined> {
  const row = await db
    .updateTable('outbox')
    .set((eb) => ({ status: 'sending', attempts: eb('attempts', '+', 1), next_attempt_at: change.until }))
    .where('id', '=', id)
    .where(claimable(change.now))
    .returningAll()
    .executeTakeFirst();
  return row === undefined ? undefined : messageFromRow(row);
}

function held(claim: OutboxClaim) {
  return (eb: ExpressionBuilder<Tables, 'outbox'>) =>
    eb.and([eb('id', '=', claim.id), eb('status', '=', 'sending'), eb('attempts', '=', claim.attempts)]);
}

/** Marks a claimed message sent. Returns false when the claim was lost (another attempt took it over). */
export async function markOutboxSent(db: Db, claim: OutboxClaim, now: number): Promise<boolean> {
  const result = await db
    .updateTable('outbox')
    .set({ status: 'sent', sent_at: now, last_error: null })
    .where(held(claim))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * Ends a claim that did not send: back to `pending` (a later attempt retries) or `failed` (given up),
 * with the error. Returns false when the claim was lost.
 */
export async function releaseOutboxMessage(
  db: Db,
  claim: OutboxClaim,
  change: { readonly status: 'pending' | 'failed'; readonly error: string; readonly now: number },
): Promise<boolean> {
  const result = await db
    .updateTable('outbox')
    .set({
      status: change.status,
      last_error: change.error.slice(0, MAX_ERROR_LENGTH),
      next_attempt_at: change.now,
    })
    .where(held(claim))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * Keeps a claimable message unsent (`held`: no SMTP server configured). Returns the message as held,
 * or undefined when it is missing or not claimable.
 */
export async function holdOutboxMessage(db: Db, id: number, now: number): Promise<OutboxMessage | undefined> {
  const row = await db
    .updateTable('outbox')
    .set({ status: 'held', next_attempt_at: now })
    .where('id', '=', id)
    .where(claimable(now))
    .returningAll()
    .executeTakeFirst();
  return row === undefined ? undefined : messageFromRow(row);
}

/**
 * Puts every message in one of `statuses` back to `pending`, error cleared. Returns their ids,
 * ascending. Run it in the transaction that enqueues their jobs.
 */
export async function requeueOutboxMessages(
  db: Db,
  statuses: readonly OutboxStatus[],
  now: number,
): Promise<number[]> {
  if (statuses.length === 0) return [];
  const rows = await db
    .updateTable('outbox')
    .set({ status: 'pending', last_error: null, next_attempt_at: now })
    .where('status', 'in', [...statuses])
    .returning('id')
    .execute();
  return rows.map((row) => row.id).sort((a, b) => a - b);
}

/**
 * Deletes up to `limit` messages sent before `before`, oldest id first, in one statement (a bounded
 * batch, so a long history never holds its locks for long). Only `sent` rows go: `pending`,
 * `sending`, `held` and `failed` ones are what delivery and redelivery still need. A sent row whose
 * `mail.deliver` job is still queued or running is kept too, so that job finds it sent rather than
 * missing; the queue stores that job's payload as JSON.stringify of DeliveryPayload, `{"outboxId":N}`.
 * On PostgreSQL the batch skips rows another sweeper has locked. Returns how many were deleted.
 */
export async function deleteSentOutboxMessages(
  db: Db,
  dialect: DialectName,
  batch: { readonly before: number; readonly limit: number },
): Promise<number> {
  const old = db
    .selectFrom('outbox')
    .select('outbox.id')
    .where('outbox.status', '=', 'sent')
    .where('outbox.sent_at', '<', batch.before)
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('jobs')
            .select(sql.lit(1).as('one'))
            .where('jobs.kind', '=', MAIL_DELIVER_JOB)
            .where('jobs.status', 'in', ACTIVE_JOB_STATUSES)
            .where(
              'jobs.payload',
              '=',
              sql<string>`${'{"outboxId":'} || cast(${sql.ref('outbox.id')} as text) || ${'}'}`,
            ),
        ),
      ),
    )
    .orderBy('outbox.id')
    .limit(batch.limit);
  const candidates = dialect === 'postgres' ? old.forUpdate().skipLocked() : old;
  const result = await db.deleteFrom('outbox').where('id', 'in', candidates).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** A message as a listing shows it: everything but the two bodies. */
export type OutboxSummary = Omit<OutboxMessage, 'text' | 'html'>;

/**
 * The newest messages first (by id), at most `limit`, only those in `statuses` when that is given.
 * The bodies are left out: a listing is for finding a message, `findOutboxMessage` reads it.
 * Returns them.
 */
export async function listOutboxMessages(
  db: Db,
  filter: { readonly statuses?: readonly OutboxStatus[]; readonly limit: number },
): Promise<OutboxSummary[]> {
  let query = db
    .selectFrom('outbox')
    .select([
      'id',
      'kind',
      'to_address',
      'subject',
      'status',
      'attempts',
      'next_attempt_at',
      'last_error',
      'student_session_id',
      'created_at',
      'sent_at',
      'institute_id',
    ])
    .orderBy('id', 'desc')
    .limit(filter.limit);
  if (filter.statuses !== undefined) query = query.where('status', 'in', [...filter.statuses]);
  const rows = await query.execute();
  return rows.map((row) => {
    const { text: _text, html: _html, ...summary } = messageFromRow({ ...row, text_body: '', html_body: '' });
    return summary;
  });
}

/** Which messages a staff listing may return: every one (a superuser) or one institute's. */
export type OutboxScope =
  { readonly kind: 'all' } | { readonly kind: 'institute'; readonly instituteId: number };

/**
 * One page of the messages in `scope`, only those in `statuses` when that is given, filtered, sorted
 * and paged by `list`. The bodies are left out, as in listOutboxMessages. Returns the page with the
 * total count of matching messages.
 */
export async function listOutboxPage(
  db: Db,
  filter: { readonly scope: OutboxScope; readonly statuses?: readonly OutboxStatus[] },
  list: ListQuery,
): Promise<Page<OutboxSummary>> {
  let scoped = db.selectFrom('outbox');
  if (filter.scope.kind === 'institute')
    scoped = scoped.where('outbox.institute_id', '=', filter.scope.instituteId);
  if (filter.statuses !== undefined) scoped = scoped.where('outbox.status', 'in', [...filter.statuses]);
  const base = applyConditions(scoped, list, 'outbox');
  const columns = [
    'outbox.id',
    'outbox.kind',
    'outbox.to_address',
    'outbox.subject',
    'outbox.status',
    'outbox.attempts',
    'outbox.next_attempt_at',
    'outbox.last_error',
    'outbox.student_session_id',
    'outbox.created_at',
    'outbox.sent_at',
    'outbox.institute_id',
  ] as const;
  const [countRow, rows] = await Promise.all([
    base.select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow(),
    applyOrderAndPage(base.select(columns), list, 'outbox').execute(),
  ]);
  const items = rows.map((row) => {
    const { text: _text, html: _html, ...summary } = messageFromRow({ ...row, text_body: '', html_body: '' });
    return summary;
  });
  return { items, total: Number(countRow.count), page: list.page, limit: list.limit };
}

/**
 * Puts one message back to `pending`, error cleared, if it is in one of `statuses` (checked in the
 * same statement, so of two racing calls one wins). Run it in the transaction that enqueues its job.
 * Returns the message as it now is, or undefined when it is missing or in another status.
 */
export async function requeueOutboxMessage(
  db: Db,
  id: number,
  statuses: readonly OutboxStatus[],
  now: number,
): Promise<OutboxMessage | undefined> {
  const row = await db
    .updateTable('outbox')
    .set({ status: 'pending', last_error: null, next_attempt_at: now })
    .where('id', '=', id)
    .where('status', 'in', [...statuses])
    .returningAll()
    .executeTakeFirst();
  return row === undefined ? undefined : messageFromRow(row);
}

/** The newest exam-link email of one student session, as the exam's students screen shows it. */
export interface ExamLinkDelivery {
  readonly studentSessionId: number;
  readonly outboxId: number;
  readonly status: OutboxStatus;
  readonly lastError: string | null;
  readonly createdAt: number;
  readonly sentAt: number | null;
}

/**
 * The id of the newest exam-link email of each session of exam `examId` that has one, as a subquery
 * read through the outbox's institute index; the caller narrows which sessions count.
 */
function newestExamLinkIds(db: Db, scope: { readonly examId: number; readonly instituteId: number }) {
  return db
    .selectFrom('outbox')
    .innerJoin('student_sessions', 'student_sessions.id', 'outbox.student_session_id')
    .select((eb) => eb.fn.max('outbox.id').as('id'))
    .where('outbox.institute_id', '=', scope.instituteId)
    .where('outbox.kind', '=', 'exam_link')
    .where('student_sessions.exam_id', '=', scope.examId)
    .groupBy('outbox.student_session_id');
}

/**
 * The newest exam-link email of each session of exam `examId` that `sessionIds` names (a session
 * emailed twice, after a redelivery or a new link, counts once, by its latest email). The outbox is
 * read through its institute index, so the scan is bounded by the institute's unswept mail. Returns
 * them by session id ascending; sessions without such an email are left out.
 */
export async function latestExamLinkDeliveries(
  db: Db,
  scope: { readonly examId: number; readonly instituteId: number; readonly sessionIds: readonly number[] },
): Promise<ExamLinkDelivery[]> {
  if (scope.sessionIds.length === 0) return [];
  const latest = newestExamLinkIds(db, scope).where('outbox.student_session_id', 'in', [...scope.sessionIds]);
  const rows = await db
    .selectFrom('outbox')
    .select(['id', 'student_session_id', 'status', 'last_error', 'created_at', 'sent_at'])
    .where('id', 'in', latest)
    .orderBy('student_session_id')
    .execute();
  return rows.flatMap((row) => {
    const status = OUTBOX_STATUSES.find((known) => known === row.status);
    if (status === undefined || row.student_session_id === null) return [];
    return [
      {
        studentSessionId: row.student_session_id,
        outboxId: row.id,
        status,
        lastError: row.last_error,
        createdAt: row.created_at,
        sentAt: row.sent_at,
      },
    ];
  });
}

/**
 * How many of the exam's unarchived sessions have their newest exam-link email in each outbox
 * status. Returns the counts (a status nobody is in is left out).
 */
export async function examLinkStatusCounts(
  db: Db,
  scope: { readonly examId: number; readonly instituteId: number },
): Promise<Partial<Record<OutboxStatus, number>>> {
  const latest = newestExamLinkIds(db, scope).where('student_sessions.archived', '=', false);
  const rows = await db
    .selectFrom('outbox')
    .select(['status', (eb) => eb.fn.countAll<number>().as('count')])
    .where('id', 'in', latest)
    .groupBy('status')
    .execute();
  const counts: Partial<Record<OutboxStatus, number>> = {};
  for (const row of rows) {
    const status = OUTBOX_STATUSES.find((known) => known === row.status);
    if (status !== undefined) counts[status] = Number(row.count);
  }
  return counts;
}
