// Frozen in time: this migration imports nothing from src/ and must never change once released.
// A change to the schema is a new migration file.
import type { Kysely } from 'kysely';

/**
 * The recording profile (step 18, docs/recordings.md, "Recording profile"):
 * - `exams.recording_quality`: the level the room records at, `low`, `standard` or
 *   `high`. Existing exams take `standard`, the new default (under 100 MB per candidate-hour for
 *   webcam and screen together).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('exams')
    .addColumn('recording_quality', 'text', (col) => col.notNull().defaultTo('standard'))
    .execute();
}
