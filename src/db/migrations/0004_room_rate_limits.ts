// Frozen in time: this migration imports nothing from src/ and must never change once released.
// A change to the schema is a new migration file.
import type { Kysely } from 'kysely';

/**
 * The candidate room's request counts, shared by every API process on one database (step 7): one
 * row per room token with the start of its current one-minute window and the requests admitted in
 * it. Processes add their counts in batches; rows of windows long over are purged.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('room_rate_limits')
    .addColumn('key', 'text', (col) => col.primaryKey())
    .addColumn('window_start', 'bigint', (col) => col.notNull())
    .addColumn('hits', 'integer', (col) => col.notNull())
    .execute();
  // No index on window_start: the table holds one row per recently active token, so the purge's
  // scan is cheap, and a flush's updates stay in place (HOT) on PostgreSQL only while no index
  // covers a column they may change.
}
