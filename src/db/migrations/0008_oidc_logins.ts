// Frozen in time: this migration imports nothing from src/ and must never change once released.
// A change to the schema is a new migration file.
import type { Kysely } from 'kysely';

/**
 * OpenID Connect staff sign-in (step 8): the pending logins between `GET /auth/oidc/:id/start` and
 * the provider's redirect back to `/auth/oidc/callback`. A row lives minutes and is deleted when its
 * callback arrives (used or not), so a state works once.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('oidc_logins')
    // SHA-256 of the `state` sent to the provider: a copy of the table gives no usable state.
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('identity_provider_id', 'integer', (col) =>
      col.notNull().references('identity_providers.id').onDelete('cascade'),
    )
    // SHA-256 of the browser-binding cookie set by the start: the callback must come from that browser.
    .addColumn('browser_hash', 'text', (col) => col.notNull())
    // The PKCE code verifier, AES-256-GCM under the server's encryption key.
    .addColumn('code_verifier_encrypted', 'text', (col) => col.notNull())
    .addColumn('nonce', 'text', (col) => col.notNull())
    // A path on PUBLIC_URL (checked before it is written).
    .addColumn('return_to', 'text', (col) => col.notNull())
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .addColumn('expires_at', 'bigint', (col) => col.notNull())
    .execute();
  await db.schema.createIndex('oidc_logins_expires').on('oidc_logins').column('expires_at').execute();
}
