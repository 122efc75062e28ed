import { createPracticeService } from './domain/practice/practice.service.ts';
import type { FastifyInstance } from 'fastify';
import pino, { type Logger } from 'pino';
import type { Config } from './config/config.ts';
import { type Database, openDatabase } from './db/database.ts';
import { migrateToLatest } from './db/migrate.ts';
import { type Clock, systemClock } from './domain/clock.ts';
import { createAttachmentsService } from './domain/attachments/attachments.service.ts';
import { createDocumentsService } from './domain/documents/documents.service.ts';
import { createExamStaffService } from './domain/exams/exam-staff.service.ts';
import { createExamsService } from './domain/exams/exams.service.ts';
import { createIdentityProvidersService } from './domain/identity-providers/identity-providers.service.ts';
import { createLtiResourcesService } from './domain/lti-resources/lti-resources.service.ts';
import { createToolProvidersService } from './domain/tool-providers/tool-providers.service.ts';
import { createInstitutesService } from './domain/institutes/institutes.service.ts';
import { createMessageOverridesService } from './domain/message-overrides/message-overrides.service.ts';
import { createRoomService } from './domain/room/room.service.ts';
import { createPhotosService } from './domain/student-sessions/photos.service.ts';
import { createSessionFilesService } from './domain/student-sessions/session-files.service.ts';
import { createStudentSessionsService } from './domain/student-sessions/student-sessions.service.ts';
import { createUsersService } from './domain/users/users.service.ts';
import { createStaffAuthService } from './domain/staff-auth/staff-auth.service.ts';
import { createAuditService } from './domain/audit/audit.service.ts';
import { createCandidateDataService } from './domain/candidate-data/candidate-data.service.ts';
import { createStudentImportService } from './domain/student-sessions/student-import.service.ts';
import { createEmailPreviewService } from './domain/student-sessions/email-preview.service.ts';
import { createEmailDeliveriesService } from './domain/student-sessions/email-deliveries.service.ts';
import { createMonitorService } from './domain/monitor/monitor.service.ts';
import { createOidcSignInService } from './domain/staff-auth/oidc-sign-in.service.ts';
import { createAccountService } from './domain/staff-auth/account.service.ts';
import { createInvitationsService } from './domain/staff-auth/invitations.service.ts';
import { createOutboxService } from './domain/mail/outbox.service.ts';
import { createReviewsService } from './domain/reviews/reviews.service.ts';
import { createAppealsService } from './domain/appeals/appeals.service.ts';
import type { SessionReviewedEvent } from './domain/reviews/review.ts';
import type { Db } from './db/database.ts';
import { createFlagsService } from './domain/flags/flags.service.ts';
import { createRecordingsService } from './domain/recordings/recordings.service.ts';
import { createSessionReportsService } from './domain/reports/session-report.service.ts';
import {
  createProcessingRecordsService,
  deploymentFacts,
} from './domain/processing-record/processing-record.service.ts';
import { createAuthenticator } from './http/auth/authenticate.ts';
import { createFilesService } from './domain/files/files.service.ts';
import type { JobHandler } from './jobs/job.ts';
import { jobHandlers } from './jobs/handlers.ts';
import { createJobQueue } from './jobs/queue.ts';
import { createMailService } from './mail/mail.service.ts';
import { createExamExportsService } from './domain/exports/exam-exports.service.ts';
import { loadServerKeys } from './security/keys.ts';
import { createUrlSigner } from './storage/signed-url.ts';
import { emitStudentSessionReviewed } from './domain/webhooks/emit.ts';
import { queueAcsAction } from './domain/lti/acs.ts';
import { createWebhooksService } from './domain/webhooks/webhooks.service.ts';
import { createRetentionService } from './domain/retention/retention.service.ts';
import { createOutboundHttp } from './security/outbound-http.ts';
import { createStorage } from './storage/index.ts';
import { createDataKeysService } from './domain/data-keys/data-keys.service.ts';
import type { Services } from './services.ts';
import type { LiveEngine } from './live/engine.ts';
import { createConfiguredEngine } from './live/configured-engine.ts';
import { createMobileService } from './domain/mobile/mobile.service.ts';
import { createLiveHub, type LiveHub } from './live/hub.ts';
import { resetLiveStatuses } from './domain/live/live-status.repository.ts';
import { createLiveEvents } from './live/events.ts';
import { createLiveService } from './domain/live/live.service.ts';
import { createToolKeys } from './lti/keys.ts';
import { verifyLti11Launch } from './lti/oauth1.ts';
import { createLtiLaunchService } from './domain/lti/launch.service.ts';

