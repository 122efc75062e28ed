import { type RawBuilder, sql } from 'kysely';
import type { Db, DialectName } from '../../db/database.ts';
import { parseStoredAccommodations } from '../student-sessions/accommodations.ts';
import { incidentFromRow } from '../student-sessions/incidents.repository.ts';
import type { Incident } from '../student-sessions/student-session.ts';
import { FLAG_KIND, FLAG_SENTENCES, FLAG_SOURCE, FLAGS_RATE_LOWERED_KIND, isFlagType } from './flag-types.ts';
import type { FlagReport, StoredFlag } from './flags.ts';
import { isInformationalFlag } from './informational.ts';
import {
  DURATION_FACTOR_MAX,
  DURATION_UNIT_SECONDS,
  FLAG_WEIGHTS,
  SCORE_EPSILON,
  SUSPICION_SCORE_MAX,
} from './score.ts';

/** The incident `incidentId` of session `sessionId`, or undefined when that session has no such incident. */
export async function findIncidentOfSession(
  db: Db,
  sessionId: number,
  incidentId: number,
): Promise<Incident | undefined> {
  const row = await db
    .selectFrom('incidents')
    .selectAll()
    .where('id', '=', incidentId)
    .where('student_session_id', '=', sessionId)
    .executeTakeFirst();
  return row === undefined ? undefined : incidentFromRow(row);
}

/**
 * Marks an incident dismissed by `userId` at `now`, unless it already is (the first dismissal is
 * kept); with `userId` null, clears the mark. Returns the incident as saved, or undefined if it vanished.
 */
export async function setIncidentDismissal(
  db: Db,
  incidentId: number,
  dismissal: { readonly userId: number; readonly now: number } | null,
  now: number,
): Promise<Incident | undefined> {
  if (dismissal === null) {
    await db
      .updateTable('incidents')
      .set({ dismissed_at: null, dismissed_by: null, updated_at: now })
      .where('id', '=', incidentId)
      .where('dismissed_at', 'is not', null)
      .execute();
  } else {
    await db
      .updateTable('incidents')
      .set({ dismissed_at: dismissal.now, dismissed_by: dismissal.userId, updated_at: now })
      .where('id', '=', incidentId)
      .where('dismissed_at', 'is', null)
      .execute();
  }
  const row = await db.selectFrom('incidents').selectAll().where('id', '=', incidentId).executeTakeFirst();
  return row === undefined ? undefined : incidentFromRow(row);
}

type EpisodeRow = {
  episode_key: string | null;
  type: string | null;
  confidence: number | null;
  offset_time: number | null;
  end_offset_time: number | null;
  comment: string;
  informational: boolean | number;
  created_at: number | string;
  updated_at: number | string;
};

