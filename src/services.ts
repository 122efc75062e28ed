import type { PracticeService } from './domain/practice/practice.service.ts';
import type { AttachmentsService } from './domain/attachments/attachments.service.ts';
import type { DocumentsService } from './domain/documents/documents.service.ts';
import type { ExamStaffService } from './domain/exams/exam-staff.service.ts';
import type { ExamsService } from './domain/exams/exams.service.ts';
import type { IdentityProvidersService } from './domain/identity-providers/identity-providers.service.ts';
import type { LtiResourcesService } from './domain/lti-resources/lti-resources.service.ts';
import type { ToolProvidersService } from './domain/tool-providers/tool-providers.service.ts';
import type { FilesService } from './domain/files/files.service.ts';
import type { DataKeysService } from './domain/data-keys/data-keys.service.ts';
import type { InstitutesService } from './domain/institutes/institutes.service.ts';
import type { MessageOverridesService } from './domain/message-overrides/message-overrides.service.ts';
import type { ExamExportsService } from './domain/exports/exam-exports.service.ts';
import type { MailService } from './mail/mail.service.ts';
import type { RoomService } from './domain/room/room.service.ts';
import type { MobileService } from './domain/mobile/mobile.service.ts';
import type { PhotosService } from './domain/student-sessions/photos.service.ts';
import type { SessionFilesService } from './domain/student-sessions/session-files.service.ts';
import type { StudentSessionsService } from './domain/student-sessions/student-sessions.service.ts';
import type { UsersService } from './domain/users/users.service.ts';
import type { StaffAuthService } from './domain/staff-auth/staff-auth.service.ts';
import type { AuditService } from './domain/audit/audit.service.ts';
import type { CandidateDataService } from './domain/candidate-data/candidate-data.service.ts';
import type { StudentImportService } from './domain/student-sessions/student-import.service.ts';
import type { EmailPreviewService } from './domain/student-sessions/email-preview.service.ts';
import type { EmailDeliveriesService } from './domain/student-sessions/email-deliveries.service.ts';
import type { MonitorService } from './domain/monitor/monitor.service.ts';
import type { OidcSignInService } from './domain/staff-auth/oidc-sign-in.service.ts';
import type { AccountService } from './domain/staff-auth/account.service.ts';
import type { InvitationsService } from './domain/staff-auth/invitations.service.ts';
import type { OutboxService } from './domain/mail/outbox.service.ts';
import type { ReviewsService } from './domain/reviews/reviews.service.ts';
import type { AppealsService } from './domain/appeals/appeals.service.ts';
import type { FlagsService } from './domain/flags/flags.service.ts';
import type { RecordingsService } from './domain/recordings/recordings.service.ts';
import type { SessionReportsService } from './domain/reports/session-report.service.ts';
import type { ProcessingRecordsService } from './domain/processing-record/processing-record.service.ts';
import type { Authenticator } from './http/auth/authenticate.ts';
import type { JobQueue } from './domain/ports/jobs.ts';
import type { WebhooksService } from './domain/webhooks/webhooks.service.ts';
import type { RetentionService } from './domain/retention/retention.service.ts';
import type { UrlSigner } from './storage/signed-url.ts';
import type { LiveEvents } from './domain/ports/live-events.ts';
import type { LiveService } from './domain/live/live.service.ts';
import type { ToolKeys } from './lti/keys.ts';
import type { LtiLaunchService } from './domain/lti/launch.service.ts';