export interface AppOptions {
  readonly clock?: Clock;
  readonly logger?: Logger;
  /**
   * The live media engine of the HTTP server (tests pass a fake); by default the one MEDIA_ENGINE
   * names, started on first use (src/live/configured-engine.ts).
   */
  readonly liveEngine?: LiveEngine;
}

/** Everything a process needs, wired once. */
export interface Core {
  readonly config: Config;
  readonly logger: Logger;
  readonly database: Database;
  readonly services: Services;
  readonly clock: Clock;
  /** The job kinds a worker in this process can run (src/jobs/handlers.ts). */
  readonly jobHandlers: readonly JobHandler[];
  close(): Promise<void>;
}

export interface App extends Core {
  readonly server: FastifyInstance;
  /** Live proctoring: the media engine and the hub of its sockets. */
  readonly live: { readonly engine: LiveEngine; readonly hub: LiveHub };
}

/** The process logger: pino on stderr, so stdout stays for command results. */
export function createLogger(config: Config): Logger {
  return pino(
    {
      level: config.logLevel,
      redact: {
        paths: [
          'req.headers.authorization',
          '*.secret_key',
          '*.api_token',
          '*.signature',
          '*.shared_secret',
          '*.password',
        ],
        remove: true,
      },
    },
    pino.destination({ fd: 2, sync: false }),
  );
}

/**
 * Opens the database (applying pending migrations), loads the server key and builds the services.
 * Returns them with a close that releases the database; throws when the database cannot be opened.
 */