function flagFromRow(row: EpisodeRow): StoredFlag {
  if (row.episode_key === null || !isFlagType(row.type))
    throw new Error('an episode row without its key or type');
  return {
    key: row.episode_key,
    type: row.type,
    confidence: Number(row.confidence ?? 0),
    offsetTime: row.offset_time,
    endOffsetTime: row.end_offset_time,
    comment: row.comment,
    informational: Boolean(row.informational),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

const EPISODE_COLUMNS = [
  'episode_key',
  'type',
  'confidence',
  'offset_time',
  'end_offset_time',
  'comment',
  'informational',
  'created_at',
  'updated_at',
] as const;

/** The session's episode with this key, or undefined. */
export async function findEpisode(db: Db, sessionId: number, key: string): Promise<StoredFlag | undefined> {
  const row = await db
    .selectFrom('incidents')
    .select(EPISODE_COLUMNS)
    .where('student_session_id', '=', sessionId)
    .where('episode_key', '=', key)
    .executeTakeFirst();
  return row === undefined ? undefined : flagFromRow(row);
}

/**
 * Inserts the first report of an episode as an incident (kind `flag`, source `automatic`, the
 * type's sentence as its comment), informational (informational.ts) when the session's
 * accommodations, as stored at this moment, say so: a change of accommodations during the exam
 * applies to the episodes that begin after it. Returns it, or undefined when a racing report of
 * the same key inserted first (the unique index on session and key decides).
 */
export async function insertEpisode(
  db: Db,
  sessionId: number,
  report: FlagReport & { readonly offsetTime: number | null },
  now: number,
): Promise<StoredFlag | undefined> {
  const session = await db
    .selectFrom('student_sessions')
    .select('accommodations')
    .where('id', '=', sessionId)
    .executeTakeFirst();
  const accommodations = parseStoredAccommodations(session?.accommodations ?? null);
  const row = await db
    .insertInto('incidents')
    .values({
      student_session_id: sessionId,
      kind: FLAG_KIND,
      source: FLAG_SOURCE,
      type: report.type,
      confidence: report.confidence,
      offset_time: report.offsetTime,
      end_offset_time: report.endOffsetTime,
      episode_key: report.key,
      comment: FLAG_SENTENCES[report.type],
      informational: isInformationalFlag(report.type, accommodations),
      created_at: now,
      updated_at: now,
    })
    .onConflict((conflict) =>
      conflict
        .columns(['student_session_id', 'episode_key'])
        .where('episode_key', 'is not', null)
        .doNothing(),
    )
    .returning(EPISODE_COLUMNS)
    .executeTakeFirst();
  return row === undefined ? undefined : flagFromRow(row);
}

/**
 * A later report of an episode: sets its end (when the report names one) and raises its confidence
 * (never lowers it). Returns the episode as saved, or undefined if it vanished.
 */
export async function updateEpisode(
  db: Db,
  sessionId: number,
  key: string,
  change: { readonly confidence: number; readonly endOffsetTime: number | null },
  now: number,
): Promise<StoredFlag | undefined> {
  await db
    .updateTable('incidents')
    .set((eb) => ({
      confidence: eb
        .case()
        .when('confidence', '<', change.confidence)
        .then(change.confidence)
        .else(eb.ref('confidence'))
        .end(),
      ...(change.endOffsetTime === null ? {} : { end_offset_time: change.endOffsetTime }),
      updated_at: now,
    }))
    .where('student_session_id', '=', sessionId)
    .where('episode_key', '=', key)
    .execute();
  return findEpisode(db, sessionId, key);
}

/**
 * Stores the detection rate a room reported and, when it was lowered, the incident that says so,
 * in one transaction. Returns nothing.
 */
export async function recordFlagsRate(
  db: Db,
  sessionId: number,
  rate: { readonly hz: number; readonly lowered: { comment: string; offsetTime: number | null } | null },
  now: number,
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx
      .updateTable('student_sessions')
      .set({ flags_rate_hz: rate.hz })
      .where('id', '=', sessionId)
      .execute();
    if (rate.lowered === null) return;
    await trx
      .insertInto('incidents')
      .values({
        student_session_id: sessionId,
        kind: FLAGS_RATE_LOWERED_KIND,
        comment: rate.lowered.comment,
        offset_time: rate.lowered.offsetTime,
        created_at: now,
        updated_at: now,
      })
      .execute();
  });
}

/** The detection rate a session's room last reported, or null. */
export async function findFlagsRate(db: Db, sessionId: number): Promise<number | null> {
  const row = await db
    .selectFrom('student_sessions')
    .select('flags_rate_hz')
    .where('id', '=', sessionId)
    .executeTakeFirst();
  return row?.flags_rate_hz === null || row?.flags_rate_hz === undefined ? null : Number(row.flags_rate_hz);
}

/**
 * The suspicion score (score.ts) of the session whose id is `sessionIdColumn`, as an SQL
 * expression for a select list, so the review queue can sort and filter on it: the same formula
 * and constants, summed over the session's undismissed automatic flags that were raised (not
 * informational). Constants go in as literals:
 * they are this module's own numbers and type names, never input.
 */
export function suspicionScoreSql(dialect: DialectName, sessionIdColumn: string): RawBuilder<number> {
  const weight = sql.join(
    Object.entries(FLAG_WEIGHTS).map(([type, points]) => sql`when ${sql.lit(type)} then ${sql.lit(points)}`),
    sql` `,
  );
  const longest = (DURATION_FACTOR_MAX - 1) * DURATION_UNIT_SECONDS;
  const points = sql`(case f.type ${weight} else 0 end) * (case when f.confidence is null then 0
      when f.confidence > 1 then 1 when f.confidence < 0 then 0 else f.confidence end)
    * (case when f.offset_time is null or f.end_offset_time is null or f.end_offset_time <= f.offset_time then 1.0
      when f.end_offset_time - f.offset_time >= ${sql.lit(longest)} then ${sql.lit(DURATION_FACTOR_MAX)}.0
      else 1.0 + (f.end_offset_time - f.offset_time) / ${sql.lit(DURATION_UNIT_SECONDS)}.0 end)`;
  const total = sql`(select coalesce(sum(${points}), 0) from incidents f
    where f.student_session_id = ${sql.ref(sessionIdColumn)} and f.source = ${sql.lit(FLAG_SOURCE)}
      and f.dismissed_at is null and not f.informational)`;
  // Rounded down the same way on both databases: SQLite's integer cast truncates (the total is
  // never negative), PostgreSQL's would round, so it floors first.
  const floored =
    dialect === 'postgres'
      ? sql`cast(floor(${total} + ${sql.lit(SCORE_EPSILON)}) as integer)`
      : sql`cast(${total} + ${sql.lit(SCORE_EPSILON)} as integer)`;
  return sql<number>`(case when ${total} >= ${sql.lit(SUSPICION_SCORE_MAX)} then ${sql.lit(SUSPICION_SCORE_MAX)} else ${floored} end)`;
}
