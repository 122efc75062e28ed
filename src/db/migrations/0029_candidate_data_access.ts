// Frozen in time: this migration imports nothing from src/ and must never change once released.
// A change to the schema is a new migration file.
import type { Kysely } from 'kysely';

/**
 * Step 19, the candidate's access to their own data (docs/candidate-data.md): `candidate_data_codes`,
 * one row per one-time code emailed to a session's address. Only the SHA-256 of the code is kept,
 * with its expiry and the wrong tries against it. A code that was entered right gets a download
 * key (again only its SHA-256) and that key's expiry: the expiring address of the zip. Rows go with
 * their session. An index on the audit log's target serves the "who looked" lists.
 */
export async function up(db: Kysely<any>, dialect: 'sqlite' | 'postgres'): Promise<void> {
  await db.schema
    .createTable('candidate_data_codes')
    .addColumn('id', 'integer', (col) =>
      dialect === 'sqlite'
        ? col.primaryKey().autoIncrement()
        : col.primaryKey().generatedByDefaultAsIdentity(),
    )
    .addColumn('student_session_id', 'integer', (col) =>
      col.notNull().references('student_sessions.id').onDelete('cascade'),
    )
    .addColumn('code_hash', 'text', (col) => col.notNull())
    .addColumn('attempts', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .addColumn('expires_at', 'bigint', (col) => col.notNull())
    .addColumn('used_at', 'bigint')
    .addColumn('download_hash', 'text')
    .addColumn('download_expires_at', 'bigint')
    .execute();
  await db.schema
    .createIndex('candidate_data_codes_session')
    .on('candidate_data_codes')
    .columns(['student_session_id', 'created_at'])
    .execute();
  await db.schema
    .createIndex('candidate_data_codes_download')
    .on('candidate_data_codes')
    .column('download_hash')
    .unique()
    .execute();
  // "Who looked": a session's staff views are read by target (the candidate's zip, the console),
  // and each view first asks whether the same user looked within the last minutes.
  await db.schema
    .createIndex('audit_events_target')
    .on('audit_events')
    .columns(['target_type', 'target_id', 'action', 'created_at'])
    .execute();
}
