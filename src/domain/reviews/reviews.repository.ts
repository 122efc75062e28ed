import { type Selectable, sql } from 'kysely';
import type { Db, DialectName } from '../../db/database.ts';
import { suspicionScoreSql } from '../flags/flags.repository.ts';
import { applyConditions, applyOrderAndPage } from '../list-query.ts';
import type { SessionReviewsTable } from '../../db/tables.ts';
import type { ListQuery, Page } from '../listing.ts';
import {
  type QueueEntry,
  type ReviewEntry,
  SECOND_REVIEW_STATES,
  type SecondReviewState,
  type Verdict,
  VERDICTS,
} from './review.ts';

/** All SQL of review verdicts and the review queue. */

function verdictOf(value: string): Verdict {
  return VERDICTS.find((verdict) => verdict === value) ?? 'not_reviewed';
}

function secondReviewOf(value: string): SecondReviewState {
  return SECOND_REVIEW_STATES.find((state) => state === value) ?? 'not_required';
}

/** PostgreSQL's driver reads BIGINT (and count) as text; SQLite as a number. */
function numberOrNull(value: unknown): number | null {
  return value === null || value === undefined ? null : Number(value);
}

function entryFromRow(row: Selectable<SessionReviewsTable>): ReviewEntry {
  return {
    id: row.id,
    studentSessionId: row.student_session_id,
    verdict: verdictOf(row.verdict),
    comment: row.comment,
    reviewerId: row.reviewer_id,
    reviewerName: row.reviewer_name,
    secondReview: secondReviewOf(row.second_review),
    createdAt: Number(row.created_at),
  };
}

/** A session's entries, oldest first. */
export async function listReviewEntries(db: Db, studentSessionId: number): Promise<ReviewEntry[]> {
  const rows = await db
    .selectFrom('session_reviews')
    .selectAll()
    .where('student_session_id', '=', studentSessionId)
    .orderBy('id')
    .execute();
  return rows.map(entryFromRow);
}

/** The session's newest entry, or undefined before its first verdict. */
export async function findLatestReviewEntry(
  db: Db,
  studentSessionId: number,
): Promise<ReviewEntry | undefined> {
  const row = await db
    .selectFrom('session_reviews')
    .selectAll()
    .where('student_session_id', '=', studentSessionId)
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row === undefined ? undefined : entryFromRow(row);
}

/**
 * Holds the session's row until the transaction ends (PostgreSQL; SQLite's one connection runs one
 * transaction at a time), so two verdicts on one session are decided one after the other.
 * Returns the session's `reviewed`, or undefined when the session is gone.
 */
export async function lockSessionForReview(
  db: Db,
  dialect: 'sqlite' | 'postgres',
  studentSessionId: number,
): Promise<string | undefined> {
  const query = db.selectFrom('student_sessions').select('reviewed').where('id', '=', studentSessionId);
  const row = await (dialect === 'postgres' ? query.forUpdate() : query).executeTakeFirst();
  return row?.reviewed;
}

/** The id of the session with this room token, or undefined. */
export async function findSessionIdByRoomToken(db: Db, token: string): Promise<number | undefined> {
  const row = await db
    .selectFrom('student_sessions')
    .select('id')
    .where('token', '=', token)
    .executeTakeFirst();
  return row?.id;
}

/** The name of a user, or null when the account is gone. */
export async function findReviewerName(db: Db, userId: number): Promise<string | null> {
  const row = await db.selectFrom('users').select('name').where('id', '=', userId).executeTakeFirst();
  return row?.name ?? null;
}

/**
 * Appends an entry after `previousId` (0 for the first) and sets the session's `reviewed` to
 * `reviewed`. Returns the entry; throws the database's unique violation when another entry followed
 * `previousId` first.
 */
