import { type Migration, type MigrationResultSet, Migrator } from 'kysely';
import type { Database } from './database.ts';
import * as m0001 from './migrations/0001_initial.ts';

/** The migrations in order; each receives the dialect because a few column types differ. */
function migrationsFor(dialect: Database['dialect']): Record<string, Migration> {
  return {
    '0001_initial': { up: (db) => m0001.up(db, dialect) },
  };
}

/**
 * Applies every pending migration (forward only; Kysely's lock keeps concurrent starts apart).
 * Returns the names applied now; throws with the failing migration's name when one fails.
 */
export async function migrateToLatest(database: Database): Promise<string[]> {
  const migrator = new Migrator({
    db: database.db,
    provider: { getMigrations: async () => migrationsFor(database.dialect) },
  });
  const result: MigrationResultSet = await migrator.migrateToLatest();
  const failed = result.results?.find((r) => r.status === 'Error');
  if (result.error !== undefined) {
    const reason = result.error instanceof Error ? result.error.message : String(result.error);
    throw new Error(`migration ${failed?.migrationName ?? '(unknown)'} failed: ${reason}`);
  }
  return (result.results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
