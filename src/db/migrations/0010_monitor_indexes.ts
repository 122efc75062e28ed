// Frozen in time: this migration imports nothing from src/ and must never change once released.
// A change to the schema is a new migration file.
import type { Kysely } from 'kysely';

/**
 * Indexes for the live monitor (docs/live-monitor.md), which asks once a second per open monitor
 * for an exam's sessions changed since a moment and for incidents created since then. Without
 * them each poll reads every session of the exam; with them it reads only what changed.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex('student_sessions_exam_updated')
    .on('student_sessions')
    .columns(['exam_id', 'updated_at'])
    .execute();
  await db.schema.createIndex('incidents_created').on('incidents').column('created_at').execute();
}
