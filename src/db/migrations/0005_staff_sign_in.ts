// Frozen in time: this migration imports nothing from src/ and must never change once released.
// A change to the schema is a new migration file.
import type { Kysely } from 'kysely';

/**
 * Staff sign-in (step 8): a password hash on users (null for API-only users), server-side browser
 * sessions, one-time links (invitations and password resets, stored as hashes) and the sign-in
 * throttle shared by every process on the database.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('users').addColumn('password_hash', 'text').execute();

  await db.schema
    .createTable('staff_sessions')
    // SHA-256 of the cookie's random token: a copy of the table signs nobody in.
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('user_id', 'integer', (col) => col.notNull().references('users.id').onDelete('cascade'))
    .addColumn('csrf_token', 'text', (col) => col.notNull())
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .addColumn('last_seen_at', 'bigint', (col) => col.notNull())
    .addColumn('expires_at', 'bigint', (col) => col.notNull())
    .addColumn('ip', 'text')
    .addColumn('user_agent', 'text')
    .execute();
  await db.schema.createIndex('staff_sessions_user').on('staff_sessions').column('user_id').execute();

  await db.schema
    .createTable('one_time_links')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('user_id', 'integer', (col) => col.notNull().references('users.id').onDelete('cascade'))
    .addColumn('purpose', 'text', (col) => col.notNull())
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .addColumn('expires_at', 'bigint', (col) => col.notNull())
    .addColumn('used_at', 'bigint')
    .execute();
  await db.schema.createIndex('one_time_links_user').on('one_time_links').column('user_id').execute();

  await db.schema
    .createTable('sign_in_throttles')
    // `account:<email in lower case>` or `address:<client address>`.
    .addColumn('key', 'text', (col) => col.primaryKey())
    .addColumn('failures', 'integer', (col) => col.notNull())
    .addColumn('last_failure_at', 'bigint', (col) => col.notNull())
    .addColumn('blocked_until', 'bigint', (col) => col.notNull())
    .execute();
}