export async function insertReviewEntry(
  db: Db,
  entry: Omit<ReviewEntry, 'id'> & { readonly previousId: number; readonly reviewed: Verdict },
): Promise<ReviewEntry> {
  const row = await db
    .insertInto('session_reviews')
    .values({
      student_session_id: entry.studentSessionId,
      previous_review_id: entry.previousId,
      verdict: entry.verdict,
      comment: entry.comment,
      reviewer_id: entry.reviewerId,
      reviewer_name: entry.reviewerName,
      second_review: entry.secondReview,
      created_at: entry.createdAt,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  await db
    .updateTable('student_sessions')
    .set({ reviewed: entry.reviewed, updated_at: entry.createdAt })
    .where('id', '=', entry.studentSessionId)
    .execute();
  return entryFromRow(row);
}

/**
 * One page of an exam's review queue: its finished sessions that are not archived, each with its
 * newest verdict and its number of incidents, filtered and sorted by `list` (fields of
 * REVIEW_QUEUE_LIST_FIELDS). Returns the page with the total count.
 */
export async function listReviewQueue(
  db: Db,
  dialect: DialectName,
  examId: number,
  list: ListQuery,
): Promise<Page<QueueEntry>> {
  const sessions = db
    .selectFrom('student_sessions as s')
    .leftJoin('session_reviews as r', (join) =>
      join
        .onRef('r.student_session_id', '=', 's.id')
        .on(sql<boolean>`r.id = (select max(l.id) from session_reviews l where l.student_session_id = s.id)`),
    )
    .select([
      's.id as id',
      's.name as name',
      's.email as email',
      's.attempt as attempt',
      's.start_time as start_time',
      's.end_time as end_time',
      's.reviewed as reviewed',
      'r.comment as comment',
      'r.reviewer_id as reviewer_id',
      'r.reviewer_name as reviewer_name',
      'r.created_at as reviewed_at',
    ])
    .select((eb) => [
      eb.fn.coalesce('r.verdict', 's.reviewed').as('verdict'),
      eb.fn.coalesce('r.second_review', sql<string>`'not_required'`).as('second_review'),
      eb
        .selectFrom('incidents as i')
        .select((inner) => inner.fn.countAll<number>().as('count'))
        .whereRef('i.student_session_id', '=', 's.id')
        .as('incidents_count'),
      // Written in SQL so the queue can sort and filter on it (src/domain/flags/score.ts).
      suspicionScoreSql(dialect, 's.id').as('suspicion_score'),
      // The candidate's appeal (docs/appeals.md): `none` without one; open ones lead the queue.
      eb.fn
        .coalesce(
          eb.selectFrom('appeals as a').select('a.status').whereRef('a.student_session_id', '=', 's.id'),
          sql<string>`'none'`,
        )
        .as('appeal_status'),
      sql<number>`case when exists (select 1 from appeals o where o.student_session_id = s.id and o.status = 'open') then 1 else 0 end`.as(
        'appeal_open',
      ),
    ])
    .where('s.exam_id', '=', examId)
    .where('s.status', '=', 'exam_finished')
    .where('s.archived', '=', false);
  const base = applyConditions(db.selectFrom(sessions.as('queue')), list, 'queue');
  const [countRow, rows] = await Promise.all([
    base.select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow(),
    applyOrderAndPage(base.selectAll('queue'), list, 'queue').execute(),
  ]);
  return {
    items: rows.map((row) => ({
      studentSessionId: row.id,
      name: row.name,
      email: row.email,
      attempt: row.attempt,
      startTime: numberOrNull(row.start_time),
      endTime: numberOrNull(row.end_time),
      incidentsCount: Number(row.incidents_count ?? 0),
      suspicionScore: Number(row.suspicion_score ?? 0),
      verdict: row.verdict,
      secondReview: secondReviewOf(row.second_review),
      reviewed: row.reviewed,
      comment: row.comment,
      reviewerId: row.reviewer_id,
      reviewerName: row.reviewer_name,
      reviewedAt: numberOrNull(row.reviewed_at),
      appealStatus: row.appeal_status,
    })),
    total: Number(countRow.count),
    page: list.page,
    limit: list.limit,
  };
}
