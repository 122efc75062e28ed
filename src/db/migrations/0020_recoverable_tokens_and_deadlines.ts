// Frozen in time: this migration imports nothing from src/ and must never change once released.
// A change to the schema is a new migration file.
import { type Kysely, sql } from 'kysely';

/**
 * Step 14's fixes of real clients:
 * - `users.api_token_encrypted`: the API token, encrypted with the server's encryption key like
 *   `secret_key_encrypted`, so the compat sign-in (`POST /users/sign_in.json`) can answer a user's
 *   existing credentials as the original service did. `api_token_hash` stays the lookup key. Users
 *   created before this migration have null here: their token was kept only as a hash, so their
 *   first compat sign-in issues new credentials once (docs/staff-sign-in.md).
 * - `student_sessions_started`: a partial index on the started sessions' start time, for the
 *   worker's sweep that finishes sessions whose deadline passed (docs/jobs.md) without reading
 *   every session ever held.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('users').addColumn('api_token_encrypted', 'text').execute();
  await db.schema
    .createIndex('student_sessions_started')
    .on('student_sessions')
    .columns(['start_time', 'id'])
    .where(sql<boolean>`status = 'exam_started'`)
    .execute();
}
