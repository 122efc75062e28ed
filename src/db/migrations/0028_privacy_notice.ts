// Frozen in time: this migration imports nothing from src/ and must never change once released.
// A change to the schema is a new migration file.
import type { Kysely } from 'kysely';

/**
 * The candidate's rights (step 19, docs/data-protection.md):
 * - `institutes.privacy_contact`: how candidates reach the institute about their data (an address,
 *   a mailbox or a web page), shown in the room's privacy panel; null until set.
 * - `institutes.dpo_name`, `institutes.dpo_email`: the institute's data protection officer.
 * - `institutes.appeal_period_days`: how long after a final `suspicious` or `violation` verdict the
 *   candidate may contest it; 14 for existing institutes.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('institutes').addColumn('privacy_contact', 'text').execute();
  await db.schema.alterTable('institutes').addColumn('dpo_name', 'text').execute();
  await db.schema.alterTable('institutes').addColumn('dpo_email', 'text').execute();
  await db.schema
    .alterTable('institutes')
    .addColumn('appeal_period_days', 'integer', (col) => col.notNull().defaultTo(14))
    .execute();
}
