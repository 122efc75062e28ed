import type { Selectable } from 'kysely';
import type { Db } from '../../db/database.ts';
import type { InstitutesTable } from '../../db/tables.ts';
import type { Institute, NewInstitute } from './institute.ts';

function instituteFromRow(row: Selectable<InstitutesTable>): Institute {
  return {
    id: row.id,
    name: row.name,
    shortName: row.short_name,
    callbackUrl: row.callback_url,
    checkRequirementsEmailsEnabled: Boolean(row.check_requirements_emails_enabled),
    reminderEmailsEnabled: Boolean(row.reminder_emails_enabled),
    examLinkEmailsEnabled: Boolean(row.exam_link_emails_enabled),
    examChangedEmailsEnabled: Boolean(row.exam_changed_emails_enabled),
    examFinalizedEmailsEnabled: Boolean(row.exam_finalized_emails_enabled),
    sessionRetentionPeriod: row.session_retention_period,
    defaultLanguage: row.default_language,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** Inserts an institute. Returns it; throws the database's unique violation when the name is taken. */
export async function insertInstitute(db: Db, input: NewInstitute, now: number): Promise<Institute> {
  const row = await db
    .insertInto('institutes')
    .values({
      name: input.name,
      short_name: input.shortName,
      check_requirements_emails_enabled: true,
      reminder_emails_enabled: true,
      exam_link_emails_enabled: true,
      exam_changed_emails_enabled: true,
      exam_finalized_emails_enabled: true,
      default_language: 'en',
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return instituteFromRow(row);
}

/** Returns the institute, or undefined. */
export async function findInstitute(db: Db, id: number): Promise<Institute | undefined> {
  const row = await db.selectFrom('institutes').selectAll().where('id', '=', id).executeTakeFirst();
  return row === undefined ? undefined : instituteFromRow(row);
}
