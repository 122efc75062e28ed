// Frozen in time: this migration imports nothing from src/ and must never change once released.
// A change to the schema is a new migration file.
import { type Kysely, sql } from 'kysely';

/**
 * The exam settings real clients of the original service read (step 7): proctoring and reviewing by
 * the institute-wide staff, the exam's language and time zone, its terms, and an archive label.
 * `mode`, `live_proctoring` and `published` are derived from `type` and `status`, so they have no
 * column. Existing exams take their institute's default language.
 */
export async function up(db: Kysely<any>): Promise<void> {
  // One column per statement: SQLite's ALTER TABLE adds a single column at a time.
  await db.schema
    .alterTable('exams')
    .addColumn('global_proctoring', 'boolean', (col) => col.notNull().defaultTo(false))
    .execute();
  await db.schema
    .alterTable('exams')
    .addColumn('global_reviewing', 'boolean', (col) => col.notNull().defaultTo(false))
    .execute();
  await db.schema
    .alterTable('exams')
    .addColumn('exam_language', 'text', (col) => col.notNull().defaultTo('en'))
    .execute();
  await db.schema
    .alterTable('exams')
    .addColumn('timezone', 'text', (col) => col.notNull().defaultTo('UTC'))
    .execute();
  await db.schema.alterTable('exams').addColumn('terms', 'text').execute();
  await db.schema
    .alterTable('exams')
    .addColumn('archived', 'boolean', (col) => col.notNull().defaultTo(false))
    .execute();
  await sql`update exams set exam_language = (
    select institutes.default_language from institutes where institutes.id = exams.institute_id
  )`.execute(db);
}
