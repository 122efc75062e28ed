// Frozen in time: this migration imports nothing from src/ and must never change once released.
// A change to the schema is a new migration file.
import type { Kysely } from 'kysely';

/**
 * The phone as a second camera (step 13, docs/room.md): a `mobile_cam` exam's student pairs a phone
 * with the session, and the phone records a side view as a third stream.
 * - `student_sessions.mobile_token`: the pairing token, the phone's only credential (unique where
 *   set; null until the room first shows the pairing code).
 * - `student_sessions.mobile_status`: `not_paired`, `paired`, `streaming` or `lost`.
 * - `student_sessions.mobile_seen_at`: when the phone was last heard from (epoch ms).
 * - `student_sessions.mobile_device`: the phone's browser and system as the phone reported them.
 * The phone's chunks are `session_files` rows of kind `mobile_recording`, and its finalised recording
 * a `recordings` row of source `mobile`: both tables take the new values as they are.
 */
export async function up(db: Kysely<any>): Promise<void> {
  // One column per statement: SQLite's ALTER TABLE adds a single column at a time.
  await db.schema.alterTable('student_sessions').addColumn('mobile_token', 'text').execute();
  await db.schema
    .alterTable('student_sessions')
    .addColumn('mobile_status', 'text', (col) => col.notNull().defaultTo('not_paired'))
    .execute();
  await db.schema.alterTable('student_sessions').addColumn('mobile_seen_at', 'bigint').execute();
  await db.schema.alterTable('student_sessions').addColumn('mobile_device', 'text').execute();
  await db.schema
    .createIndex('student_sessions_mobile_token')
    .on('student_sessions')
    .column('mobile_token')
    .unique()
    .where('mobile_token', 'is not', null)
    .execute();
}
