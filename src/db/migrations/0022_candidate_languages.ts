// Frozen in time: this migration imports nothing from src/ and must never change once released.
// A change to the schema is a new migration file.
import type { Kysely } from 'kysely';

/**
 * Every candidate in their own language (step 16, docs/languages.md):
 * - `student_sessions.language`: the language the exam office set for the student (a supported
 *   BCP 47 tag in canonical case, or set from an LTI launch's locale); null when nobody said.
 * - `student_sessions.chosen_language`: the candidate's own pick in the room's or the phone's
 *   language menu, remembered for the session; null until they pick one.
 * - `exams.candidate_languages`: JSON array of the tags a candidate of the exam may be shown;
 *   null for every language the service speaks.
 * Existing rows keep null in all three: their pages are chosen as before the columns existed.
 */
export async function up(db: Kysely<any>): Promise<void> {
  // One column per statement: SQLite's ALTER TABLE adds a single column at a time.
  await db.schema.alterTable('student_sessions').addColumn('language', 'text').execute();
  await db.schema.alterTable('student_sessions').addColumn('chosen_language', 'text').execute();
  await db.schema.alterTable('exams').addColumn('candidate_languages', 'text').execute();
}
