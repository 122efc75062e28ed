// Frozen in time: this migration imports nothing from src/ and must never change once released.
// A change to the schema is a new migration file.
import type { Kysely } from 'kysely';

/**
 * Automated flags (step 12, docs/automated-flags.md): detectors in the candidate's room report
 * episodes (no face, several faces, looking away, speech, a tab switch...) that are stored as
 * incidents.
 * - `incidents`: `type` (the flag's type, null for other incidents), `source` (`automatic` for a
 *   flag; null for incidents written before, by staff or by the room's events), `confidence` (0..1),
 *   `end_offset_time` (seconds since the start when the episode ended; null while it lasts),
 *   `episode_key` (the room's id of the episode, so a resent report updates rather than duplicates:
 *   unique per session where set), `dismissed_at` / `dismissed_by` (a reviewer dismissed the flag;
 *   it is kept, marked).
 * - `exams`: `automated_flags` (whether the room runs the detectors) and `flag_settings` (JSON of
 *   the thresholds; null means the defaults).
 * - `student_sessions`: `flags_rate_hz` (the detection rate the room last reported; null before),
 *   kept so a reviewer sees when a slow device analysed less often.
 */
export async function up(db: Kysely<any>): Promise<void> {
  // One column per statement: SQLite's ALTER TABLE adds a single column at a time.
  await db.schema.alterTable('incidents').addColumn('type', 'text').execute();
  await db.schema.alterTable('incidents').addColumn('source', 'text').execute();
  await db.schema.alterTable('incidents').addColumn('confidence', 'real').execute();
  await db.schema.alterTable('incidents').addColumn('end_offset_time', 'integer').execute();
  await db.schema.alterTable('incidents').addColumn('episode_key', 'text').execute();
  await db.schema.alterTable('incidents').addColumn('dismissed_at', 'bigint').execute();
  await db.schema
    .alterTable('incidents')
    .addColumn('dismissed_by', 'integer', (col) => col.references('users.id').onDelete('set null'))
    .execute();
  await db.schema
    .createIndex('incidents_episode')
    .on('incidents')
    .columns(['student_session_id', 'episode_key'])
    .unique()
    .where('episode_key', 'is not', null)
    .execute();

  await db.schema
    .alterTable('exams')
    .addColumn('automated_flags', 'boolean', (col) => col.notNull().defaultTo(false))
    .execute();
  await db.schema.alterTable('exams').addColumn('flag_settings', 'text').execute();

  await db.schema.alterTable('student_sessions').addColumn('flags_rate_hz', 'real').execute();
}
