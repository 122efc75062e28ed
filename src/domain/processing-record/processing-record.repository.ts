/** The SQL behind the record of processing: counts and names only, nothing of a candidate. */
import type { Db } from '../../db/database.ts';
import type { RecordExamUse } from './processing-record.ts';

/** The institute's settings the record shows. */
export interface RecordInstitute {
  readonly id: number;
  readonly name: string;
  readonly shortName: string;
  readonly defaultLanguage: string;
  readonly privacyContact: string | null;
  readonly dpoName: string | null;
  readonly dpoEmail: string | null;
  readonly appealPeriodDays: number;
  readonly callbackUrl: string | null;
  readonly secondFactorForAdministrators: boolean;
  readonly secondReviewRequired: boolean;
}

/** The institute, or undefined when there is none with this id. */
export async function findRecordInstitute(db: Db, id: number): Promise<RecordInstitute | undefined> {
  const row = await db.selectFrom('institutes').selectAll().where('id', '=', id).executeTakeFirst();
  if (row === undefined) return undefined;
  return {
    id: row.id,
    name: row.name,
    shortName: row.short_name,
    defaultLanguage: row.default_language,
    privacyContact: row.privacy_contact,
    dpoName: row.dpo_name,
    dpoEmail: row.dpo_email,
    appealPeriodDays: Number(row.appeal_period_days),
    callbackUrl: row.callback_url,
    secondFactorForAdministrators: Boolean(row.require_second_factor_for_administrators),
    secondReviewRequired: Boolean(row.second_review_required),
  };
}

/** How many of the institute's exams use each recording setting. One query. */
export async function countExamUse(db: Db, instituteId: number): Promise<RecordExamUse> {
  const row = await db
    .selectFrom('exams')
    .select((eb) => [
      eb.fn.countAll<number>().as('total'),
      eb.fn.countAll<number>().filterWhere('web_cam', '=', true).as('webcam'),
      eb.fn.countAll<number>().filterWhere('screen_share', '=', true).as('screen'),
      eb.fn.countAll<number>().filterWhere('mobile_cam', '=', true).as('phone'),
      eb.fn.countAll<number>().filterWhere('upload_answers', '=', true).as('uploads'),
      eb.fn.countAll<number>().filterWhere('automated_flags', '=', true).as('flags'),
      eb.fn.countAll<number>().filterWhere('type', '=', 'live_proctoring').as('live'),
      eb.fn
        .countAll<number>()
        .filterWhere((filter) =>
          filter.and([filter('type', '=', 'live_proctoring'), filter('live_id_check', '=', true)]),
        )
        .as('live_id_check'),
    ])
    .where('institute_id', '=', instituteId)
    .executeTakeFirstOrThrow();
  return {
    total: Number(row.total),
    webcam: Number(row.webcam),
    screen: Number(row.screen),
    phone: Number(row.phone),
    uploads: Number(row.uploads),
    automatedFlags: Number(row.flags),
    liveProctoring: Number(row.live),
    liveIdCheck: Number(row.live_id_check),
  };
}

/** Active staff accounts of the institute per role, by role. */
export async function countStaff(db: Db, instituteId: number): Promise<{ role: string; count: number }[]> {
  const rows = await db
    .selectFrom('users')
    .select(['role', (eb) => eb.fn.countAll<number>().as('count')])
    .where('institute_id', '=', instituteId)
    .where('active', '=', true)
    .groupBy('role')
    .orderBy('role')
    .execute();
  return rows.map((row) => ({ role: row.role, count: Number(row.count) }));
}

/** How many of the institute's sessions are under a legal hold. */
export async function countLegalHolds(db: Db, instituteId: number): Promise<number> {
  const row = await db
    .selectFrom('student_sessions')
    .innerJoin('exams', 'exams.id', 'student_sessions.exam_id')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('exams.institute_id', '=', instituteId)
    .where('student_sessions.legal_hold', '=', true)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/** The institute's LMS platforms (tool providers): name and LTI version, by name. */
export async function listLtiPlatforms(
  db: Db,
  instituteId: number,
): Promise<{ name: string; version: string }[]> {
  const rows = await db
    .selectFrom('tool_providers')
    .select(['name', 'lti_version'])
    .where('institute_id', '=', instituteId)
    .orderBy('name')
    .orderBy('id')
    .execute();
  return rows.map((row) => ({ name: row.name, version: row.lti_version }));
}

/** The identity providers the institute's staff may sign in with: its own and the shared ones. */
export async function listIdentityProviders(
  db: Db,
  instituteId: number,
): Promise<{ name: string; protocol: string }[]> {
  return db
    .selectFrom('identity_providers')
    .select(['name', 'protocol'])
    .where((eb) => eb.or([eb('institute_id', '=', instituteId), eb('institute_id', 'is', null)]))
    .orderBy('name')
    .orderBy('id')
    .execute();
}