/** The use cases the transports (HTTP, CLI) call; built once in app.ts. */
export interface Services {
  readonly institutes: InstitutesService;
  /** An institute's own wording of candidate messages and emails (docs/languages.md). */
  readonly messageOverrides: MessageOverridesService;
  readonly users: UsersService;
  readonly exams: ExamsService;
  readonly documents: DocumentsService;
  readonly attachments: AttachmentsService;
  readonly studentSessions: StudentSessionsService;
  /** Bulk import of student sessions, all or nothing (docs/api-v3-student-sessions.md). */
  readonly studentImport: StudentImportService;
  /** Previews of the emails send_emails sends (docs/api-v3-student-sessions.md). */
  readonly emailPreview: EmailPreviewService;
  /** The delivery of an exam's exam-link emails and its room links, for the console (docs/mail.md). */
  readonly emailDeliveries: EmailDeliveriesService;
  /** The live monitor of an exam's sessions (docs/live-monitor.md). */
  readonly monitor: MonitorService;
  readonly examStaff: ExamStaffService;
  readonly toolProviders: ToolProvidersService;
  readonly ltiResources: LtiResourcesService;
  readonly identityProviders: IdentityProvidersService;
  readonly photos: PhotosService;
  /** What the candidate room stored for a session (uploads, recordings), for staff to read. */
  readonly sessionFiles: SessionFilesService;
  /** The candidate exam room (contract §11). */
  readonly room: RoomService;
  /** The phone as a second camera of the room (docs/room.md "The phone"). */
  readonly mobile: MobileService;
  /** The candidate's practice run of the technical setup (docs/practice.md). */
  readonly practice: PracticeService;
  readonly mail: MailService;
  readonly examExports: ExamExportsService;
  readonly authenticator: Authenticator;
  /** Staff sign-in: passwords, browser sessions, invitation and reset links (docs/staff-sign-in.md). */
  readonly staffAuth: StaffAuthService;
  /** The audit log of sign-ins and staff writes (docs/audit-log.md). */
  readonly audit: AuditService;
  /** A candidate's access to their own data, and who of the staff looked at it (docs/candidate-data.md). */
  readonly candidateData: CandidateDataService;
  /** Staff sign-in through an institute's OpenID Connect provider (docs/staff-sign-in.md). */
  readonly oidcSignIn: OidcSignInService;
  /** A signed-in user's own password and API credentials (docs/staff-sign-in.md, "My account"). */
  readonly account: AccountService;
  /** Invitations sent through the API (docs/api-v3-institutes-users.md). */
  readonly invitations: InvitationsService;
  /** Staff's view of the outbox: list, read, redeliver (docs/mail.md). */
  readonly outbox: OutboxService;
  /** Review verdicts, the second review and the review queue (docs/review.md). */
  readonly reviews: ReviewsService;
  /** Candidates' appeals against final verdicts, decided by a second reviewer (docs/appeals.md). */
  readonly appeals: AppealsService;
  /** Dismissing and restoring automated flags (docs/automated-flags.md). */
  readonly flags: FlagsService;
  /** Finalised recordings: the listing and the finalisation job's work (docs/recordings.md). */
  readonly recordings: RecordingsService;
  /** The per-session PDF report for misconduct committees (docs/reports.md). */
  readonly reports: SessionReportsService;
  /** An institute's record of processing for its data protection officer (docs/data-protection.md). */
  readonly processingRecords: ProcessingRecordsService;
  readonly files: FilesService;
  /** Per-institute data keys the storage seals objects with (docs/storage.md, "Encryption at rest"). */
  readonly dataKeys: DataKeysService;
  readonly urlSigner: UrlSigner;
  /** The durable job queue (enqueue inside the transaction of the change that causes the job). */
  readonly jobs: JobQueue;
  /** Webhook secrets and the delivery of events to institutes' callback_url (docs/webhooks.md). */
  readonly webhooks: WebhooksService;
  /** Legal holds, the purge log and the sweep of session media past retention (docs/retention.md). */
  readonly retention: RetentionService;
  /**
   * What the domain tells the live sockets: chat messages and proctor controls (the LiveEvents port,
   * src/domain/ports/live-events.ts; the bus is src/live/events.ts).
   */
  readonly liveEvents: LiveEvents;
  /** A proctor's live actions: chat, admit, pause and resume the clock (docs/api-live.md). */
  readonly live: LiveService;
  /** Invigil's LTI 1.3 signing keys, published at /lti/jwks (docs/lti.md). */
  readonly ltiKeys: ToolKeys;
  /** What a verified LMS launch does: the room, the console, a message (docs/lti.md). */
  readonly ltiLaunch: LtiLaunchService;
}
