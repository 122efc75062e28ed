import type { Db } from '../db/database.ts';
import type { ToolKeys } from './keys.ts';
import { LtiRefused } from '../domain/lti/launch.ts';
import { LTI_CLAIM, signToolMessage } from './tool-message.ts';

/**
 * LTI Proctoring Services 1.0, the tool's side of the start (docs/lti.md, "Proctoring Services"):
 * a platform launches Invigil with `LtiStartProctoring`; the candidate goes through the room's setup
 * and presses start; then Invigil sends the browser back to the platform's `start_assessment_url`
 * with an `LtiStartAssessment` message it signs itself, and the platform opens the assessment. The
 * room keeps recording in its own tab meanwhile (the message is opened in a new one).
 */

/** Why a start-assessment message cannot be sent; `message` is shown to the candidate as is. */
export class StartAssessmentRefused extends LtiRefused {
  override name = 'StartAssessmentRefused';
}

/** An `LtiStartAssessment` ready to post: where to, and the signed message (the form field `JWT`). */
export interface StartAssessmentMessage {
  readonly action: string;
  readonly jwt: string;
  readonly sessionId: number;
  readonly toolProviderId: number;
}

/**
 * Builds the `LtiStartAssessment` message of the session whose room token is `token`: signed by the
 * tool's current key; `iss` and `azp` the tool's client_id, `aud` the platform's issuer, a fresh
 * nonce, the deployment, the resource link, the attempt number and the platform's `session_data`
 * returned as it came. Only for a started exam (the candidate pressed start in the room). Returns
 * the message; throws StartAssessmentRefused (404 no such room or no Proctoring Services launch,
 * 409 not started yet or already finished).
 */
export async function buildStartAssessment(
  deps: { readonly db: Db; readonly keys: ToolKeys },
  token: string,
): Promise<StartAssessmentMessage> {
  const row = await deps.db
    .selectFrom('student_sessions as s')
    .innerJoin('lti_session_links as l', 'l.student_session_id', 's.id')
    .innerJoin('tool_providers as t', 't.id', 'l.tool_provider_id')
    .select([
      's.id as session_id',
      's.status',
      's.resource_link_id',
      'l.tool_provider_id',
      'l.deployment_id',
      'l.attempt_number',
      'l.start_assessment_url',
      'l.session_data',
      't.issuer',
      't.client_id',
      't.deployment_id as provider_deployment_id',
    ])
    .where('s.token', '=', token)
    .executeTakeFirst();
  if (row === undefined || row.start_assessment_url === null) {
    throw new StartAssessmentRefused(
      'no_proctoring_launch',
      'This exam room was not opened from a learning platform that takes you to the assessment.',
      404,
    );
  }
  if (row.issuer === null || row.client_id === null || row.resource_link_id === null) {
    throw new StartAssessmentRefused(
      'incomplete_registration',
      'The learning platform’s registration in Invigil is incomplete. Ask your exam office.',
      404,
    );
  }
  if (row.status === 'exam_finished') {
    throw new StartAssessmentRefused('finished', 'This exam is over: it cannot be opened again.', 409);
  }
  if (row.status !== 'exam_started') {
    throw new StartAssessmentRefused(
      'not_started',
      'Start the exam in the exam room first; the assessment opens once you have pressed start.',
      409,
    );
  }
  const deploymentId = row.deployment_id ?? row.provider_deployment_id;
  const jwt = await signToolMessage(
    deps.keys,
    { clientId: row.client_id, platformIssuer: row.issuer, deploymentId },
    'LtiStartAssessment',
    {
      [LTI_CLAIM.resourceLink]: { id: row.resource_link_id },
      [LTI_CLAIM.attemptNumber]: row.attempt_number ?? 1,
      [LTI_CLAIM.sessionData]: row.session_data ?? '',
    },
  );
  return {
    action: row.start_assessment_url,
    jwt,
    sessionId: row.session_id,
    toolProviderId: row.tool_provider_id,
  };
}
