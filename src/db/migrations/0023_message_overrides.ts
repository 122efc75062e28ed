// Frozen in time: this migration imports nothing from src/ and must never change once released.
// A change to the schema is a new migration file.
import type { Kysely } from 'kysely';

/**
 * An institute's own wording of the messages its candidates read and its emails say (docs/languages.md,
 * "An institute's own wording"): one row per (institute, locale, key), the ICU message that stands
 * in for the catalogue's. Removed with the institute; the administrator who saved it is kept while
 * the account exists.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('message_overrides')
    .addColumn('institute_id', 'integer', (col) =>
      col.notNull().references('institutes.id').onDelete('cascade'),
    )
    .addColumn('locale', 'text', (col) => col.notNull())
    .addColumn('key', 'text', (col) => col.notNull())
    .addColumn('message', 'text', (col) => col.notNull())
    .addColumn('updated_at', 'bigint', (col) => col.notNull())
    .addColumn('updated_by', 'integer', (col) => col.references('users.id').onDelete('set null'))
    .addPrimaryKeyConstraint('message_overrides_pk', ['institute_id', 'locale', 'key'])
    .execute();
}
