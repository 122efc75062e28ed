import type { Selectable } from 'kysely';
import type { Db } from '../../db/database.ts';
import { prepared } from '../../db/prepared.ts';
import type { IncidentsTable } from '../../db/tables.ts';
import type { Incident } from './student-session.ts';

/** The domain incident of a row (PostgreSQL's bigint times arrive as text; made numbers here). */
export function incidentFromRow(row: Selectable<IncidentsTable>): Incident {
  return {
    id: row.id,
    studentSessionId: row.student_session_id,
    comment: row.comment,
    offsetTime: row.offset_time,
    type: row.type,
    source: row.source,
    confidence: row.confidence === null ? null : Number(row.confidence),
    endOffsetTime: row.end_offset_time,
    dismissedAt: row.dismissed_at === null ? null : Number(row.dismissed_at),
    dismissedBy: row.dismissed_by,
    informational: Boolean(row.informational),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** Records an incident on a session. Returns it. */
export async function insertIncident(
  db: Db,
  studentSessionId: number,
  incident: { readonly comment: string; readonly offsetTime: number | null },
  now: number,
): Promise<Incident> {
  const row = await db
    .insertInto('incidents')
    .values({
      student_session_id: studentSessionId,
      comment: incident.comment,
      offset_time: incident.offsetTime,
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return incidentFromRow(row);
}

/** One session's incidents (every read of one session, the room's polls included), compiled once. */
const incidentsOfOne = prepared([1] as [number], (db, studentSessionId) =>
  db.selectFrom('incidents').selectAll().where('student_session_id', '=', studentSessionId).orderBy('id'),
);

/**
 * The incidents of several sessions in one query (a list page never costs a query per session).
 * Returns them by session id, oldest first; a session without incidents has no entry.
 */
export async function incidentsOf(
  db: Db,
  studentSessionIds: readonly number[],
): Promise<Map<number, Incident[]>> {
  const bySession = new Map<number, Incident[]>();
  if (studentSessionIds.length === 0) return bySession;
  const [only] = studentSessionIds;
  const rows =
    studentSessionIds.length === 1 && only !== undefined
      ? await incidentsOfOne(db, [only])
      : await db
          .selectFrom('incidents')
          .selectAll()
          .where('student_session_id', 'in', studentSessionIds)
          .orderBy('id')
          .execute();
  for (const row of rows) {
    const list = bySession.get(row.student_session_id) ?? [];
    list.push(incidentFromRow(row));
    bySession.set(row.student_session_id, list);
  }
  return bySession;
}
