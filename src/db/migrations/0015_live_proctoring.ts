// Frozen in time: this migration imports nothing from src/ and must never change once released.
// A change to the schema is a new migration file.
import type { Kysely } from 'kysely';

/**
 * Live proctoring (step 10, docs/api-live.md). `live_messages` is the chat between a session's
 * proctors and its candidate: one row per message, never changed, going with its session;
 * `user_id` names the proctor who wrote it (null for the candidate's, and once the account is gone).
 * On `student_sessions`: `live_status` (offline, connecting, live: the signalling hub's view of the
 * candidate's connection), and the candidate's clock: `clock_paused_at` (when a running pause began,
 * null while the clock runs) and `clock_paused_ms` (the total of the pauses that ended). On `exams`:
 * `live_id_check`, whether a proctor must admit each candidate after checking the ID live.
 */
export async function up(db: Kysely<any>, dialect: 'sqlite' | 'postgres'): Promise<void> {
  await db.schema
    .createTable('live_messages')
    .addColumn('id', 'integer', (col) =>
      dialect === 'sqlite'
        ? col.primaryKey().autoIncrement()
        : col.primaryKey().generatedByDefaultAsIdentity(),
    )
    .addColumn('student_session_id', 'integer', (col) =>
      col.notNull().references('student_sessions.id').onDelete('cascade'),
    )
    // proctor, candidate
    .addColumn('sender', 'text', (col) => col.notNull())
    .addColumn('user_id', 'integer', (col) => col.references('users.id').onDelete('set null'))
    .addColumn('body', 'text', (col) => col.notNull())
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .execute();
  // A session's conversation, newest first (the lists read the newest 200).
  await db.schema
    .createIndex('live_messages_session')
    .on('live_messages')
    .columns(['student_session_id', 'id'])
    .execute();

  // One column per statement: SQLite's ALTER TABLE adds a single column at a time.
  await db.schema
    .alterTable('student_sessions')
    .addColumn('live_status', 'text', (col) => col.notNull().defaultTo('offline'))
    .execute();
  await db.schema.alterTable('student_sessions').addColumn('clock_paused_at', 'bigint').execute();
  await db.schema
    .alterTable('student_sessions')
    .addColumn('clock_paused_ms', 'bigint', (col) => col.notNull().defaultTo(0))
    .execute();

  await db.schema
    .alterTable('exams')
    .addColumn('live_id_check', 'boolean', (col) => col.notNull().defaultTo(false))
    .execute();
}
