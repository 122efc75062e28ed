import type { Database } from '../../src/db/database.ts';
import { migrateUpTo } from '../../src/db/migrate.ts';
import { createTestDatabase, openTestDatabase, type DialectName } from '../helpers/server.ts';

/**
 * Runs `work` on a new, private database of `dialect` migrated up to `migration` (that one
 * included), then closes and drops it, whatever `work` did.
 */
export async function atMigration(
  dialect: DialectName,
  migration: string,
  work: (database: Database) => Promise<void>,
): Promise<void> {
  const target = await createTestDatabase(dialect);
  const database = openTestDatabase(target);
  try {
    await migrateUpTo(database, migration);
    await work(database);
  } finally {
    await database.destroy();
    await target.drop();
  }
}
