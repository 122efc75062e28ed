import type { Db } from '../../db/database.ts';
import type { ClockExam } from './deadline.ts';

/**
 * The clock fields (deadline.ts ClockExam) of the exams `examIds` names, in one query, keyed by exam
 * id. Ids of exams that do not exist are left out of the map. Throws what the database throws.
 */
export async function findExamClocks(db: Db, examIds: readonly number[]): Promise<Map<number, ClockExam>> {
  const clocks = new Map<number, ClockExam>();
  const unique = [...new Set(examIds)];
  if (unique.length === 0) return clocks;
  const rows = await db
    .selectFrom('exams')
    .select(['id', 'use_duration', 'duration_minutes', 'start_time', 'end_time', 'extra_time_beyond_end'])
    .where('id', 'in', unique)
    .execute();
  for (const row of rows) {
    clocks.set(row.id, {
      useDuration: Boolean(row.use_duration),
      durationMinutes: row.duration_minutes === null ? null : Number(row.duration_minutes),
      // PostgreSQL's driver may read BIGINT as text.
      startTime: row.start_time === null ? null : Number(row.start_time),
      endTime: row.end_time === null ? null : Number(row.end_time),
      extraTimeBeyondEnd: Boolean(row.extra_time_beyond_end),
    });
  }
  return clocks;
}

/** What an exam that could not be found reads as: no duration, no window, so no deadline. */
export const NO_EXAM_CLOCK: ClockExam = Object.freeze({
  useDuration: false,
  durationMinutes: null,
  startTime: null,
  endTime: null,
  extraTimeBeyondEnd: true,
});
