import type { Db } from '../../db/database.ts';
import type { JobQueue } from '../ports/jobs.ts';

/**
 * The decision side of LTI Proctoring Services' Assessment Control Service (docs/lti.md,
 * "Proctoring Services"): a proctor ending the session (end_exam) is `terminate`, a review verdict
 * `violation` is `flag`. Each is an `lti.acs` job written in the transaction of the decision, so it
 * is sent exactly when the decision is kept. The job's sending side (token, signed request, report)
 * is src/lti/acs.ts.
 */

/** The job kind. */
export const LTI_ACS_JOB = 'lti.acs';

/** Attempts before the job gives up (the queue's backoff spreads them over about a day). */
export const LTI_ACS_MAX_ATTEMPTS = 16;

/** The actions Invigil sends. */
export type AcsAction = 'terminate' | 'flag';

/** What an `lti.acs` job carries. */
export interface AcsJobPayload {
  readonly sessionId: number;
  readonly action: AcsAction;
  /** When it happened (epoch ms): the request's `incident_time`. */
  readonly incidentTime: number;
  readonly reasonCode: string;
  readonly reasonMessage: string;
}

/** Why Invigil sends each action: its `reason_code`, `reason_msg` and `incident_severity`. */
export const ACS_REASONS: Readonly<Record<AcsAction, { code: string; message: string; severity: number }>> = {
  terminate: { code: 'proctor_ended', message: 'A proctor ended the exam session.', severity: 1 },
  flag: { code: 'review_violation', message: 'A reviewer found a violation of the exam rules.', severity: 1 },
};

/** Reads an `lti.acs` payload. Returns it; throws a TypeError for anything else. */
export function parseAcsJobPayload(value: unknown): AcsJobPayload {
  const payload = (typeof value === 'object' && value !== null ? value : {}) as Record<string, unknown>;
  const { sessionId, action, incidentTime, reasonCode, reasonMessage } = payload;
  if (
    typeof sessionId !== 'number' ||
    (action !== 'terminate' && action !== 'flag') ||
    typeof incidentTime !== 'number' ||
    typeof reasonCode !== 'string' ||
    typeof reasonMessage !== 'string'
  ) {
    throw new TypeError('not an lti.acs payload');
  }
  return { sessionId, action, incidentTime, reasonCode, reasonMessage };
}

/** The actions of a link's `acs_actions` (JSON array text); empty when unreadable. */
export function acsActionsOf(text: string | null): string[] {
  if (text === null) return [];
  try {
    const parsed: unknown = JSON.parse(text);
    return Array.isArray(parsed) ? parsed.filter((each): each is string => typeof each === 'string') : [];
  } catch {
    return [];
  }
}

/**
 * Queues `action` for session `sessionId` when its LTI 1.3 launch offered an Assessment Control
 * Service that accepts it; otherwise does nothing. Call it in the transaction of the decision
 * (`db`), with the decision's time `now` (also the job's own time), on the queue `jobs`. Returns true
 * when a job was queued.
 */
export async function queueAcsAction(
  jobs: JobQueue,
  db: Db,
  sessionId: number,
  action: AcsAction,
  now: number,
): Promise<boolean> {
  const link = await db
    .selectFrom('lti_session_links')
    .select(['acs_url', 'acs_actions', 'lti_version'])
    .where('student_session_id', '=', sessionId)
    .executeTakeFirst();
  if (link === undefined || link.lti_version !== '1.3' || link.acs_url === null) return false;
  if (!acsActionsOf(link.acs_actions).includes(action)) return false;
  const reason = ACS_REASONS[action];
  const payload: AcsJobPayload = {
    sessionId,
    action,
    incidentTime: now,
    reasonCode: reason.code,
    reasonMessage: reason.message,
  };
  await jobs.enqueue(db, {
    kind: LTI_ACS_JOB,
    payload,
    dedupeKey: `${sessionId}:${action}`,
    maxAttempts: LTI_ACS_MAX_ATTEMPTS,
    now,
  });
  return true;
}
