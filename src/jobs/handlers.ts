import type { Logger } from 'pino';
import type { Config } from '../config/config.ts';
import type { Db } from '../db/database.ts';
import type { Clock } from '../domain/clock.ts';
import type { Services } from '../services.ts';
import { createExamZipJob } from './exam-zip.job.ts';
import type { JobHandler } from './job.ts';
import { createLtiAcsJob } from './lti-acs.job.ts';
import { createMailDeliveryJob } from './mail-delivery.job.ts';
import { createRecordingFinalizeJob } from './recording-finalize.job.ts';
import { createSessionRetentionJob } from './session-retention.job.ts';
import { createWebhookDeliveryJob } from './webhook-delivery.job.ts';

/** What a job handler may use; app.ts passes it once. */
export interface JobHandlerDeps {
  readonly config: Config;
  readonly logger: Logger;
  readonly db: Db;
  readonly clock: Clock;
  readonly services: Services;
}

/**
 * Every job kind this build knows, one handler each. A capability that adds a kind writes its
 * handler in its own file under src/jobs/ and adds one line here. Returns the handlers.
 */
export function jobHandlers(deps: JobHandlerDeps): JobHandler[] {
  return [
    createMailDeliveryJob(deps),
    createExamZipJob(deps),
    createWebhookDeliveryJob(deps),
    createRecordingFinalizeJob(deps),
    createSessionRetentionJob(deps),
    createLtiAcsJob(deps),
  ];
}
