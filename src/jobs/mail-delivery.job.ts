import { MAIL_DELIVER_JOB, MAIL_MAX_ATTEMPTS, parseDeliveryPayload } from '../domain/mail/outbox.ts';
import type { JobHandlerDeps } from './handler-deps.ts';
import type { JobHandler } from './job.ts';

/**
 * The `mail.deliver` job: sends one outbox message (payload `{outboxId}`) through the mail service.
 * Idempotent: a message already sent is left alone, and a message another attempt holds makes this
 * attempt fail so it is retried after a backoff. A send that fails throws, so the queue retries it;
 * on the last of MAIL_MAX_ATTEMPTS the message is marked `failed`. Returns the handler.
 */
export function createMailDeliveryJob(deps: JobHandlerDeps): JobHandler {
  return {
    kind: MAIL_DELIVER_JOB,
    async run(payload, ctx) {
      const { outboxId } = parseDeliveryPayload(payload);
      await deps.services.mail.deliver(outboxId, { last: ctx.attempt >= MAIL_MAX_ATTEMPTS });
    },
  };
}
