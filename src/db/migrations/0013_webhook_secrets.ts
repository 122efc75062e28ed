// Frozen in time: this migration imports nothing from src/ and must never change once released.
// A change to the schema is a new migration file.
import type { Kysely } from 'kysely';

/**
 * Webhooks (step 9): each institute's signing secret for the POSTs sent to its `callback_url`, at
 * most one per institute (a rotation replaces it). A table of its own rather than columns on
 * `institutes`, so no read of an institute ever loads the secret. The events themselves wait in
 * the job queue (`webhook.deliver` jobs), which already survives restarts: no table for them.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('webhook_secrets')
    .addColumn('institute_id', 'integer', (col) =>
      col.primaryKey().references('institutes.id').onDelete('cascade'),
    )
    // AES-256-GCM of the secret, with the server's encryption key (like users' API secrets).
    .addColumn('secret_encrypted', 'text', (col) => col.notNull())
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .execute();
}
