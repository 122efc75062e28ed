// Frozen in time: this migration imports nothing from src/ and must never change once released.
// A change to the schema is a new migration file.
import type { Kysely } from 'kysely';

/**
 * The audit log (step 8): one row per sign-in outcome, sign-out, password change and successful
 * staff API write. Rows outlive the users and institutes they name (no foreign keys): a record of
 * who did what must not vanish when the account is deleted, and the retention sweep removes them.
 */
export async function up(db: Kysely<any>, dialect: 'sqlite' | 'postgres'): Promise<void> {
  await db.schema
    .createTable('audit_events')
    .addColumn('id', 'integer', (col) =>
      dialect === 'sqlite'
        ? col.primaryKey().autoIncrement()
        : col.primaryKey().generatedByDefaultAsIdentity(),
    )
    // Null for a failed sign-in naming no known account.
    .addColumn('institute_id', 'integer')
    .addColumn('user_id', 'integer')
    // `sign_in`, `sign_in_failed`, ... or `METHOD /api/v3/route/:template` for an API write.
    .addColumn('action', 'text', (col) => col.notNull())
    // The email typed into a sign-in (never the password); null for API writes.
    .addColumn('email', 'text')
    .addColumn('target_type', 'text')
    .addColumn('target_id', 'bigint')
    .addColumn('status', 'integer', (col) => col.notNull())
    .addColumn('ip', 'text')
    .addColumn('user_agent', 'text')
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .execute();
  // An administrator's listing (its institute, newest first) and the retention sweep (by age).
  await db.schema
    .createIndex('audit_events_institute_created')
    .on('audit_events')
    .columns(['institute_id', 'created_at'])
    .execute();
  await db.schema.createIndex('audit_events_created').on('audit_events').column('created_at').execute();
}
