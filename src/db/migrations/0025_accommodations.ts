// Frozen in time: this migration imports nothing from src/ and must never change once released.
// A change to the schema is a new migration file.
import type { Kysely } from 'kysely';

/**
 * Accommodations, rest breaks and the practice run (step 17, docs/accommodations.md):
 * - `student_sessions.accommodations`: JSON object of the student's accommodations (extra time,
 *   breaks, exemptions from checks, assistive technology, a staff note); null for none.
 * - `student_sessions.break_started_at`: when the running rest break began (epoch ms); null while
 *   the candidate works. `break_ms`: the total of the breaks that ended. `breaks_taken`: how many
 *   breaks the candidate started.
 * - `student_sessions.practice_status`: the newest practice run's outcome, `not_tried` (default),
 *   `running`, `passed` or `failed`; `practice_failed_check` names the check that failed;
 *   `practice_at` is when the newest run began or ended; `practice_reminded_at` when the office last
 *   emailed a practice reminder.
 * - `practice_runs`: one row per practice run, with what each check gave.
 * - `incidents.informational`: an automated flag recorded for the record only, never raised (one
 *   that assistive technology sets off for a student with that accommodation); false for the rest.
 * - `exams.record_during_breaks` (default true: the streams keep recording during a break) and
 *   `exams.extra_time_beyond_end` (default true: extra time may run past the exam's end_time).
 * Existing rows take the defaults: no accommodations, no breaks, never practised, and both exam
 * settings on, which changes no deadline of an existing session.
 */
export async function up(db: Kysely<any>, dialect: 'sqlite' | 'postgres'): Promise<void> {
  // One column per statement: SQLite's ALTER TABLE adds a single column at a time.
  await db.schema.alterTable('student_sessions').addColumn('accommodations', 'text').execute();
  await db.schema.alterTable('student_sessions').addColumn('break_started_at', 'bigint').execute();
  await db.schema
    .alterTable('student_sessions')
    .addColumn('break_ms', 'bigint', (col) => col.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable('student_sessions')
    .addColumn('breaks_taken', 'integer', (col) => col.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable('student_sessions')
    .addColumn('practice_status', 'text', (col) => col.notNull().defaultTo('not_tried'))
    .execute();
  await db.schema.alterTable('student_sessions').addColumn('practice_failed_check', 'text').execute();
  await db.schema.alterTable('student_sessions').addColumn('practice_at', 'bigint').execute();
  await db.schema.alterTable('student_sessions').addColumn('practice_reminded_at', 'bigint').execute();
  await db.schema
    .alterTable('exams')
    .addColumn('record_during_breaks', 'boolean', (col) => col.notNull().defaultTo(true))
    .execute();
  await db.schema
    .alterTable('exams')
    .addColumn('extra_time_beyond_end', 'boolean', (col) => col.notNull().defaultTo(true))
    .execute();
  await db.schema
    .alterTable('incidents')
    .addColumn('informational', 'boolean', (col) => col.notNull().defaultTo(false))
    .execute();
  await db.schema
    .createTable('practice_runs')
    .addColumn('id', 'integer', (col) =>
      dialect === 'sqlite'
        ? col.primaryKey().autoIncrement()
        : col.primaryKey().generatedByDefaultAsIdentity(),
    )
    .addColumn('student_session_id', 'integer', (col) =>
      col.notNull().references('student_sessions.id').onDelete('cascade'),
    )
    .addColumn('status', 'text', (col) => col.notNull())
    .addColumn('failed_check', 'text')
    .addColumn('checks', 'text', (col) => col.notNull().defaultTo('{}'))
    .addColumn('started_at', 'bigint', (col) => col.notNull())
    .addColumn('finished_at', 'bigint')
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .addColumn('updated_at', 'bigint', (col) => col.notNull())
    .execute();
  await db.schema
    .createIndex('practice_runs_session')
    .on('practice_runs')
    .columns(['student_session_id', 'id'])
    .execute();
}
