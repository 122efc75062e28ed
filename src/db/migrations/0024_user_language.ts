// Frozen in time: this migration imports nothing from src/ and must never change once released.
// A change to the schema is a new migration file.
import type { Kysely } from 'kysely';

/**
 * The console's language per staff member (step 16, docs/languages.md): `users.language`, a supported
 * BCP 47 tag the user picked under My account, or null to follow the browser. Their emails
 * (invitations, password resets) use it too. Existing users keep null.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('users').addColumn('language', 'text').execute();
}
