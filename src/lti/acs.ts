import type { Db } from '../db/database.ts';
import type { Clock } from '../domain/clock.ts';
import { type AcsJobPayload, ACS_REASONS, acsActionsOf } from '../domain/lti/acs.ts';
import type { OutboundHttp } from '../security/outbound-http.ts';
import type { ToolKeys } from './keys.ts';

/**
 * The Assessment Control Service of LTI Proctoring Services 1.0 (docs/lti.md, "Proctoring
 * Services"): where the platform offered one in its `LtiStartProctoring` launch, Invigil tells it
 * what its staff decided about the attempt. A proctor ending the session (end_exam) is `terminate`;
 * a review verdict `violation` is `flag`. Each is a job (`lti.acs`) written in the transaction of the
 * decision (src/domain/lti/acs.ts), so it is sent exactly when the decision is kept, and retried by
 * the queue until the platform takes it. This is the job's sending side: it gets an OAuth 2 access
 * token from the tool provider's `auth_token_url` (client credentials with a client assertion signed
 * by the tool's key, cached until it expires) and POSTs the control request through the guarded
 * outbound client.
 */

/** The OAuth 2 scope of the Assessment Control Service. */
export const ACS_SCOPE = 'https://purl.imsglobal.org/spec/lti-ap/scope/control.all';

/** The media type of a control request, and of the platform's report in answer. */
export const ACS_CONTROL_TYPE = 'application/vnd.ims.lti-ap.v1.control+json';
export const ACS_REPORT_TYPE = 'application/vnd.ims.lti-ap.v1.control.report+json';

/** What became of one attempt that did not throw. */
export type AcsOutcome =
  | { readonly kind: 'sent'; readonly status: string | null }
  /** Nothing to send to any more (the session, its link, or the action's offer is gone). */
  | { readonly kind: 'dropped'; readonly reason: string };

/** Sends control requests; one per process, so its access tokens are shared by every job. */
export interface AcsClient {
  /**
   * Sends one queued action. Returns `sent` with the platform's reported status, or `dropped` when
   * there is nothing to send it to any more. Throws (so the queue retries) when the token endpoint
   * or the service refused, failed or could not be reached.
   */
  send(payload: AcsJobPayload, signal?: AbortSignal): Promise<AcsOutcome>;
}

interface CachedToken {
  readonly token: string;
  readonly expiresAt: number;
}

/** Seconds taken off a token's lifetime so it is not used in its last moments. */
const TOKEN_MARGIN_SECONDS = 30;
/** The lifetime assumed when the token endpoint does not say (seconds). */
const DEFAULT_TOKEN_SECONDS = 300;

/** The first 200 characters of an answer body, for an error message. */
function excerpt(body: Buffer): string {
  return body.toString('utf8').slice(0, 200).replace(/\s+/g, ' ');
}

/**
 * Builds the ACS client over the database, the tool's signing keys, the guarded outbound client
 * and the clock. Returns it; throws nothing.
 */
export function createAcsClient(deps: {
  readonly db: Db;
  readonly keys: ToolKeys;
  readonly outbound: OutboundHttp;
  readonly clock: Clock;
}): AcsClient {
  const { db, keys, outbound, clock } = deps;
  /** Access tokens by token endpoint and client id. */
  const tokens = new Map<string, CachedToken>();

  /** An access token for the ACS scope, from the cache or the token endpoint. Throws on failure. */
  async function accessToken(tokenUrl: string, clientId: string, signal?: AbortSignal): Promise<string> {
    const key = `${tokenUrl} ${clientId}`;
    const cached = tokens.get(key);
    if (cached !== undefined && cached.expiresAt > clock.now()) return cached.token;
    const assertion = await keys.sign({ iss: clientId, sub: clientId, aud: tokenUrl });
    const body = new URLSearchParams({
      grant_type: 'client_credentials',
      client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
      client_assertion: assertion,
      scope: ACS_SCOPE,
    }).toString();
    const answer = await outbound.request({
      url: tokenUrl,
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body,
      ...(signal === undefined ? {} : { signal }),
    });
    if (answer.status < 200 || answer.status >= 300) {
      throw new Error(`the token endpoint answered ${answer.status}: ${excerpt(answer.body)}`);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(answer.body.toString('utf8'));
    } catch {
      throw new Error('the token endpoint answered something other than JSON');
    }
    const { access_token: token, expires_in: expiresIn } = (parsed ?? {}) as Record<string, unknown>;
    if (typeof token !== 'string' || token === '') throw new Error('the token endpoint sent no access_token');
    const seconds = typeof expiresIn === 'number' && expiresIn > 0 ? expiresIn : DEFAULT_TOKEN_SECONDS;
    tokens.set(key, { token, expiresAt: clock.now() + Math.max(0, seconds - TOKEN_MARGIN_SECONDS) * 1000 });
    return token;
  }

  return {
    async send(payload, signal) {
      const row = await db
        .selectFrom('lti_session_links as l')
        .innerJoin('student_sessions as s', 's.id', 'l.student_session_id')
        .innerJoin('tool_providers as t', 't.id', 'l.tool_provider_id')
        .select([
          'l.platform_user_id',
          'l.attempt_number',
          'l.acs_url',
          'l.acs_actions',
          's.resource_link_id',
          't.client_id',
          't.auth_token_url',
        ])
        .where('l.student_session_id', '=', payload.sessionId)
        .executeTakeFirst();
      if (row === undefined) return { kind: 'dropped', reason: 'the session or its LTI link is gone' };
      if (row.acs_url === null || !acsActionsOf(row.acs_actions).includes(payload.action)) {
        return { kind: 'dropped', reason: `the platform no longer offers ${payload.action}` };
      }
      if (row.client_id === null || row.auth_token_url === null || row.resource_link_id === null) {
        return { kind: 'dropped', reason: 'the tool provider has no client_id or auth_token_url' };
      }
      const token = await accessToken(row.auth_token_url, row.client_id, signal);
      const reason = ACS_REASONS[payload.action];
      const body = JSON.stringify({
        user: { sub: row.platform_user_id },
        resource_link: { id: row.resource_link_id },
        attempt_number: row.attempt_number ?? 1,
        action: payload.action,
        incident_time: new Date(payload.incidentTime).toISOString(),
        incident_severity: reason.severity,
        reason_code: payload.reasonCode,
        reason_msg: payload.reasonMessage,
      });
      const answer = await outbound.request({
        url: row.acs_url,
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': ACS_CONTROL_TYPE,
          accept: ACS_REPORT_TYPE,
        },
        body,
        ...(signal === undefined ? {} : { signal }),
      });
      // A refused token is dropped, so the next attempt asks for a new one.
      if (answer.status === 401) tokens.delete(`${row.auth_token_url} ${row.client_id}`);
      if (answer.status < 200 || answer.status >= 300) {
        throw new Error(`the Assessment Control Service answered ${answer.status}: ${excerpt(answer.body)}`);
      }
      let status: string | null = null;
      try {
        const report = JSON.parse(answer.body.toString('utf8')) as Record<string, unknown>;
        status = typeof report.status === 'string' ? report.status : null;
      } catch {
        // A report is optional for Invigil: the 2xx is what counts.
      }
      return { kind: 'sent', status };
    },
  };
}
