import type { Selectable, Updateable } from 'kysely';
import type { Db } from '../../db/database.ts';
import { applyConditions, applyOrderAndPage } from '../list-query.ts';
import type { InstitutesTable } from '../../db/tables.ts';
import type { ListQuery, Page } from '../listing.ts';
import {
  INSTITUTE_EMAIL_SWITCHES,
  type Institute,
  type InstituteAttributes,
  type InstituteChanges,
  type InstituteEmailSwitch,
} from './institute.ts';

type InstituteRow = Selectable<InstitutesTable>;

function instituteFromRow(row: InstituteRow): Institute {
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
    requireSecondFactorForAdministrators: Boolean(row.require_second_factor_for_administrators),
    secondReviewRequired: Boolean(row.second_review_required),
    privacyContact: row.privacy_contact,
    dpoName: row.dpo_name,
    dpoEmail: row.dpo_email,
    appealPeriodDays: Number(row.appeal_period_days),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function columnsFrom(changes: InstituteChanges): Updateable<InstitutesTable> {
  const values: Updateable<InstitutesTable> = {};
  if (changes.name !== undefined) values.name = changes.name;
  if (changes.shortName !== undefined) values.short_name = changes.shortName;
  if (changes.callbackUrl !== undefined) values.callback_url = changes.callbackUrl;
  if (changes.sessionRetentionPeriod !== undefined)
    values.session_retention_period = changes.sessionRetentionPeriod;
  if (changes.defaultLanguage !== undefined) values.default_language = changes.defaultLanguage;
  if (changes.requireSecondFactorForAdministrators !== undefined)
    values.require_second_factor_for_administrators = changes.requireSecondFactorForAdministrators;
  if (changes.secondReviewRequired !== undefined)
    values.second_review_required = changes.secondReviewRequired;
  if (changes.privacyContact !== undefined) values.privacy_contact = changes.privacyContact;
  if (changes.dpoName !== undefined) values.dpo_name = changes.dpoName;
  if (changes.dpoEmail !== undefined) values.dpo_email = changes.dpoEmail;
  if (changes.appealPeriodDays !== undefined) values.appeal_period_days = changes.appealPeriodDays;
  for (const [key, column] of Object.entries(INSTITUTE_EMAIL_SWITCHES) as [
    InstituteEmailSwitch,
    (typeof INSTITUTE_EMAIL_SWITCHES)[InstituteEmailSwitch],
  ][]) {
    const value = changes[key];
    if (value !== undefined) values[column] = value;
  }
  return values;
}

/** Inserts an institute. Returns it; throws the database's unique violation when the name is taken. */
export async function insertInstitute(
  db: Db,
  attributes: InstituteAttributes,
  now: number,
): Promise<Institute> {
  const row = await db
    .insertInto('institutes')
    .values({
      name: attributes.name,
      short_name: attributes.shortName,
      callback_url: attributes.callbackUrl,
      check_requirements_emails_enabled: attributes.checkRequirementsEmailsEnabled,
      reminder_emails_enabled: attributes.reminderEmailsEnabled,
      exam_link_emails_enabled: attributes.examLinkEmailsEnabled,
      exam_changed_emails_enabled: attributes.examChangedEmailsEnabled,
      exam_finalized_emails_enabled: attributes.examFinalizedEmailsEnabled,
      session_retention_period: attributes.sessionRetentionPeriod,
      default_language: attributes.defaultLanguage,
      require_second_factor_for_administrators: attributes.requireSecondFactorForAdministrators,
      second_review_required: attributes.secondReviewRequired,
      privacy_contact: attributes.privacyContact,
      dpo_name: attributes.dpoName,
      dpo_email: attributes.dpoEmail,
      appeal_period_days: attributes.appealPeriodDays,
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

/**
 * Writes the changes. Returns the institute as saved, or undefined if it vanished meanwhile; throws
 * the database's unique violation when the new name is taken.
 */
export async function updateInstitute(
  db: Db,
  id: number,
  changes: InstituteChanges,
  now: number,
): Promise<Institute | undefined> {
  const row = await db
    .updateTable('institutes')
    .set({ ...columnsFrom(changes), updated_at: now })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
  return row === undefined ? undefined : instituteFromRow(row);
}

/** One page of every institute, filtered and sorted. Returns the page with the total count. */
export async function listInstitutes(db: Db, list: ListQuery): Promise<Page<Institute>> {
  const base = applyConditions(db.selectFrom('institutes'), list, 'institutes');
  const [countRow, rows] = await Promise.all([
    base.select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow(),
    applyOrderAndPage(base.selectAll('institutes'), list, 'institutes').execute(),
  ]);
  return {
    items: rows.map(instituteFromRow),
    total: Number(countRow.count),
    page: list.page,
    limit: list.limit,
  };
}

/**
 * Deletes an institute and everything that belongs to it: its exams (with their documents,
 * attachments, student sessions, incidents, session files and zip exports), its users (with their
 * nonces and co-manager rows), identity providers, tool providers and LTI resources, and the queued
 * mail of its student sessions. Run it in a transaction: it reads the ids of the stored files those
 * rows pointed at, deletes, and returns those ids (the file records themselves are left for the
 * caller to remove after the commit, with their stored objects). Returns undefined when there is
 * no such institute. Throws the database's foreign-key violation if a record outside the institute
 * still refers to one of its users (an exam of another institute owned by one of them).
 */
export async function deleteInstituteTree(db: Db, id: number): Promise<number[] | undefined> {
  const exists = await db.selectFrom('institutes').select('id').where('id', '=', id).executeTakeFirst();
  if (exists === undefined) return undefined;
  const examIds = db.selectFrom('exams').select('exams.id').where('exams.institute_id', '=', id);
  const sessionIds = db
    .selectFrom('student_sessions')
    .select('student_sessions.id')
    .where('student_sessions.exam_id', 'in', examIds);
  // One after another: a transaction holds a single connection.
  const attachments = await db
    .selectFrom('attachments')
    .select('file_id')
    .where('exam_id', 'in', examIds)
    .execute();
  const sessions = await db
    .selectFrom('student_sessions')
    .select(['exam_document_file_id', 'id_card_file_id', 'face_photo_file_id'])
    .where('exam_id', 'in', examIds)
    .where((eb) =>
      eb.or([
        eb('exam_document_file_id', 'is not', null),
        eb('id_card_file_id', 'is not', null),
        eb('face_photo_file_id', 'is not', null),
      ]),
    )
    .execute();
  const sessionFiles = await db
    .selectFrom('session_files')
    .select('file_id')
    .where('student_session_id', 'in', sessionIds)
    .execute();
  const exports = await db
    .selectFrom('exam_zip_exports')
    .select('file_id')
    .where('exam_id', 'in', examIds)
    .where('file_id', 'is not', null)
    .execute();
  const fileIds = [
    ...attachments.map((row) => row.file_id),
    ...sessions.flatMap((row) => [row.exam_document_file_id, row.id_card_file_id, row.face_photo_file_id]),
    ...sessionFiles.map((row) => row.file_id),
    ...exports.map((row) => row.file_id),
  ];
  // Mail not yet sent to the institute's students must not go out after it is gone.
  await db.deleteFrom('outbox').where('student_session_id', 'in', sessionIds).execute();
  // Exams first: they refer to users without a cascade, so they must be gone before the users go.
  // Everything beneath an exam cascades with it; everything else cascades with the institute.
  await db.deleteFrom('exams').where('institute_id', '=', id).execute();
  await db.deleteFrom('institutes').where('id', '=', id).execute();
  return [...new Set(fileIds.filter((fileId): fileId is number => fileId !== null))];
}
