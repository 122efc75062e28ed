// Frozen in time: this migration imports nothing from src/ and must never change once released.
// A change to the schema is a new migration file.
import type { Kysely } from 'kysely';

/**
 * Finalised recordings (docs/recordings.md): one row per session and stream (`webcam`, `screen`),
 * written by the `recording.finalize` job as it assembles the stream's chunks into one seekable
 * WebM file. Times are epoch milliseconds; `gaps` is a JSON array of `{"start", "end"}` in seconds
 * of video time; `file_id` names the finished file once the recording is `completed`.
 */
export async function up(db: Kysely<any>, dialect: 'sqlite' | 'postgres'): Promise<void> {
  await db.schema
    .createTable('recordings')
    .addColumn('id', 'integer', (col) =>
      dialect === 'sqlite'
        ? col.primaryKey().autoIncrement()
        : col.primaryKey().generatedByDefaultAsIdentity(),
    )
    .addColumn('student_session_id', 'integer', (col) =>
      col.notNull().references('student_sessions.id').onDelete('cascade'),
    )
    // `webcam` or `screen`.
    .addColumn('source', 'text', (col) => col.notNull())
    // `queued`, `processing`, `completed` or `failed`.
    .addColumn('status', 'text', (col) => col.notNull())
    // The wall-clock moment of video time 0 (the session's recording start).
    .addColumn('started_at', 'bigint')
    .addColumn('duration_seconds', 'double precision')
    .addColumn('gaps', 'text', (col) => col.notNull().defaultTo('[]'))
    .addColumn('file_id', 'integer', (col) => col.references('files.id').onDelete('set null'))
    .addColumn('storage_key', 'text')
    .addColumn('size', 'bigint')
    .addColumn('chunks', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('chunks_damaged', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('error', 'text')
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .addColumn('updated_at', 'bigint', (col) => col.notNull())
    .execute();
  await db.schema
    .createIndex('recordings_session_source')
    .on('recordings')
    .columns(['student_session_id', 'source'])
    .unique()
    .execute();
}
