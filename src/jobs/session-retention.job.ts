import { SESSION_RETENTION_JOB } from '../domain/retention/retention.ts';
import type { JobHandlerDeps } from './handler-deps.ts';
import type { JobHandler } from './job.ts';

/**
 * The `session.retention` handler: one sweep of session data past its retention, kind by kind (the
 * institute's period per kind, the ID photo's final-verdict rule; services.retention.sweep,
 * docs/retention.md). The maintenance sweep
 * enqueues it with one dedupe key, so one runs at a time across every worker. Idempotent: what a
 * sweep finished is marked in the database, and an attempt cut short (a crash, a lost lease) leaves
 * its session's rows for the next attempt. Throws, so the attempt is retried, when some session's
 * objects could not be deleted. Returns the handler.
 */
export function createSessionRetentionJob(deps: JobHandlerDeps): JobHandler {
  return {
    kind: SESSION_RETENTION_JOB,
    async run(_payload, ctx) {
      const outcome = await deps.services.retention.sweep({
        signal: ctx.signal,
        progress: (text) => ctx.progress(text),
      });
      if (outcome.sessions > 0 || outcome.failed > 0) {
        deps.logger.info({ ...outcome }, 'session retention sweep finished');
      }
      if (outcome.failed > 0) {
        throw new Error(
          `${outcome.failed} sessions' data could not be purged (storage failed); tried again later`,
        );
      }
    },
  };
}
