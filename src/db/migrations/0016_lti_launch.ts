// Frozen in time: this migration imports nothing from src/ and must never change once released.
// A change to the schema is a new migration file.
import type { ColumnDefinitionBuilder, Kysely } from 'kysely';

/**
 * LMS launches (step 11, docs/lti.md).
 * - `lti_tool_keys`: Invigil's own signing key pairs for LTI 1.3 (the private key encrypted with the
 *   server key). The newest key that is not retired signs; every key whose `expires_at` is still in
 *   the future (or null) is published at /lti/jwks, so a platform holding an old key set still checks.
 * - `lti_logins`: a pending LTI 1.3 login (third-party initiated login to launch): the state (hashed),
 *   the nonce sent to the platform, the browser binding (hashed; a cookie or platform storage), and
 *   the login request's own parameters, kept to start the same login again in a top-level window.
 *   Single use (`used_at`), ten minutes.
 * - `lti_oauth_nonces`: LTI 1.1 OAuth nonces seen per tool provider, kept until their timestamp is
 *   too old to be accepted anyway.
 * - `lti_tickets`: single-use, short-lived tickets that carry a verified launch across a step the
 *   browser makes (continue in a top-level window, a deep-linking choice); the ticket is hashed.
 * - `lti_session_links`: what the platform told Invigil about a launched student session that later
 *   messages need (Proctoring Services: attempt, start_assessment_url, session_data, the Assessment
 *   Control Service), one row per session.
 */
export async function up(db: Kysely<any>, dialect: 'sqlite' | 'postgres'): Promise<void> {
  const id = (col: ColumnDefinitionBuilder): ColumnDefinitionBuilder =>
    dialect === 'sqlite' ? col.primaryKey().autoIncrement() : col.primaryKey().generatedByDefaultAsIdentity();

  await db.schema
    .createTable('lti_tool_keys')
    .addColumn('id', 'integer', id)
    .addColumn('kid', 'text', (col) => col.notNull().unique())
    .addColumn('private_key_encrypted', 'text', (col) => col.notNull())
    .addColumn('public_jwk', 'text', (col) => col.notNull())
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .addColumn('retired_at', 'bigint')
    .addColumn('expires_at', 'bigint')
    .execute();

  await db.schema
    .createTable('lti_logins')
    .addColumn('id', 'integer', id)
    .addColumn('state_hash', 'text', (col) => col.notNull().unique())
    .addColumn('nonce', 'text', (col) => col.notNull())
    .addColumn('tool_provider_id', 'integer', (col) =>
      col.notNull().references('tool_providers.id').onDelete('cascade'),
    )
    .addColumn('binding_hash', 'text', (col) => col.notNull())
    // cookie, storage
    .addColumn('binding_kind', 'text', (col) => col.notNull())
    .addColumn('login_params', 'text', (col) => col.notNull())
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .addColumn('expires_at', 'bigint', (col) => col.notNull())
    .addColumn('used_at', 'bigint')
    .execute();
  await db.schema.createIndex('lti_logins_expiry').on('lti_logins').column('expires_at').execute();

  await db.schema
    .createTable('lti_oauth_nonces')
    .addColumn('tool_provider_id', 'integer', (col) =>
      col.notNull().references('tool_providers.id').onDelete('cascade'),
    )
    .addColumn('nonce', 'text', (col) => col.notNull())
    .addColumn('expires_at', 'bigint', (col) => col.notNull())
    .addPrimaryKeyConstraint('lti_oauth_nonces_pk', ['tool_provider_id', 'nonce'])
    .execute();
  await db.schema
    .createIndex('lti_oauth_nonces_expiry')
    .on('lti_oauth_nonces')
    .column('expires_at')
    .execute();

  await db.schema
    .createTable('lti_tickets')
    .addColumn('id', 'integer', id)
    .addColumn('ticket_hash', 'text', (col) => col.notNull().unique())
    // continue, deep_link
    .addColumn('purpose', 'text', (col) => col.notNull())
    .addColumn('payload', 'text', (col) => col.notNull())
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .addColumn('expires_at', 'bigint', (col) => col.notNull())
    .addColumn('used_at', 'bigint')
    .execute();
  await db.schema.createIndex('lti_tickets_expiry').on('lti_tickets').column('expires_at').execute();

  await db.schema
    .createTable('lti_session_links')
    .addColumn('student_session_id', 'integer', (col) =>
      col.primaryKey().references('student_sessions.id').onDelete('cascade'),
    )
    .addColumn('tool_provider_id', 'integer', (col) =>
      col.notNull().references('tool_providers.id').onDelete('cascade'),
    )
    // 1.1, 1.3
    .addColumn('lti_version', 'text', (col) => col.notNull())
    // The platform's user id (LTI 1.3 `sub`, LTI 1.1 `user_id`) and the deployment it came through.
    .addColumn('platform_user_id', 'text', (col) => col.notNull())
    .addColumn('deployment_id', 'text')
    // LTI Proctoring Services: null for an ordinary launch.
    .addColumn('attempt_number', 'integer')
    .addColumn('start_assessment_url', 'text')
    .addColumn('session_data', 'text')
    .addColumn('acs_url', 'text')
    // JSON array of the actions the platform's Assessment Control Service accepts.
    .addColumn('acs_actions', 'text')
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .addColumn('updated_at', 'bigint', (col) => col.notNull())
    .execute();
}
