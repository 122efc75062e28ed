import type { Db } from '../../db/database.ts';
import type { Clock } from '../clock.ts';
import type { JobQueue } from '../ports/jobs.ts';
import { type DeliveryPayload, MAIL_DELIVER_JOB, MAIL_MAX_ATTEMPTS, type NewMail } from './outbox.ts';
import { insertOutboxMessage } from './outbox.repository.ts';

/** Writes emails into the outbox. */
export interface Outbox {
  /**
   * Writes the email and enqueues its `mail.deliver` job, both through `trx`: pass the transaction of
   * the change that causes the email, so either both exist or neither does. Returns the outbox id;
   * throws what the database throws.
   */
  write(trx: Db, mail: NewMail): Promise<number>;
}

/**
 * Builds the outbox writer over the job queue (the JobQueue port) and the clock. Returns it; throws
 * nothing.
 */
export function createOutbox(deps: { clock: Clock; jobs: JobQueue }): Outbox {
  const { clock, jobs } = deps;
  return {
    async write(trx, mail) {
      const id = await insertOutboxMessage(trx, { ...mail, now: clock.now() });
      await enqueueDelivery(jobs, trx, id);
      return id;
    },
  };
}

/**
 * Enqueues the `mail.deliver` job of outbox message `outboxId` through `trx` (the transaction that
 * wrote or released the message). Resolves when enqueued; throws what the queue throws.
 */
export async function enqueueDelivery(jobs: JobQueue, trx: Db, outboxId: number): Promise<void> {
  const payload: DeliveryPayload = { outboxId };
  await jobs.enqueue(trx, { kind: MAIL_DELIVER_JOB, payload, maxAttempts: MAIL_MAX_ATTEMPTS });
}
