import { parseWebhookDelivery, WEBHOOK_DELIVER_JOB } from '../domain/webhooks/webhook.ts';
import type { JobHandlerDeps } from './handler-deps.ts';
import type { JobHandler } from './job.ts';

/**
 * The `webhook.deliver` job: POSTs one event (payload {eventId, type, instituteId, body}, written by
 * emitWebhook) to its institute's callback_url through services.webhooks.deliver. Idempotent in the
 * receiver's eyes: every attempt sends the same body and event id. A refused, failed or non-2xx
 * delivery throws, so the queue retries it with backoff until WEBHOOK_MAX_ATTEMPTS are spent; an
 * institute without a callback_url (any more) ends the job quietly. Returns the handler.
 */
export function createWebhookDeliveryJob(deps: JobHandlerDeps): JobHandler {
  return {
    kind: WEBHOOK_DELIVER_JOB,
    async run(payload, ctx) {
      const delivery = parseWebhookDelivery(payload);
      const outcome = await deps.services.webhooks.deliver(delivery, {
        number: ctx.attempt,
        signal: ctx.signal,
      });
      const log = { eventId: delivery.eventId, type: delivery.type, instituteId: delivery.instituteId };
      if (outcome === 'delivered') deps.logger.debug(log, 'webhook delivered');
      else deps.logger.info({ ...log, outcome }, 'webhook dropped: nowhere to deliver it');
    },
  };
}
