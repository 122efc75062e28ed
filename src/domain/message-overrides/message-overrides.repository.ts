import type { Selectable } from 'kysely';
import type { Db } from '../../db/database.ts';
import type { MessageOverridesTable } from '../../db/tables.ts';
import { isLocale } from '../../i18n/locales.ts';
import type { MessageOverride } from './message-override.ts';

type OverrideRow = Selectable<MessageOverridesTable>;

function overrideFromRow(row: OverrideRow): MessageOverride | undefined {
  if (!isLocale(row.locale)) return undefined;
  return {
    instituteId: row.institute_id,
    locale: row.locale,
    key: row.key,
    message: row.message,
    updatedAt: Number(row.updated_at),
    updatedBy: row.updated_by,
  };
}

/** The institute's overrides, of one locale or of all, sorted by locale and key. */
export async function listOverrides(
  db: Db,
  instituteId: number,
  locale?: string,
): Promise<MessageOverride[]> {
  let query = db.selectFrom('message_overrides').selectAll().where('institute_id', '=', instituteId);
  if (locale !== undefined) query = query.where('locale', '=', locale);
  const rows = await query.orderBy('locale').orderBy('key').execute();
  return rows.map(overrideFromRow).filter((override) => override !== undefined);
}

/** Saves a wording, replacing the one of the same (institute, locale, key). Returns it as stored. */
export async function upsertOverride(db: Db, override: MessageOverride): Promise<void> {
  await db
    .insertInto('message_overrides')
    .values({
      institute_id: override.instituteId,
      locale: override.locale,
      key: override.key,
      message: override.message,
      updated_at: override.updatedAt,
      updated_by: override.updatedBy,
    })
    .onConflict((conflict) =>
      conflict.columns(['institute_id', 'locale', 'key']).doUpdateSet({
        message: override.message,
        updated_at: override.updatedAt,
        updated_by: override.updatedBy,
      }),
    )
    .execute();
}

/** Removes a wording; nothing happens when there is none. */
export async function deleteOverride(
  db: Db,
  instituteId: number,
  locale: string,
  key: string,
): Promise<void> {
  await db
    .deleteFrom('message_overrides')
    .where('institute_id', '=', instituteId)
    .where('locale', '=', locale)
    .where('key', '=', key)
    .execute();
}
