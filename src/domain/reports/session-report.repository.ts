import type { Db } from '../../db/database.ts';
import type { ReportIncident } from './session-report.ts';

/** The SQL of session reports that no other repository has. */

/**
 * The session's incidents as the report lists them, with their kind (room events, proctors' and
 * reviewers' remarks, recording gaps), oldest first. Returns them.
 */
export async function listReportIncidents(db: Db, studentSessionId: number): Promise<ReportIncident[]> {
  const rows = await db
    .selectFrom('incidents')
    .select(['id', 'kind', 'comment', 'offset_time', 'created_at'])
    .where('student_session_id', '=', studentSessionId)
    .orderBy('id')
    .execute();
  return rows.map((row) => ({
    id: row.id,
    kind: row.kind,
    comment: row.comment,
    offsetSeconds: row.offset_time === null ? null : Number(row.offset_time),
    createdAt: Number(row.created_at),
  }));
}
