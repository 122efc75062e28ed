// Frozen in time: this migration imports nothing from src/ and must never change once released.
// A change to the schema is a new migration file.
import type { Kysely } from 'kysely';

/**
 * Retention of session media (step 9, docs/retention.md). On `student_sessions`: the legal hold an
 * administrator sets (`legal_hold` with its reason, who set or cleared it and when) and
 * `media_purged_at`, the moment the retention sweep removed the session's recordings, photos and
 * uploads (null until then; the sweep's cursor, so a purged session is never looked at again).
 * `session_purges` is the purge log: one row per session and kind of media removed, with how many
 * files and bytes went. Its rows go with their session (and institute).
 */
export async function up(db: Kysely<any>, dialect: 'sqlite' | 'postgres'): Promise<void> {
  await db.schema
    .alterTable('student_sessions')
    .addColumn('legal_hold', 'boolean', (col) => col.notNull().defaultTo(false))
    .execute();
  await db.schema.alterTable('student_sessions').addColumn('legal_hold_reason', 'text').execute();
  // No foreign key: the record of who set a hold must outlive the account.
  await db.schema.alterTable('student_sessions').addColumn('legal_hold_set_by', 'integer').execute();
  await db.schema.alterTable('student_sessions').addColumn('legal_hold_set_at', 'bigint').execute();
  await db.schema.alterTable('student_sessions').addColumn('media_purged_at', 'bigint').execute();
  // The sweep looks for sessions not yet purged, oldest end first.
  await db.schema
    .createIndex('student_sessions_retention')
    .on('student_sessions')
    .columns(['media_purged_at', 'end_time'])
    .execute();

  await db.schema
    .createTable('session_purges')
    .addColumn('id', 'integer', (col) =>
      dialect === 'sqlite'
        ? col.primaryKey().autoIncrement()
        : col.primaryKey().generatedByDefaultAsIdentity(),
    )
    .addColumn('institute_id', 'integer', (col) =>
      col.notNull().references('institutes.id').onDelete('cascade'),
    )
    .addColumn('exam_id', 'integer', (col) => col.notNull())
    .addColumn('student_session_id', 'integer', (col) =>
      col.notNull().references('student_sessions.id').onDelete('cascade'),
    )
    // recording, recording_chunk, photo, upload
    .addColumn('kind', 'text', (col) => col.notNull())
    .addColumn('files', 'integer', (col) => col.notNull())
    .addColumn('bytes', 'bigint', (col) => col.notNull())
    // retention (the sweep); room for other causes later
    .addColumn('reason', 'text', (col) => col.notNull())
    // The institute's session_retention_period (days) the purge applied.
    .addColumn('retention_period', 'integer')
    .addColumn('purged_at', 'bigint', (col) => col.notNull())
    .execute();
  await db.schema
    .createIndex('session_purges_institute')
    .on('session_purges')
    .columns(['institute_id', 'id'])
    .execute();
  await db.schema
    .createIndex('session_purges_session')
    .on('session_purges')
    .columns(['student_session_id', 'id'])
    .execute();
}
