// Frozen in time: this migration imports nothing from src/ and must never change once released.
// A change to the schema is a new migration file.
import type { Kysely } from 'kysely';

/**
 * Encryption at rest (step 19, docs/storage.md, "Encryption at rest"):
 * - `data_keys`: each institute's data keys, one row per version (1, 2, ...), the newest sealing new
 *   objects and every version still opening what it sealed. `wrapped_key` is the 32-byte key
 *   encrypted under a key derived from the server key (base64 of nonce, tag and ciphertext), so the
 *   database alone reveals no key. No foreign key: an institute's keys outlive nothing they protect.
 */
export async function up(db: Kysely<any>, _dialect: 'sqlite' | 'postgres'): Promise<void> {
  await db.schema
    .createTable('data_keys')
    .addColumn('institute_id', 'integer', (col) => col.notNull())
    .addColumn('version', 'integer', (col) => col.notNull())
    .addColumn('wrapped_key', 'text', (col) => col.notNull())
    .addColumn('created_at', 'bigint', (col) => col.notNull())
    .addPrimaryKeyConstraint('data_keys_pkey', ['institute_id', 'version'])
    .execute();
}
