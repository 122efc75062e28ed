// Frozen in time: this migration imports nothing from src/ and must never change once released.
// A change to the schema is a new migration file.
import type { Kysely } from 'kysely';

/**
 * The candidate's acceptance of the exam's terms (step 14, docs/room.md "Terms"): an exam with terms
 * starts only once the candidate accepted them, and the session keeps the proof.
 * - `student_sessions.terms_accepted_at`: when the candidate accepted (epoch ms); null before, and
 *   for an exam without terms.
 * - `student_sessions.terms_sha256`: the SHA-256 (hex) of the terms' text as it stood when accepted,
 *   so a later edit of the exam's terms cannot blur what this candidate agreed to.
 * Existing sessions keep both null: nobody accepted anything before the room showed the terms.
 */
export async function up(db: Kysely<any>): Promise<void> {
  // One column per statement: SQLite's ALTER TABLE adds a single column at a time.
  await db.schema.alterTable('student_sessions').addColumn('terms_accepted_at', 'bigint').execute();
  await db.schema.alterTable('student_sessions').addColumn('terms_sha256', 'text').execute();
}
