// Frozen in time: this migration imports nothing from src/ and must never change once released.
// A change to the schema is a new migration file.
import type { Kysely } from 'kysely';

/**
 * Review verdicts (step 9, docs/review.md): one row per verdict a reviewer records on a student
 * session, never updated, so the rows are the session's review history; the newest row is the
 * current verdict (student_sessions.reviewed follows it). `reviewer_id` has no foreign key and the
 * reviewer's name is kept: the history must outlive a deleted account. `previous_review_id` (0 for
 * the first row) is unique per session, so of two reviewers writing over the same verdict at once
 * only one succeeds and the other looks again. The institute setting `second_review_required` makes
 * a `violation` wait for a second, different reviewer.
 */
export async function up(db: Kysely<any>, dialect: 'sqlite' | 'postgres'): Promise<void> {
  await db.schema
    .createTable('session_reviews')
    .addColumn('id', 'integer', (col) =>
      dialect === 'sqlite'
        ? col.primaryKey().autoIncrement()
        : col.primaryKey().generatedByDefaultAsIdentity(),
    )
    .addColumn('student_session_id', 'integer', (col) =>
      col.notNull().references('student_sessions.id').onDelete('cascade'),
    )
    .addColumn('previous_review_id', 'integer', (col) => col.notNull())
    // not_reviewed, in_review, passed, suspicious, violation
    .addColumn('verdict', 'text', (col) => col.notNull())
    .addColumn('comment', 'text')
    .addColumn('reviewer_id', 'integer')
    .addColumn('reviewer_name', 'text')
    // not_required, pending (a violation awaiting a second reviewer), confirmed
    .addColumn('second_review', 'text', (col) => col.notNull())
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .execute();
  // The history of a session in order, and one successor per row (see above).
  await db.schema
    .createIndex('session_reviews_session_previous')
    .on('session_reviews')
    .columns(['student_session_id', 'previous_review_id'])
    .unique()
    .execute();

  await db.schema
    .alterTable('institutes')
    .addColumn('second_review_required', 'boolean', (col) => col.notNull().defaultTo(false))
    .execute();
}
