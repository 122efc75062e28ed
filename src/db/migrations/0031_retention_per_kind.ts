// Frozen in time: this migration imports nothing from src/ and must never change once released.
// A change to the schema is a new migration file.
import type { Kysely } from 'kysely';

/**
 * Retention per kind of data (step 19, docs/retention.md):
 * - `retention_policies`: an institute's period per kind (`id_photo`, `face_photo`, `recording`,
 *   `upload`, `incident`) in days after the session ended; `days` null follows the institute's
 *   session_retention_period. No row: the kind's default (in the code).
 * - `session_kind_purges`: one row per session and kind the sweep purged (its cursor, and the
 *   session's record of what went when, by which rule). For an ID photo it keeps the fact that the
 *   ID was checked: by whom (user id and name as then) and when. No foreign key on the checker: the
 *   record outlives the account.
 * - `session_purges.rule`: which rule purged the entry (`period`, `final_verdict`); null before.
 * Sessions purged before this migration (media_purged_at set) get their media kinds marked, so the
 * sweep does not look at them again; their incidents stay to be judged by the incident rule.
 */
export async function up(db: Kysely<any>, _dialect: 'sqlite' | 'postgres'): Promise<void> {
  await db.schema
    .createTable('retention_policies')
    .addColumn('institute_id', 'integer', (col) =>
      col.notNull().references('institutes.id').onDelete('cascade'),
    )
    .addColumn('kind', 'text', (col) => col.notNull())
    .addColumn('days', 'integer')
    .addColumn('updated_by', 'integer')
    .addColumn('updated_at', 'bigint', (col) => col.notNull())
    .addPrimaryKeyConstraint('retention_policies_pkey', ['institute_id', 'kind'])
    .execute();

  await db.schema
    .createTable('session_kind_purges')
    .addColumn('student_session_id', 'integer', (col) =>
      col.notNull().references('student_sessions.id').onDelete('cascade'),
    )
    .addColumn('kind', 'text', (col) => col.notNull())
    // period (days after the end) or final_verdict (the ID photo's 24 hours after a final verdict)
    .addColumn('rule', 'text', (col) => col.notNull())
    .addColumn('days', 'integer')
    .addColumn('purged_at', 'bigint', (col) => col.notNull())
    .addColumn('id_checked', 'boolean', (col) => col.notNull().defaultTo(false))
    .addColumn('id_checked_by', 'integer')
    .addColumn('id_checked_by_name', 'text')
    .addColumn('id_checked_at', 'bigint')
    .addPrimaryKeyConstraint('session_kind_purges_pkey', ['student_session_id', 'kind'])
    .execute();

  await db.schema.alterTable('session_purges').addColumn('rule', 'text').execute();

  const purged = await db
    .selectFrom('student_sessions')
    .select(['id', 'media_purged_at'])
    .where('media_purged_at', 'is not', null)
    .execute();
  const kinds = ['id_photo', 'face_photo', 'recording', 'upload'];
  for (let start = 0; start < purged.length; start += 100) {
    const rows = purged.slice(start, start + 100).flatMap((session) =>
      kinds.map((kind) => ({
        student_session_id: session.id,
        kind,
        rule: 'period',
        days: null,
        purged_at: session.media_purged_at,
        id_checked: false,
      })),
    );
    await db.insertInto('session_kind_purges').values(rows).execute();
  }
}
