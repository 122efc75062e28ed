import type { Db } from '../../db/database.ts';
import type { ProctoringClaims } from './launch.ts';

/** All SQL of what an LMS launch does (src/domain/lti/launch.service.ts), beyond the shared repositories. */

/** A resource link of a tool provider, as a launch needs it. */
export interface LaunchResource {
  readonly id: number;
  readonly examId: number | null;
}

/** The LTI resource of (tool provider, resource link), or undefined. */
export async function findResourceByLink(
  db: Db,
  toolProviderId: number,
  resourceLinkId: string,
): Promise<LaunchResource | undefined> {
  const row = await db
    .selectFrom('lti_resources')
    .select(['id', 'exam_id'])
    .where('tool_provider_id', '=', toolProviderId)
    .where('resource_link_id', '=', resourceLinkId)
    .orderBy('id')
    .executeTakeFirst();
  return row === undefined ? undefined : { id: row.id, examId: row.exam_id };
}

/** Links a resource that has no exam yet to `examId`. Returns whether it did (false: it had one meanwhile). */
export async function linkResourceToExam(db: Db, id: number, examId: number, now: number): Promise<boolean> {
  const result = await db
    .updateTable('lti_resources')
    .set({ exam_id: examId, updated_at: now })
    .where('id', '=', id)
    .where('exam_id', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** A session a launch may continue: its id, token, status, attempt, email and LMS fields. */
export interface LaunchSession {
  readonly id: number;
  readonly token: string;
  readonly status: string;
  readonly attempt: number;
  readonly email: string;
  readonly name: string;
  readonly resourceLinkId: string | null;
  readonly contextId: string | null;
  readonly ltiResourceId: number | null;
  /** The student's language (a supported BCP 47 tag), or null. */
  readonly language: string | null;
  /** The Proctoring Services attempt its link holds, null without one. */
  readonly platformAttempt: number | null;
}

function sessionsOf(db: Db, examId: number) {
  return db
    .selectFrom('student_sessions as s')
    .leftJoin('lti_session_links as l', 'l.student_session_id', 's.id')
    .select([
      's.id',
      's.token',
      's.status',
      's.attempt',
      's.email',
      's.name',
      's.resource_link_id',
      's.context_id',
      's.lti_resource_id',
      's.language',
      'l.attempt_number',
    ])
    .where('s.exam_id', '=', examId);
}

type SessionRow = {
  id: number;
  token: string;
  status: string;
  attempt: number;
  email: string;
  name: string;
  resource_link_id: string | null;
  context_id: string | null;
  lti_resource_id: number | null;
  language: string | null;
  attempt_number: number | null;
};

function sessionFromRow(row: SessionRow | undefined): LaunchSession | undefined {
  if (row === undefined) return undefined;
  return {
    id: row.id,
    token: row.token,
    status: row.status,
    attempt: row.attempt,
    email: row.email,
    name: row.name,
    resourceLinkId: row.resource_link_id,
    contextId: row.context_id,
    ltiResourceId: row.lti_resource_id,
    language: row.language,
    platformAttempt: row.attempt_number,
  };
}

/** The newest attempt of the LMS user in the exam (archived ones included), or undefined. */
export async function newestLmsSession(
  db: Db,
  examId: number,
  lmsUserId: string,
): Promise<LaunchSession | undefined> {
  const row = await sessionsOf(db, examId)
    .where('s.lms_user_id', '=', lmsUserId)
    .orderBy('s.attempt', 'desc')
    .orderBy('s.id', 'desc')
    .executeTakeFirst();
  return sessionFromRow(row);
}

/** The session of the LMS user for Proctoring Services attempt `attemptNumber`, or undefined. */
export async function lmsSessionOfAttempt(
  db: Db,
  examId: number,
  lmsUserId: string,
  attemptNumber: number,
): Promise<LaunchSession | undefined> {
  const row = await sessionsOf(db, examId)
    .where('s.lms_user_id', '=', lmsUserId)
    .where('l.attempt_number', '=', attemptNumber)
    .orderBy('s.id', 'desc')
    .executeTakeFirst();
  return sessionFromRow(row);
}

/**
 * The newest session of the exam with this email that no LMS user holds yet (a student staff added
 * by hand before the first launch), or undefined.
 */
export async function newestUnclaimedSessionByEmail(
  db: Db,
  examId: number,
  email: string,
): Promise<LaunchSession | undefined> {
  const row = await sessionsOf(db, examId)
    .where('s.email', '=', email)
    .where('s.lms_user_id', 'is', null)
    .orderBy('s.attempt', 'desc')
    .orderBy('s.id', 'desc')
    .executeTakeFirst();
  return sessionFromRow(row);
}

/** The LMS fields a launch writes on a session. Only those not undefined are written. */
export interface SessionLmsFields {
  readonly lmsUserId?: string;
  readonly resourceLinkId?: string;
  readonly contextId?: string;
  readonly ltiResourceId?: number;
  /** The student's language, from the launch's locale (a supported tag in canonical case). */
  readonly language?: string;
}

/** Writes the LMS fields of a session. */
export async function setSessionLmsFields(
  db: Db,
  id: number,
  fields: SessionLmsFields,
  now: number,
): Promise<void> {
  await db
    .updateTable('student_sessions')
    .set({
      ...(fields.lmsUserId === undefined ? {} : { lms_user_id: fields.lmsUserId }),
      ...(fields.resourceLinkId === undefined ? {} : { resource_link_id: fields.resourceLinkId }),
      ...(fields.contextId === undefined ? {} : { context_id: fields.contextId }),
      ...(fields.ltiResourceId === undefined ? {} : { lti_resource_id: fields.ltiResourceId }),
      ...(fields.language === undefined ? {} : { language: fields.language }),
      updated_at: now,
    })
    .where('id', '=', id)
    .execute();
}

/** What a launch tells about a session for later messages (the `lti_session_links` row). */
export interface SessionLinkFields {
  readonly toolProviderId: number;
  readonly ltiVersion: '1.1' | '1.3';
  readonly platformUserId: string;
  readonly deploymentId: string | null;
  /** Proctoring Services claims; null keeps those stored (an ordinary launch erases nothing). */
  readonly proctoring: ProctoringClaims | null;
}

/** Inserts or updates the link of session `sessionId`. */
export async function upsertSessionLink(
  db: Db,
  sessionId: number,
  link: SessionLinkFields,
  now: number,
): Promise<void> {
  const claims = link.proctoring;
  const proctoring =
    claims === null
      ? {}
      : {
          attempt_number: claims.attemptNumber,
          start_assessment_url: claims.startAssessmentUrl,
          session_data: claims.sessionData,
          acs_url: claims.acs?.url ?? null,
          acs_actions: claims.acs === null ? null : JSON.stringify(claims.acs.actions),
        };
  const common = {
    tool_provider_id: link.toolProviderId,
    lti_version: link.ltiVersion,
    platform_user_id: link.platformUserId,
    deployment_id: link.deploymentId,
    updated_at: now,
  };
  await db
    .insertInto('lti_session_links')
    .values({ student_session_id: sessionId, ...common, ...proctoring, created_at: now })
    .onConflict((conflict) => conflict.column('student_session_id').doUpdateSet({ ...common, ...proctoring }))
    .execute();
}

/** The user with this email (case-insensitive) with its institute, role and state, or undefined. */
export async function findUserByEmailAnyCase(
  db: Db,
  email: string,
): Promise<{ id: number; instituteId: number; role: string; active: boolean } | undefined> {
  const row = await db
    .selectFrom('users')
    .select(['id', 'institute_id', 'role', 'active'])
    .where((eb) => eb(eb.fn('lower', ['email']), '=', email.toLowerCase()))
    .orderBy('id')
    .executeTakeFirst();
  return row === undefined
    ? undefined
    : { id: row.id, instituteId: row.institute_id, role: row.role, active: Boolean(row.active) };
}

/**
 * True when session `sessionId` was launched with `LtiStartProctoring` over LTI 1.3 and so has a
 * platform to continue to (its link has a start_assessment_url). Returns the answer.
 */
export async function hasStartAssessment(db: Db, sessionId: number): Promise<boolean> {
  const row = await db
    .selectFrom('lti_session_links')
    .select('student_session_id')
    .where('student_session_id', '=', sessionId)
    .where('start_assessment_url', 'is not', null)
    .executeTakeFirst();
  return row !== undefined;
}
