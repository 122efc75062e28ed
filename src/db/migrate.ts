import { type Migration, type MigrationResultSet, Migrator, sql } from 'kysely';
import type { Database } from './database.ts';
import * as m0001 from './migrations/0001_initial.ts';
import * as m0002 from './migrations/0002_user_email_case_insensitive.ts';
import * as m0003 from './migrations/0003_exam_client_fields.ts';
import * as m0004 from './migrations/0004_room_rate_limits.ts';
import * as m0005 from './migrations/0005_staff_sign_in.ts';
import * as m0006 from './migrations/0006_second_factor.ts';
import * as m0007 from './migrations/0007_audit_events.ts';
import * as m0008 from './migrations/0008_oidc_logins.ts';
import * as m0009 from './migrations/0009_outbox_institute.ts';
import * as m0010 from './migrations/0010_monitor_indexes.ts';
import * as m0011 from './migrations/0011_recordings.ts';
import * as m0012 from './migrations/0012_session_reviews.ts';
import * as m0013 from './migrations/0013_webhook_secrets.ts';
import * as m0014 from './migrations/0014_session_retention.ts';
import * as m0015 from './migrations/0015_live_proctoring.ts';
import * as m0016 from './migrations/0016_lti_launch.ts';
import * as m0017 from './migrations/0017_automated_flags.ts';
import * as m0018 from './migrations/0018_mobile_camera.ts';
import * as m0019 from './migrations/0019_terms_acceptance.ts';
import * as m0020 from './migrations/0020_recoverable_tokens_and_deadlines.ts';
import * as m0021 from './migrations/0021_outbox_session_index.ts';
import * as m0022 from './migrations/0022_candidate_languages.ts';
import * as m0023 from './migrations/0023_message_overrides.ts';
import * as m0024 from './migrations/0024_user_language.ts';
import * as m0025 from './migrations/0025_accommodations.ts';
import * as m0026 from './migrations/0026_recording_quality.ts';
import * as m0027 from './migrations/0027_data_keys.ts';
import * as m0028 from './migrations/0028_privacy_notice.ts';
import * as m0029 from './migrations/0029_candidate_data_access.ts';
import * as m0030 from './migrations/0030_appeals.ts';
import * as m0031 from './migrations/0031_retention_per_kind.ts';

/** The migrations in order; each receives the dialect because a few column types differ. */
function migrationsFor(dialect: Database['dialect']): Record<string, Migration> {
  return {
    '0001_initial': { up: (db) => m0001.up(db, dialect) },
    '0002_user_email_case_insensitive': { up: (db) => m0002.up(db) },
    '0003_exam_client_fields': { up: (db) => m0003.up(db) },
    '0004_room_rate_limits': { up: (db) => m0004.up(db) },
    '0005_staff_sign_in': { up: (db) => m0005.up(db) },
    '0006_second_factor': { up: (db) => m0006.up(db) },
    '0007_audit_events': { up: (db) => m0007.up(db, dialect) },
    '0008_oidc_logins': { up: (db) => m0008.up(db) },
    '0009_outbox_institute': { up: (db) => m0009.up(db) },
    '0010_monitor_indexes': { up: (db) => m0010.up(db) },
    '0011_recordings': { up: (db) => m0011.up(db, dialect) },
    '0012_session_reviews': { up: (db) => m0012.up(db, dialect) },
    '0013_webhook_secrets': { up: (db) => m0013.up(db) },
    '0014_session_retention': { up: (db) => m0014.up(db, dialect) },
    '0015_live_proctoring': { up: (db) => m0015.up(db, dialect) },
    '0016_lti_launch': { up: (db) => m0016.up(db, dialect) },
    '0017_automated_flags': { up: (db) => m0017.up(db) },
    '0018_mobile_camera': { up: (db) => m0018.up(db) },
    '0019_terms_acceptance': { up: (db) => m0019.up(db) },
    '0020_recoverable_tokens_and_deadlines': { up: (db) => m0020.up(db) },
    '0021_outbox_session_index': { up: (db) => m0021.up(db) },
    '0022_candidate_languages': { up: (db) => m0022.up(db) },
    '0023_message_overrides': { up: (db) => m0023.up(db) },
    '0024_user_language': { up: (db) => m0024.up(db) },
    '0025_accommodations': { up: (db) => m0025.up(db, dialect) },
    '0026_recording_quality': { up: (db) => m0026.up(db) },
    '0027_data_keys': { up: (db) => m0027.up(db, dialect) },
    '0028_privacy_notice': { up: (db) => m0028.up(db) },
    '0029_candidate_data_access': { up: (db) => m0029.up(db, dialect) },
    '0030_appeals': { up: (db) => m0030.up(db, dialect) },
    '0031_retention_per_kind': { up: (db) => m0031.up(db, dialect) },
  };
}

