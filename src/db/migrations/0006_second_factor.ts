// Frozen in time: this migration imports nothing from src/ and must never change once released.
// A change to the schema is a new migration file.
import type { Kysely } from 'kysely';

/**
 * The optional second factor of staff sign-in (step 8): a user's TOTP secret (encrypted, like API
 * secrets), its recovery codes (hashed), the pending second steps of password sign-ins (hashed
 * tokens), and the institute setting that requires a second factor of administrators.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('second_factors')
    .addColumn('user_id', 'integer', (col) => col.primaryKey().references('users.id').onDelete('cascade'))
    // AES-256-GCM of the base32 secret, with the server's encryption key.
    .addColumn('secret_encrypted', 'text', (col) => col.notNull())
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    // Null while enrolment waits for its first code.
    .addColumn('enabled_at', 'bigint')
    // The newest 30-second step a code was accepted for: that step and older ones are refused.
    .addColumn('last_used_step', 'bigint')
    .execute();

  await db.schema
    .createTable('recovery_codes')
    // SHA-256 of the code (codes are random, so no salt or stretching is needed).
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('user_id', 'integer', (col) => col.notNull().references('users.id').onDelete('cascade'))
    .addColumn('used_at', 'bigint')
    .execute();
  await db.schema.createIndex('recovery_codes_user').on('recovery_codes').column('user_id').execute();

  await db.schema
    .createTable('second_factor_challenges')
    // SHA-256 of the pending token the password step answered.
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('user_id', 'integer', (col) => col.notNull().references('users.id').onDelete('cascade'))
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .addColumn('expires_at', 'bigint', (col) => col.notNull())
    .addColumn('attempts', 'integer', (col) => col.notNull())
    .addColumn('ip', 'text')
    .addColumn('user_agent', 'text')
    .execute();
  await db.schema
    .createIndex('second_factor_challenges_user')
    .on('second_factor_challenges')
    .column('user_id')
    .execute();

  await db.schema
    .alterTable('institutes')
    .addColumn('require_second_factor_for_administrators', 'boolean', (col) => col.notNull().defaultTo(false))
    .execute();
}
