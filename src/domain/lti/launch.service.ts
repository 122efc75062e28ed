import type { Db } from '../../db/database.ts';
import type { LaunchOutcome, LtiLaunch } from './launch.ts';
import { LaunchRefused } from './launch.ts';
import { createTicket } from './tickets.ts';
import { insertAuditEvent } from '../audit/audit.repository.ts';
import { USER_AGENT_MAX } from '../audit/audit-event.ts';
import type { Clock } from '../clock.ts';
import type { Lti11Verifier } from '../ports/lti.ts';
import { Taken, Unauthorized } from '../errors.ts';
import { findExam } from '../exams/exams.repository.ts';
import { isLocale, localeOfTag } from '../../i18n/locales.ts';
import { canonicalLanguage } from '../languages.ts';
import { insertLtiResource } from '../lti-resources/lti-resources.repository.ts';
import type { RoomService } from '../room/room.service.ts';
import type { ClientInfo, SignInResult, StaffAuthService } from '../staff-auth/staff-auth.service.ts';
import {
  generateFields,
  newSessionDefaults,
  normalizeEmail,
  SESSION_NAME_MAX,
} from '../student-sessions/student-session.ts';
import {
  attemptsOf,
  insertStudentSession,
  uniqueViolationOn,
} from '../student-sessions/student-sessions.repository.ts';
import type { UsersService } from '../users/users.service.ts';
import {
  findResourceByLink,
  findUserByEmailAnyCase,
  type LaunchResource,
  type LaunchSession,
  linkResourceToExam,
  lmsSessionOfAttempt,
  newestLmsSession,
  newestUnclaimedSessionByEmail,
  setSessionLmsFields,
  upsertSessionLink,
} from './lti-launch.repository.ts';
import { isPlaceholderEmail, placeholderEmail } from './placeholder-email.ts';

/**
 * What a verified LMS launch does (docs/lti.md, "What a launch does"): a learner lands in the exam
 * room of the resource link's exam, staff in the console; Proctoring Services and deep-linking
 * messages are handled here too. The verifiers (src/lti/oauth1.ts, src/lti/id-token.ts) have
 * already checked who sent the launch; nothing here trusts anything but the verified LtiLaunch.
 */
export interface LtiLaunchService {
  /**
   * Verifies an LTI 1.1 launch (the form of `POST /lti/launch` carrying `oauth_signature`) with this
   * server's key and PUBLIC_URL: the Lti11Verifier port (verifyLti11Launch bound to them by app.ts).
   * Returns the launch; throws LaunchRefused.
   */
  verifyLti11(request: { method: string; params: Record<string, string> }): Promise<LtiLaunch>;
  /**
   * Carries out a verified launch. Returns where it leads: the room (a learner's session, found or
   * created), the console (a staff user, found or created; the caller then signs them in with
   * signIn), or a message page (the exam is not ready, finished, handed in). Throws LaunchRefused
   * (a launch that verified but cannot be carried out: no resource link, staff without email, a
   * user of another institute, a deactivated user or a superuser, a deep-linking request from a
   * learner).
   */
  launch(launch: LtiLaunch, client: ClientInfo): Promise<LaunchOutcome>;
  /**
   * Opens a console session for `userId` after a staff launch, exactly as an OpenID Connect
   * sign-in does (staffAuth.signInVerified): a session, or, when the user has a second factor, the
   * pending second step (the HTTP layer then sends the browser to the console's sign-in page with
   * the pending token in the fragment, as the OIDC callback does). A session is recorded in the
   * audit log as `sign_in` with the tool provider as target. Returns the sign-in result; throws
   * LaunchRefused (`user_unavailable`, 403) when the user is gone or deactivated.
   */
  signIn(userId: number, client: ClientInfo, toolProviderId?: number): Promise<SignInResult>;
}

/** The custom parameter deep linking puts on the links it returns: the exam a link launches into. */
export const EXAM_ID_CUSTOM = 'invigil_exam_id';
/** How long a deep-linking ticket lives: time to pick or create an exam. */
export const DEEP_LINK_TICKET_MS = 30 * 60 * 1000;
/** The console's screen of LTI resources, where an unlinked placement is given its exam. */
const LTI_RESOURCES_PATH = '/console/admin/lti-resources';
/** Audit status of what a launch creates: the launch answers 303 (room, console). */
const AUDIT_STATUS = 303;

