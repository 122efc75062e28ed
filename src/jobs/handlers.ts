import { createExamZipJob } from './exam-zip.job.ts';
import type { JobHandlerDeps } from './handler-deps.ts';
import type { JobHandler } from './job.ts';
import { createLtiAcsJob } from './lti-acs.job.ts';
import { createMailDeliveryJob } from './mail-delivery.job.ts';
import { createRecordingFinalizeJob } from './recording-finalize.job.ts';
import { createSessionRetentionJob } from './session-retention.job.ts';
import { createWebhookDeliveryJob } from './webhook-delivery.job.ts';

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
