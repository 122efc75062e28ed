import type { Db } from '../../db/database.ts';
import { decryptSecret, encryptSecret, type ServerKeys } from '../../security/keys.ts';
import type { OutboundHttp } from '../../security/outbound-http.ts';
import { type Actor, instituteStanding } from '../access.ts';
import type { Clock } from '../clock.ts';
import { Forbidden, NotFound } from '../errors.ts';
import { parseId } from '../ids.ts';
import { findInstitute } from '../institutes/institutes.repository.ts';
import { newWebhookSecret, SIGNATURE_HEADER, signWebhook, type WebhookDelivery } from './webhook.ts';
import { findWebhookTarget, saveWebhookSecret } from './webhooks.repository.ts';

/** A secret as generated: shown once, in this answer only. */
export interface IssuedWebhookSecret {
  readonly instituteId: number;
  readonly secret: string;
  readonly createdAt: number;
  /** True when an earlier secret was replaced (it stopped working at once). */
  readonly replaced: boolean;
}

/** What became of one delivery attempt that did not throw. */
export type DeliveryOutcome = 'delivered' | 'no_callback_url' | 'institute_gone';

export interface WebhooksService {
  /**
   * Generates the institute's webhook secret, replacing any earlier one with no grace period, for
   * its administrators and superusers. Returns the secret (stored only encrypted; never shown
   * again). Throws NotFound (Institute: missing, or another institute) or Forbidden (a member who
   * may not manage it).
   */
  rotateSecret(actor: Actor, instituteId: string | number): Promise<IssuedWebhookSecret>;
  /**
   * Sends one event to the institute's current `callback_url`, signed with its current secret
   * (unsigned while it has none). Returns the outcome; throws when the receiver did not answer 2xx,
   * was refused by the outbound guard, timed out or could not be reached, so the job is retried.
   */
  deliver(
    delivery: WebhookDelivery,
    attempt: { readonly number: number; readonly signal?: AbortSignal },
  ): Promise<DeliveryOutcome>;
}

/** The User-Agent of every webhook POST. */
export const WEBHOOK_USER_AGENT = 'Invigil-Webhooks/1';

/** Longest part of a receiver's error answer kept in the job's last_error. */
const MAX_ANSWER_EXCERPT = 200;

/**
 * Builds the webhook use cases: `keys` encrypts the secrets at rest, `outbound` is the guarded
 * client every delivery goes through. Returns the service.
 */
export function createWebhooksService(deps: {
  db: Db;
  clock: Clock;
  keys: ServerKeys;
  outbound: OutboundHttp;
}): WebhooksService {
  const { db, clock, keys, outbound } = deps;
  return {
    async rotateSecret(actor, instituteId) {
      const numeric = parseId(instituteId);
      const institute = numeric === undefined ? undefined : await findInstitute(db, numeric);
      if (institute === undefined) throw new NotFound('Institute', instituteId);
      const standing = instituteStanding(actor, institute.id);
      if (standing === 'hidden') throw new NotFound('Institute', instituteId);
      if (standing !== 'manage') throw new Forbidden();
      const secret = newWebhookSecret();
      const now = clock.now();
      const replaced = await saveWebhookSecret(db, institute.id, encryptSecret(keys.encryption, secret), now);
      return { instituteId: institute.id, secret, createdAt: now, replaced };
    },

    async deliver(delivery, attempt) {
      const target = await findWebhookTarget(db, delivery.instituteId);
      if (target === undefined) return 'institute_gone';
      if (target.callbackUrl === null) return 'no_callback_url';
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        'user-agent': WEBHOOK_USER_AGENT,
        'x-invigil-event': delivery.type,
        'x-invigil-event-id': delivery.eventId,
        'x-invigil-delivery-attempt': String(attempt.number),
      };
      if (target.secretEncrypted !== null) {
        const secret = decryptSecret(keys.encryption, target.secretEncrypted);
        headers[SIGNATURE_HEADER.toLowerCase()] = signWebhook(
          secret,
          Math.floor(clock.now() / 1000),
          delivery.body,
        );
      }
      const answer = await outbound.request({
        url: target.callbackUrl,
        method: 'POST',
        headers,
        body: delivery.body,
        ...(attempt.signal === undefined ? {} : { signal: attempt.signal }),
      });
      if (answer.status >= 200 && answer.status < 300) return 'delivered';
      const excerpt = answer.body.toString('utf8', 0, MAX_ANSWER_EXCERPT).replace(/\s+/g, ' ').trim();
      throw new Error(
        `${delivery.type} ${delivery.eventId}: the callback answered ${answer.status}` +
          (excerpt === '' ? '' : `: ${excerpt}`),
      );
    },
  };
}