/** The launch's email as stored (trimmed, lower case) when it looks like one; else null. */
function usableEmail(email: string | null): string | null {
  if (email === null) return null;
  const normalized = normalizeEmail(email);
  return /^[^\s@]+@[^\s@]+$/.test(normalized) && !isPlaceholderEmail(normalized) ? normalized : null;
}

/**
 * The student's language from a platform's locale: the tag in canonical case when the service keeps
 * its shape (`de-CH`), else its primary language (`de-DE-1996` → `de`); undefined for a language the
 * service does not speak, which the launch then ignores.
 */
function languageOfLocale(locale: string): string | undefined {
  const primary = localeOfTag(locale);
  return canonicalLanguage(locale.trim()) ?? (isLocale(primary) ? primary : undefined);
}

function isStaff(launch: LtiLaunch): boolean {
  return launch.roles.includes('instructor') || launch.roles.includes('administrator');
}

/** The exam id a deep-linked resource link carries, or undefined. */
function customExamId(launch: LtiLaunch): number | undefined {
  const text = launch.custom[EXAM_ID_CUSTOM]?.trim();
  if (text === undefined || !/^\d{1,15}$/.test(text)) return undefined;
  return Number(text);
}

/** Builds the launch use cases. Returns the service; throws nothing. */
export function createLtiLaunchService(deps: {
  db: Db;
  clock: Clock;
  users: Pick<UsersService, 'create'>;
  staffAuth: Pick<StaffAuthService, 'signInVerified'>;
  room: Pick<RoomService, 'finish'>;
  /** Checks an LTI 1.1 launch's signature (src/lti/oauth1.ts, bound to the server key and PUBLIC_URL). */
  verifyLti11: Lti11Verifier;
}): LtiLaunchService {
  const { db, clock, users, staffAuth, room, verifyLti11 } = deps;

  async function audit(
    client: ClientInfo,
    event: {
      instituteId: number;
      userId: number | null;
      action: string;
      targetType: string | null;
      targetId: number | null;
    },
  ): Promise<void> {
    await insertAuditEvent(db, {
      ...event,
      email: null,
      status: AUDIT_STATUS,
      ip: client.ip,
      userAgent: client.userAgent === null ? null : client.userAgent.slice(0, USER_AGENT_MAX),
      createdAt: clock.now(),
    });
  }

  /** The exam `id` names when it is an exam of the institute that is not deleted. */
  async function usableExam(id: number | null | undefined, instituteId: number) {
    if (id === null || id === undefined) return undefined;
    const exam = await findExam(db, id);
    if (exam === undefined || exam.instituteId !== instituteId || exam.status === 'deleted') return undefined;
    return exam;
  }

  /**
   * The resource of the launch's link, created on first launch; a deep-linked `invigil_exam_id`
   * links one that has no exam yet. Returns it with its exam (undefined when none is usable).
   */
  async function resourceOf(launch: LtiLaunch) {
    const link = launch.resourceLink;
    if (link === null) {
      throw new LaunchRefused('missing_resource_link', 'This launch names no resource link.');
    }
    const { toolProvider } = launch;
    const now = clock.now();
    const deepLinked = await usableExam(customExamId(launch), toolProvider.instituteId);
    let resource: LaunchResource | undefined = await findResourceByLink(db, toolProvider.id, link.id);
    if (resource === undefined) {
      try {
        const created = await insertLtiResource(
          db,
          {
            instituteId: toolProvider.instituteId,
            toolProviderId: toolProvider.id,
            examId: deepLinked?.id ?? null,
            resourceLinkId: link.id,
            contextId: launch.context?.id ?? null,
            title: link.title ?? launch.context?.title ?? null,
          },
          now,
        );
        resource = { id: created.id, examId: created.examId };
      } catch (error) {
        // A concurrent first launch of the same link created it.
        resource = await findResourceByLink(db, toolProvider.id, link.id);
        if (resource === undefined) throw error;
      }
    } else if (resource.examId === null && deepLinked !== undefined) {
      if (await linkResourceToExam(db, resource.id, deepLinked.id, now)) {
        resource = { ...resource, examId: deepLinked.id };
      }
    }
    const exam = await usableExam(resource.examId, toolProvider.instituteId);
    return { resource, exam, link };
  }

  /** Inserts a learner's session, drawing a new token on the (never seen) clash of two. */
  async function insertSession(
    examId: number,
    fields: {
      name: string;
      email: string;
      attempt: number;
      lmsUserId: string;
      resourceLinkId: string;
      contextId: string | null;
      ltiResourceId: number;
      language?: string;
    },
  ) {
    for (let round = 1; ; round += 1) {
      try {
        return await insertStudentSession(
          db,
          examId,
          { ...newSessionDefaults(), ...fields, ...generateFields() },
          clock.now(),
        );
      } catch (error) {
        const violated = uniqueViolationOn(error);
        if (violated === 'attempt') throw new Taken('email');
        if (violated !== 'token' || round >= 3) throw error;
      }
    }
  }

  const emailTaken = () =>
    new LaunchRefused(
      'email_taken',
      'Another student of this exam already has your email address. Ask your teacher to check the exam’s student list.',
      409,
    );

  /** Finds or creates the learner's session in the exam; a finished one gives a message instead. */
  async function learnerSession(
    launch: LtiLaunch,
    examId: number,
    resourceId: number,
    link: { id: string },
    client: ClientInfo,
  ): Promise<LaunchSession | LaunchOutcome> {
    const lmsUserId = launch.platformUserId;
    const email = usableEmail(launch.email) ?? placeholderEmail(launch.toolProvider.id, lmsUserId);
    // The platform's locale sets the student's language; one the service does not speak is ignored.
    const language = typeof launch.locale === 'string' ? languageOfLocale(launch.locale) : undefined;
    const languageField = language === undefined ? {} : { language };
    const lmsFields = {
      lmsUserId,
      resourceLinkId: link.id,
      contextId: launch.context?.id ?? null,
      ltiResourceId: resourceId,
    };
    const now = clock.now();
    const newest = await newestLmsSession(db, examId, lmsUserId);
    if (newest === undefined) {
      // A student staff added by hand (same email) is the same person: the launch claims that session.
      const unclaimed = await newestUnclaimedSessionByEmail(db, examId, email);
      if (unclaimed !== undefined) {
        await setSessionLmsFields(
          db,
          unclaimed.id,
          { ...lmsFields, contextId: lmsFields.contextId ?? undefined, ...languageField },
          now,
        );
        return finishedMessage(unclaimed) ?? unclaimed;
      }
      const attempts = await attemptsOf(db, examId, email);
      if (attempts.length > 0) throw emailTaken();
      return created(launch, examId, { ...lmsFields, email, attempt: 0, ...languageField }, client);
    }
    if (newest.status !== 'exam_finished') {
      // Fill what an older session (added by hand, or launched elsewhere) lacks; never move it.
      const missing = {
        ...(newest.resourceLinkId === null ? { resourceLinkId: link.id } : {}),
        ...(newest.contextId === null && lmsFields.contextId !== null
          ? { contextId: lmsFields.contextId }
          : {}),
        ...(newest.ltiResourceId === null ? { ltiResourceId: resourceId } : {}),
        ...(language !== undefined && newest.language !== language ? { language } : {}),
      };
      if (Object.keys(missing).length > 0) await setSessionLmsFields(db, newest.id, missing, now);
      return newest;
    }
    const attemptNumber = launch.proctoring?.attemptNumber;
    const newAttempt = attemptNumber !== undefined && attemptNumber > (newest.platformAttempt ?? 0);
    if (!newAttempt) return finishedMessage(newest) ?? newest;
    // A Proctoring Services launch of a later attempt: the next Invigil attempt, same email and name.
    try {
      return await created(
        launch,
        examId,
        {
          ...lmsFields,
          email: newest.email,
          attempt: newest.attempt + 1,
          name: newest.name,
          ...languageField,
        },
        client,
      );
    } catch (error) {
      if (error instanceof Taken) throw emailTaken();
      throw error;
    }
  }

  function finishedMessage(session: LaunchSession): LaunchOutcome | undefined {
    if (session.status !== 'exam_finished') return undefined;
    return {
      kind: 'message',
      title: 'Exam finished',
      message: 'You have finished this exam. You can close this window.',
      status: 200,
    };
  }

  async function created(
    launch: LtiLaunch,
    examId: number,
    fields: {
      email: string;
      attempt: number;
      lmsUserId: string;
      resourceLinkId: string;
      contextId: string | null;
      ltiResourceId: number;
      name?: string;
      language?: string;
    },
    client: ClientInfo,
  ): Promise<LaunchSession> {
    // A platform's name longer than an API client may send is cut, not refused.
    const name = (fields.name ?? launch.name ?? `Student ${launch.platformUserId}`).slice(
      0,
      SESSION_NAME_MAX,
    );
    let session;
    try {
      session = await insertSession(examId, { ...fields, name });
    } catch (error) {
      if (error instanceof Taken && fields.attempt === 0) throw emailTaken();
      throw error;
    }
    await audit(client, {
      instituteId: launch.toolProvider.instituteId,
      userId: null,
      action: 'lti_session_created',
      targetType: 'student_sessions',
      targetId: session.id,
    });
    return {
      id: session.id,
      token: session.token,
      status: session.status,
      attempt: session.attempt,
      email: session.email,
      name: session.name,
      language: session.language,
      resourceLinkId: session.resourceLinkId,
      contextId: session.contextId,
      ltiResourceId: session.ltiResourceId,
      platformAttempt: null,
    };
  }

  async function linkSession(launch: LtiLaunch, sessionId: number): Promise<void> {
    await upsertSessionLink(
      db,
      sessionId,
      {
        toolProviderId: launch.toolProvider.id,
        ltiVersion: launch.version,
        platformUserId: launch.platformUserId,
        deploymentId: launch.deploymentId,
        proctoring: launch.proctoring,
      },
      clock.now(),
    );
  }

  async function learnerLaunch(launch: LtiLaunch, client: ClientInfo): Promise<LaunchOutcome> {
    const { resource, exam, link } = await resourceOf(launch);
    if (exam === undefined) {
      return {
        kind: 'message',
        title: 'Exam not ready',
        message:
          'This exam is not ready yet. Ask your teacher to set it up in Invigil, then open the link again.',
        status: 404,
      };
    }
    const found = await learnerSession(launch, exam.id, resource.id, link, client);
    if ('kind' in found) return found;
    await linkSession(launch, found.id);
    return { kind: 'room', sessionId: found.id, token: found.token, examId: exam.id };
  }

  async function endAssessment(launch: LtiLaunch): Promise<LaunchOutcome> {
    const { exam } = await resourceOf(launch);
    const handedIn: LaunchOutcome = {
      kind: 'message',
      title: 'Exam handed in',
      message: 'Your exam has been handed in. You can close this window.',
      status: 200,
    };
    if (exam === undefined) return handedIn;
    const attemptNumber = launch.proctoring?.attemptNumber;
    const session =
      (attemptNumber === undefined
        ? undefined
        : await lmsSessionOfAttempt(db, exam.id, launch.platformUserId, attemptNumber)) ??
      (await newestLmsSession(db, exam.id, launch.platformUserId));
    if (session === undefined) {
      throw new LaunchRefused(
        'unknown_session',
        'Invigil has no exam session of yours for this assessment.',
        404,
      );
    }
    if (session.status !== 'exam_finished') await room.finish(session.token);
    // The end names only the attempt: the start's claims (the ACS a later `flag` goes to, the
    // session data) stay as LtiStartProctoring stored them.
    await linkSession({ ...launch, proctoring: null }, session.id);
    return handedIn;
  }

  /** The staff user of the launch: matched by email in the institute, or created. */
  async function staffUser(launch: LtiLaunch, client: ClientInfo): Promise<number> {
    const email = usableEmail(launch.email);
    if (email === null) {
      throw new LaunchRefused(
        'email_missing',
        'Your learning platform did not send your email address, which Invigil needs to sign you in. Ask its administrator to share it with Invigil.',
        403,
      );
    }
    const { instituteId } = launch.toolProvider;
    const found = await findUserByEmailAnyCase(db, email);
    if (found !== undefined) return usableStaff(found, instituteId);
    const role = launch.roles.includes('administrator') ? 'administrator' : 'teacher';
    try {
      const { user } = await users.create(instituteId, { email, name: launch.name ?? email, role });
      await audit(client, {
        instituteId,
        userId: user.id,
        action: 'lti_user_created',
        targetType: 'users',
        targetId: user.id,
      });
      return user.id;
    } catch (error) {
      // Created by a concurrent launch meanwhile.
      if (!(error instanceof Taken)) throw error;
      const raced = await findUserByEmailAnyCase(db, email);
      if (raced === undefined) throw error;
      return usableStaff(raced, instituteId);
    }
  }

  function usableStaff(
    user: { id: number; instituteId: number; role: string; active: boolean },
    instituteId: number,
  ): number {
    if (user.instituteId !== instituteId) {
      throw new LaunchRefused(
        'user_in_other_institute',
        'Invigil cannot sign you in with this email address through this learning platform. Ask your Invigil administrator for help.',
        403,
      );
    }
    // A superuser reaches every institute: one platform must not be able to sign one in.
    if (user.role === 'superuser') {
      throw new LaunchRefused(
        'superuser',
        'Invigil superusers cannot sign in through a learning platform. Sign in at the console instead.',
        403,
      );
    }
    if (!user.active) {
      throw new LaunchRefused(
        'user_deactivated',
        'Your Invigil account is deactivated. Ask your Invigil administrator.',
        403,
      );
    }
    return user.id;
  }

  async function staffLaunch(launch: LtiLaunch, client: ClientInfo): Promise<LaunchOutcome> {
    const userId = await staffUser(launch, client);
    const { resource, exam } = await resourceOf(launch);
    const path =
      exam === undefined
        ? `${LTI_RESOURCES_PATH}?lti_resource_id=${resource.id}`
        : `/console/exams/${exam.id}`;
    return { kind: 'console', userId, path };
  }

  async function deepLinking(launch: LtiLaunch, client: ClientInfo): Promise<LaunchOutcome> {
    if (!isStaff(launch)) {
      throw new LaunchRefused(
        'deep_linking_not_staff',
        'Only teachers and administrators can choose the exam a link opens.',
        403,
      );
    }
    if (launch.deepLinking === null) {
      throw new LaunchRefused('missing_deep_linking_settings', 'This deep-linking request has no settings.');
    }
    const userId = await staffUser(launch, client);
    const ticket = await createTicket(
      { db, clock },
      'deep_link',
      {
        toolProviderId: launch.toolProvider.id,
        deploymentId: launch.deploymentId,
        settings: launch.deepLinking,
        userId,
        platformIssuer: launch.platformIssuer,
      },
      DEEP_LINK_TICKET_MS,
    );
    return { kind: 'console', userId, path: `/console/lti/deep-link?ticket=${ticket}` };
  }

  return {
    verifyLti11(request) {
      return verifyLti11(request);
    },

    async launch(launch, client) {
      switch (launch.messageKind) {
        case 'deep_linking':
          return deepLinking(launch, client);
        case 'end_assessment':
          return endAssessment(launch);
        case 'start_proctoring':
          return learnerLaunch(launch, client);
        case 'resource_link':
          return isStaff(launch) ? staffLaunch(launch, client) : learnerLaunch(launch, client);
      }
    },

    async signIn(userId, client, toolProviderId) {
      let result: SignInResult;
      try {
        result = await staffAuth.signInVerified(userId, client);
      } catch (error) {
        if (error instanceof Unauthorized) {
          throw new LaunchRefused(
            'user_unavailable',
            'Your Invigil account cannot sign in. Ask your Invigil administrator.',
            403,
          );
        }
        throw error;
      }
      if (result.pending !== undefined) return result;
      const { actor } = result.session;
      await audit(client, {
        instituteId: actor.instituteId,
        userId: actor.id,
        action: 'sign_in',
        targetType: toolProviderId === undefined ? null : 'tool_providers',
        targetId: toolProviderId ?? null,
      });
      return result;
    },
  };
}