export async function createCore(config: Config, options: AppOptions = {}): Promise<Core> {
  const logger = options.logger ?? createLogger(config);
  const clock = options.clock ?? systemClock;
  const database = openDatabase(config.database);
  try {
    const applied = await migrateToLatest(database);
    if (applied.length > 0) logger.info({ migrations: applied }, 'migrations applied');
  } catch (error) {
    await database.destroy();
    throw error;
  }
  const keys = loadServerKeys(config.serverSecret, config.dataDir);
  const { db } = database;
  // Every stored object is sealed under its institute's data key (docs/storage.md).
  const dataKeys = createDataKeysService({ db, clock, keys });
  const storage = await createStorage(config, dataKeys);
  const urlSigner = createUrlSigner(config.publicUrl, keys.urlSigning);
  const files = createFilesService({ db, clock, storage, signer: urlSigner, logger });
  const users = createUsersService({ db, clock, keys });
  const jobs = createJobQueue({ db, clock });
  const examStaff = createExamStaffService({ db, clock, keys });
  const photos = createPhotosService({ db, clock, files });
  const mobile = createMobileService({ db, clock, storage, publicUrl: config.publicUrl });
  const staffAuth = createStaffAuthService({ db, clock, jobs, publicUrl: config.publicUrl, users, keys });
  const liveEvents = createLiveEvents((error) =>
    logger.error({ err: error }, 'a live event listener failed'),
  );
  // What a settled verdict causes, in its transaction: the webhook, LTI's flag, the candidate's
  // verdict notice (docs/appeals.md). An appeal's overturning verdict goes through the same hook.
  const onReviewed = async (trx: Db, event: SessionReviewedEvent): Promise<void> => {
    await emitStudentSessionReviewed(jobs, trx, event);
    // LTI Proctoring Services: a violation is flagged to the platform when it takes `flag`.
    if (event.verdict === 'violation') {
      await queueAcsAction(jobs, trx, event.studentSessionId, 'flag', event.reviewedAt);
    }
    await appeals.onVerdictSettled(trx, event);
  };
  const appeals = createAppealsService({
    db,
    dialect: database.dialect,
    clock,
    files,
    jobs,
    publicUrl: config.publicUrl,
    onReviewed,
  });
  const services: Services = {
    institutes: createInstitutesService({ db, clock, files }),
    messageOverrides: createMessageOverridesService({ db, clock }),
    users,
    exams: createExamsService({ db, clock }),
    documents: createDocumentsService({ db, clock, files }),
    attachments: createAttachmentsService({ db, clock, files }),
    studentSessions: createStudentSessionsService({ db, clock, files }),
    studentImport: createStudentImportService({ db, clock }),
    emailPreview: createEmailPreviewService({ db, clock, publicUrl: config.publicUrl }),
    emailDeliveries: createEmailDeliveriesService({
      db,
      publicUrl: config.publicUrl,
      mailServerConfigured: config.smtpUrl !== undefined,
    }),
    monitor: createMonitorService({ db, clock }),
    examStaff,
    toolProviders: createToolProvidersService({ db, clock, keys }),
    ltiResources: createLtiResourcesService({ db, clock, keys }),
    identityProviders: createIdentityProvidersService({ db, clock, keys }),
    photos,
    sessionFiles: createSessionFilesService({ db, files }),
    room: createRoomService({ db, clock, files, photos, storage, liveEvents, jobs, mobile }),
    mobile,
    practice: createPracticeService({ db, clock, storage, storageConfig: config.storage, dataKeys }),
    authenticator: createAuthenticator({
      db,
      users,
      clock,
      settings: { noncePolicy: config.noncePolicy, windowSeconds: config.signatureWindowSeconds },
    }),
    staffAuth,
    audit: createAuditService({ db, clock }),
    candidateData: createCandidateDataService({
      db,
      clock,
      files,
      jobs,
      audit: createAuditService({ db, clock }),
      publicUrl: config.publicUrl,
    }),
    oidcSignIn: createOidcSignInService({
      db,
      clock,
      keys,
      publicUrl: config.publicUrl,
      staffAuth,
      outbound: createOutboundHttp({ allowlist: config.outboundAllowlist }),
    }),
    account: createAccountService({ db, clock, keys, staffAuth, users }),
    // Without SMTP an invitation is held, so the administrator is given the link to pass on.
    invitations: createInvitationsService({ db, users, staffAuth, showLink: config.smtpUrl === undefined }),
    outbox: createOutboxService({ db, clock, jobs, logger }),
    reviews: createReviewsService({
      db,
      dialect: database.dialect,
      clock,
      onReviewed,
    }),
    appeals,
    flags: createFlagsService({ db, clock }),
    recordings: createRecordingsService({
      db,
      clock,
      storage,
      files,
      jobs,
      logger,
      keepChunks: config.keepRecordingChunks,
      storageConfig: config.storage,
      dataKeys,
    }),
    reports: createSessionReportsService({ db, clock, files }),
    processingRecords: createProcessingRecordsService({
      db,
      clock,
      // Every stored object is sealed (createStorage above), so files are encrypted at rest.
      deployment: deploymentFacts(config, { encryptionAtRest: true }),
    }),
    files,
    dataKeys,
    urlSigner,
    jobs,
    mail: createMailService({ db, clock, config, logger, jobs, examStaff, liveEvents }),
    examExports: createExamExportsService({ db, clock, files, jobs }),
    retention: createRetentionService({ db, clock, storage, logger }),
    webhooks: createWebhooksService({
      db,
      clock,
      keys,
      outbound: createOutboundHttp({ allowlist: config.outboundAllowlist }),
    }),
    liveEvents,
    live: createLiveService({ db, clock, examStaff, liveEvents }),
    ltiKeys: createToolKeys({ db, clock, serverKey: keys.encryption }),
    ltiLaunch: createLtiLaunchService({
      db,
      clock,
      users,
      staffAuth,
      // LtiEndAssessment finishes a session as the room does; the room service is built above.
      room: { finish: (token) => services.room.finish(token) },
      verifyLti11: (request) =>
        verifyLti11Launch({ db, clock, serverKey: keys.encryption, publicUrl: config.publicUrl }, request),
    }),
  };
  const handlers = jobHandlers({ config, logger, db, clock, services });
  return {
    config,
    logger,
    database,
    services,
    clock,
    jobHandlers: handlers,
    close: () => database.destroy(),
  };
}

/** The core plus the HTTP server (not yet listening). */
export async function createApp(config: Config, options: AppOptions = {}): Promise<App> {
  const core = await createCore(config, options);
  const engine = options.liveEngine ?? createConfiguredEngine(config.live, core.logger);
  try {
    // No live socket survives a restart: a status left from before is stale.
    await resetLiveStatuses(core.database.db, core.clock.now());
  } catch (error) {
    await core.close();
    throw error;
  }
  const hub = createLiveHub({
    engine,
    db: core.database.db,
    liveEvents: core.services.liveEvents,
    clock: core.clock,
    log: core.logger.child({ component: 'live-hub' }),
  });
  // Loaded here rather than at the top: a worker process never serves HTTP and so never pays for
  // Fastify, the API docs page and the upload parser.
  const { buildServer } = await import('./http/server.ts');
  const server = await buildServer({ ...core, hub });
  return {
    ...core,
    server,
    live: { engine, hub },
    async close() {
      // Closing the server closes the hub first (its sockets told why, statuses stored offline).
      await server.close();
      await hub.close();
      await engine.close();
      await core.close();
    },
  };
}
