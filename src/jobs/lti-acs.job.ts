import { LTI_ACS_JOB, parseAcsJobPayload } from '../domain/lti/acs.ts';
import { createAcsClient } from '../lti/acs.ts';
import { createOutboundHttp } from '../security/outbound-http.ts';
import type { JobHandlerDeps } from './handler-deps.ts';
import type { JobHandler } from './job.ts';

/**
 * The `lti.acs` job: sends one Assessment Control Service action (`terminate` after a proctor ended
 * the session, `flag` after a violation verdict; payload written by queueAcsAction) to the platform
 * through the guarded outbound client. A failed attempt (token or service refused, unreachable,
 * timed out) is logged and thrown, so the queue retries it with backoff; an action there is nothing
 * to send to any more ends the job quietly. Returns the handler.
 */
export function createLtiAcsJob(deps: JobHandlerDeps): JobHandler {
  // One client per process: its access tokens are reused across jobs until they expire.
  const client = createAcsClient({
    db: deps.db,
    keys: deps.services.ltiKeys,
    outbound: createOutboundHttp({ allowlist: deps.config.outboundAllowlist }),
    clock: deps.clock,
  });
  return {
    kind: LTI_ACS_JOB,
    async run(payload, ctx) {
      const action = parseAcsJobPayload(payload);
      const log = { session: action.sessionId, action: action.action, attempt: ctx.attempt };
      try {
        const outcome = await client.send(action, ctx.signal);
        if (outcome.kind === 'sent') deps.logger.info({ ...log, status: outcome.status }, 'lti acs sent');
        else deps.logger.info({ ...log, reason: outcome.reason }, 'lti acs dropped');
      } catch (error) {
        deps.logger.warn({ ...log, err: error }, 'lti acs failed');
        throw error;
      }
    },
  };
}