/**
 * Applies every pending migration (forward only; Kysely's lock keeps concurrent starts apart).
 * Returns the names applied now; throws with the failing migration's name when one fails.
 */
/** How often a migration run is tried when another schema vanished while Kysely was looking. */
const INTROSPECTION_ATTEMPTS = 5;

/**
 * The errors PostgreSQL gives when a catalog object vanishes under a query: schema (3F000), table
 * (42P01) or column (42703) not found, and "cache lookup failed" (XX000).
 */
const VANISHED_OBJECT_CODES = new Set(['3F000', '42P01', '42703', 'XX000']);

/**
 * True when a PostgreSQL migration run failed because something in another schema vanished while
 * Kysely looked: its introspection reads every schema's tables (and calls catalog functions on
 * them), so a schema dropped meanwhile (another database sharing the server, or a test suite's
 * private schema) fails the read though nothing is wrong here. A genuine error in a migration of
 * ours fails again on the next attempt and is reported then.
 */
function raceWithAnotherSchema(error: unknown, ownSchema: string | undefined): boolean {
  if (ownSchema === undefined || typeof error !== 'object' || error === null) return false;
  const { code } = error as { code?: unknown };
  return typeof code === 'string' && VANISHED_OBJECT_CODES.has(code);
}

/** The database's migrator and, on PostgreSQL, the connection's own schema. */
async function migratorFor(database: Database): Promise<{ migrator: Migrator; schema: string | undefined }> {
  // Kysely looks for its bookkeeping tables across every schema it can see; on PostgreSQL name the
  // connection's own schema so a second Invigil database in another schema is never mistaken for this one.
  const schema =
    database.dialect === 'postgres'
      ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(database.db)).rows[0]
          ?.schema
      : undefined;
  const migrator = new Migrator({
    db: database.db,
    provider: { getMigrations: () => Promise.resolve(migrationsFor(database.dialect)) },
    ...(schema === undefined ? {} : { migrationTableSchema: schema }),
  });
  return { migrator, schema };
}

/**
 * Applies the migrations up to and including `name` and no further: how tests build the schema as
 * it stood before a later migration. Throws when one fails.
 */
export async function migrateUpTo(database: Database, name: string): Promise<void> {
  const { migrator } = await migratorFor(database);
  const result = await migrator.migrateTo(name);
  if (result.error !== undefined) {
    const reason = result.error instanceof Error ? result.error.message : JSON.stringify(result.error);
    throw new Error(`migrating up to ${name} failed: ${reason}`);
  }
}

export async function migrateToLatest(database: Database): Promise<string[]> {
  const { migrator, schema } = await migratorFor(database);
  let result: MigrationResultSet = await migrator.migrateToLatest();
  for (
    let attempt = 1;
    attempt < INTROSPECTION_ATTEMPTS && raceWithAnotherSchema(result.error, schema);
    attempt += 1
  ) {
    await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
    result = await migrator.migrateToLatest();
  }
  const failed = result.results?.find((r) => r.status === 'Error');
  if (result.error !== undefined) {
    const reason = result.error instanceof Error ? result.error.message : JSON.stringify(result.error);
    throw new Error(`migration ${failed?.migrationName ?? '(unknown)'} failed: ${reason}`);
  }
  return (result.results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
