// Frozen in time: this migration imports nothing from src/ and must never change once released.
// A change to the schema is a new migration file.
import { type Kysely, sql } from 'kysely';

/**
 * User emails become unique regardless of letter case: `ADMA@a.test` can no longer sit beside
 * `admA@a.test`. Emails keep the case they were written in; the rule lives in a unique index on
 * lower(email), on both databases, so it holds whatever writes the row.
 *
 * Rows that already collide (same email but for case) cannot all keep their address under the new
 * index. The oldest (lowest id) keeps it; each later one gets `duplicate-<id>-of-<email>`, which
 * keeps the original address readable for an administrator and stays a valid, unique email. Those
 * accounts stay active with their credentials (an email is no credential); an administrator
 * decides what to do with them. Only the old case-sensitive index is dropped.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const duplicates = await sql<{ id: number; email: string }>`
    select u.id, u.email from users u
    where exists (
      select 1 from users older where lower(older.email) = lower(u.email) and older.id < u.id
    )
    order by u.id`.execute(db);
  for (const row of duplicates.rows) {
    await sql`update users set email = ${`duplicate-${row.id}-of-${row.email}`} where id = ${row.id}`.execute(
      db,
    );
  }
  await db.schema.dropIndex('users_email_unique').execute();
  await sql`create unique index users_email_lower_unique on users (lower(email))`.execute(db);
}
