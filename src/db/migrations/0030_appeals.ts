// Frozen in time: this migration imports nothing from src/ and must never change once released.
// A change to the schema is a new migration file.
import type { Kysely } from 'kysely';

/**
 * Contesting a verdict (step 19, docs/appeals.md):
 * - `appeals`: at most one per student session (unique), the candidate's statement against the
 *   final `suspicious` or `violation` verdict (`review_id`, the session_reviews row appealed), and
 *   its decision by a second reviewer: `status` open, upheld or overturned; `decided_by` keeps no
 *   foreign key and the decider's name is kept, as in session_reviews. `decision_review_id` is the
 *   verdict an overturned appeal wrote (the history keeps the appealed one too).
 * - `appeal_files`: the files sent with the statement, in their order (rows of `files`).
 */
export async function up(db: Kysely<any>, dialect: 'sqlite' | 'postgres'): Promise<void> {
  const id = (table: string) =>
    db.schema
      .createTable(table)
      .addColumn('id', 'integer', (col) =>
        dialect === 'sqlite'
          ? col.primaryKey().autoIncrement()
          : col.primaryKey().generatedByDefaultAsIdentity(),
      );
  await id('appeals')
    .addColumn('student_session_id', 'integer', (col) =>
      col.notNull().unique().references('student_sessions.id').onDelete('cascade'),
    )
    .addColumn('review_id', 'integer', (col) => col.notNull())
    .addColumn('statement', 'text', (col) => col.notNull())
    // open, upheld, overturned
    .addColumn('status', 'text', (col) => col.notNull())
    .addColumn('submitted_at', 'bigint', (col) => col.notNull())
    .addColumn('decided_by', 'integer')
    .addColumn('decided_by_name', 'text')
    .addColumn('decided_at', 'bigint')
    .addColumn('comment', 'text')
    .addColumn('decision_review_id', 'integer')
    .execute();
  // The review queue looks for open appeals.
  await db.schema.createIndex('appeals_status').on('appeals').column('status').execute();

  await id('appeal_files')
    .addColumn('appeal_id', 'integer', (col) => col.notNull().references('appeals.id').onDelete('cascade'))
    .addColumn('file_id', 'integer', (col) => col.notNull().references('files.id'))
    .addColumn('position', 'integer', (col) => col.notNull())
    .execute();
  await db.schema
    .createIndex('appeal_files_appeal_position')
    .on('appeal_files')
    .columns(['appeal_id', 'position'])
    .unique()
    .execute();
}
