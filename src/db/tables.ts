import type { ColumnType, Generated } from 'kysely';

/**
 * Row types as the database holds them. They never leave the repositories: each repository maps a
 * row to a domain object. Times are epoch milliseconds (BIGINT) on both databases so comparisons and
 * sorting are plain integer operations; booleans read back as 0/1 on SQLite and true/false on PostgreSQL.
 */
export type Bool = ColumnType<boolean | number, boolean, boolean>;
/** A boolean column with a database default, so an insert may leave it out. */
export type DefaultedBool = ColumnType<boolean | number, boolean | undefined, boolean>;
export type Millis = number;
type Id = Generated<number>;

export interface InstitutesTable {
  id: Id;
  name: string;
  short_name: string;
  callback_url: string | null;
  check_requirements_emails_enabled: Bool;
  reminder_emails_enabled: Bool;
  exam_link_emails_enabled: Bool;
  exam_changed_emails_enabled: Bool;
  exam_finalized_emails_enabled: Bool;
  session_retention_period: number | null;
  default_language: string;
  /** Since 0006_second_factor. */
  require_second_factor_for_administrators: DefaultedBool;
  /** Since 0012_session_reviews: a violation verdict waits for a second reviewer (docs/review.md). */
  second_review_required: DefaultedBool;
  /** Since 0028_privacy_notice: how candidates reach the institute about their data. */
  privacy_contact: ColumnType<string | null, string | null | undefined, string | null>;
  /** Since 0028_privacy_notice: the data protection officer's name and address. */
  dpo_name: ColumnType<string | null, string | null | undefined, string | null>;
  dpo_email: ColumnType<string | null, string | null | undefined, string | null>;
  /** Since 0028_privacy_notice: days after a final suspicious/violation verdict an appeal is open. */
  appeal_period_days: ColumnType<number, number | undefined, number>;
  created_at: Millis;
  updated_at: Millis;
}

export interface IdentityProvidersTable {
  id: Id;
  institute_id: number | null;
  name: string;
  protocol: string;
  metadata: string;
  created_at: Millis;
  updated_at: Millis;
}

export interface UsersTable {
  id: Id;
  institute_id: number;
  email: string;
  name: string;
  role: string;
  identity_provider_id: number | null;
  api_token_hash: string;
  secret_key_encrypted: string;
  /** Since 0020: the API token, encrypted like the secret; null for users created before it. */
  api_token_encrypted: ColumnType<string | null, string | null | undefined, string | null>;
  /** Since 0005_staff_sign_in: the scrypt hash (src/security/passwords.ts), null without a password. */
  password_hash: ColumnType<string | null, string | null | undefined, string | null>;
  /** Since 0024_user_language: the console's language the user picked; null to follow the browser. */
  language: ColumnType<string | null, string | null | undefined, string | null>;
  active: Bool;
  created_at: Millis;
  updated_at: Millis;
}

export interface ExamsTable {
  id: Id;
  institute_id: number;
  user_id: number;
  name: string;
  type: string;
  status: string;
  duration_minutes: number | null;
  use_duration: Bool;
  start_time: Millis | null;
  end_time: Millis | null;
  mobile_cam: Bool;
  web_cam: Bool;
  screen_share: Bool;
  for_reviewing: Bool;
  upload_answers: Bool;
  restrictions: string | null;
  allow_websites: Bool;
  allow_external_applications: Bool;
  allow_textbooks: Bool;
  allow_calculator: Bool;
  allow_pen_paper: Bool;
  allow_additional: Bool;
  allowed_websites: string | null;
  allowed_external_applications: string | null;
  allowed_textbooks: string | null;
  allowed_calculator_type: string | null;
  allowed_additional: string | null;
  /** Since 0003_exam_client_fields. */
  global_proctoring: DefaultedBool;
  global_reviewing: DefaultedBool;
  /** A supported BCP 47 tag; new exams take the institute's default_language. */
  exam_language: Generated<string>;
  /** An IANA time zone name. */
  timezone: Generated<string>;
  terms: string | null;
  archived: DefaultedBool;
  /** Since 0015_live_proctoring: a proctor admits each candidate after a live ID check. */
  live_id_check: DefaultedBool;
  /** Whether the room runs the automated flags' detectors (migration 0017). */
  automated_flags: DefaultedBool;
  /** JSON of the flags' thresholds; null for the defaults. */
  flag_settings: string | null;
  /** Since 0022_candidate_languages: JSON array of the tags candidates may be shown; null for all. */
  candidate_languages: ColumnType<string | null, string | null | undefined, string | null>;
  /** Since 0025_accommodations: the streams keep recording during a rest break (else they pause). */
  record_during_breaks: DefaultedBool;
  /** Since 0025_accommodations: extra time may run past the exam's end_time. */
  extra_time_beyond_end: DefaultedBool;
  /** Since 0026_recording_quality: `low`, `standard` (the default) or `high`. */
  recording_quality: Generated<string>;
  created_at: Millis;
  updated_at: Millis;
}

/** Since 0023_message_overrides: an institute's own wording of one catalogue message in one locale. */
export interface MessageOverridesTable {
  institute_id: number;
  locale: string;
  key: string;
  message: string;
  updated_at: Millis;
  updated_by: number | null;
}

export interface ExamComanagersTable {
  exam_id: number;
  user_id: number;
  created_at: Millis;
}

export interface FilesTable {
  id: Id;
  storage_key: string;
  original_name: string;
  content_type: string;
  size: number;
  sha256: string;
  created_at: Millis;
}

export interface DocumentsTable {
  id: Id;
  exam_id: number;
  exam_content: string;
  created_at: Millis;
  updated_at: Millis;
}

export interface AttachmentsTable {
  id: Id;
  exam_id: number;
  document_id: number;
  file_id: number;
  placeholder: string;
  file_name: string;
  content_type: string;
  file_size: number;
  created_at: Millis;
  updated_at: Millis;
}

export interface StudentSessionsTable {
  id: Id;
  exam_id: number;
  name: string;
  email: string;
  attempt: number;
  status: string;
  token: string;
  pin_code: number;
  session_id: string | null;
  student_id: string | null;
  time_slot: number;
  operating_system: string | null;
  browser: string | null;
  browser_version: string | null;
  screenshare_check: string;
  microphone_check: string;
  speakers_check: string;
  webcam_check: string;
  mobile_check: string;
  bandwidth_check: string;
  bandwidth_speed: number | null;
  dummy_exam_survey: string | null;
  skip_requirements: Bool;
  send_confirmation: Bool;
  use_duration: Bool;
  start_time: Millis | null;
  end_time: Millis | null;
  open_time: Millis | null;
  reservation_time: Millis | null;
  expires_at: Millis | null;
  recording_started_at: Millis | null;
  recording_ended_at: Millis | null;
  entered_room: Bool;
  exam_document_file_id: number | null;
  exam_document_content_type: string | null;
  exam_document_file_size: number | null;
  exam_document_updated_at: Millis | null;
  reviewed: string;
  id_card_file_id: number | null;
  id_card_file_name: string | null;
  id_card_content_type: string | null;
  id_card_file_size: number | null;
  face_photo_file_id: number | null;
  face_photo_file_name: string | null;
  face_photo_content_type: string | null;
  face_photo_file_size: number | null;
  individual_info: string | null;
  is_individual_info_html: Bool;
  rtc_session_id: number | null;
  rtc_session_ids: string;
  in_setup: Bool;
  in_check_requirements: Bool;
  archived: Bool;
  current_exam_mode: string | null;
  transcoding_status: string;
  priority: string | null;
  is_email_sent: Bool;
  proctor_id: number | null;
  external_id: string | null;
  end_reason: string | null;
  lti_resource_id: number | null;
  lms_user_id: string | null;
  resource_link_id: string | null;
  context_id: string | null;
  /** Since 0014_session_retention: an administrator's legal hold keeps the media past retention. */
  legal_hold: DefaultedBool;
  legal_hold_reason: ColumnType<string | null, string | null | undefined, string | null>;
  legal_hold_set_by: ColumnType<number | null, number | null | undefined, number | null>;
  legal_hold_set_at: ColumnType<Millis | null, Millis | null | undefined, Millis | null>;
  /** Since 0014_session_retention: when the retention sweep removed the session's media. */
  media_purged_at: ColumnType<Millis | null, Millis | null | undefined, Millis | null>;
  /** Since 0015_live_proctoring: `offline`, `connecting` or `live` (written by the signalling hub). */
  live_status: ColumnType<string, string | undefined, string>;
  /** Since 0015_live_proctoring: when the running pause of the candidate's clock began; null while it runs. */
  clock_paused_at: ColumnType<Millis | null, Millis | null | undefined, Millis | null>;
  /** Since 0015_live_proctoring: the total of the clock's pauses that ended. */
  clock_paused_ms: ColumnType<Millis, Millis | undefined, Millis>;
  /** The detection rate the room last reported for the automated flags, per second; null before. */
  flags_rate_hz: ColumnType<number | null, number | null | undefined, number | null>;
  /** Since 0018_mobile_camera: the phone's pairing token (its only credential); null until shown. */
  mobile_token: ColumnType<string | null, string | null | undefined, string | null>;
  /** Since 0018_mobile_camera: `not_paired`, `paired`, `streaming` or `lost`. */
  mobile_status: ColumnType<string, string | undefined, string>;
  /** Since 0018_mobile_camera: when the phone was last heard from. */
  mobile_seen_at: ColumnType<Millis | null, Millis | null | undefined, Millis | null>;
  /** Since 0018_mobile_camera: the phone's browser and system, as the phone reported them. */
  mobile_device: ColumnType<string | null, string | null | undefined, string | null>;
  /** Since 0019_terms_acceptance: when the candidate accepted the exam's terms; null before. */
  terms_accepted_at: ColumnType<Millis | null, Millis | null | undefined, Millis | null>;
  /** Since 0019_terms_acceptance: the SHA-256 (hex) of the terms' text the candidate accepted. */
  terms_sha256: ColumnType<string | null, string | null | undefined, string | null>;
  /** Since 0022_candidate_languages: the student's language (a supported BCP 47 tag); null when unset. */
  language: ColumnType<string | null, string | null | undefined, string | null>;
  /** Since 0022_candidate_languages: the candidate's own pick in a language menu; null before one. */
  chosen_language: ColumnType<string | null, string | null | undefined, string | null>;
  /** Since 0025_accommodations: JSON object of the student's accommodations; null for none. */
  accommodations: ColumnType<string | null, string | null | undefined, string | null>;
  /** Since 0025_accommodations: when the running rest break began; null while the candidate works. */
  break_started_at: ColumnType<Millis | null, Millis | null | undefined, Millis | null>;
  /** Since 0025_accommodations: the total of the rest breaks that ended. */
  break_ms: ColumnType<Millis, Millis | undefined, Millis>;
  /** Since 0025_accommodations: how many rest breaks the candidate started. */
  breaks_taken: ColumnType<number, number | undefined, number>;
  /** Since 0025_accommodations: `not_tried`, `running`, `passed` or `failed` (the newest practice run). */
  practice_status: ColumnType<string, string | undefined, string>;
  /** Since 0025_accommodations: the check the newest practice run failed; null otherwise. */
  practice_failed_check: ColumnType<string | null, string | null | undefined, string | null>;
  /** Since 0025_accommodations: when the newest practice run began or ended. */
  practice_at: ColumnType<Millis | null, Millis | null | undefined, Millis | null>;
  /** Since 0025_accommodations: when the office last emailed this student a practice reminder. */
  practice_reminded_at: ColumnType<Millis | null, Millis | null | undefined, Millis | null>;
  created_at: Millis;
  updated_at: Millis;
}

export interface IncidentsTable {
  id: Id;
  student_session_id: number;
  comment: string;
  offset_time: number | null;
  kind: string | null;
  /** An automated flag's type (docs/automated-flags.md); null for other incidents. */
  type: string | null;
  /** `automatic` for a flag; null for staff's incidents and the room's events. */
  source: string | null;
  /** A flag's confidence, 0 to 1. */
  confidence: number | null;
  /** Seconds since the start when a flag's episode ended; null while it lasts (and for others). */
  end_offset_time: number | null;
  /** The room's id of a flag's episode: unique per session where set. */
  episode_key: string | null;
  /** A reviewer dismissed the flag (kept, marked). */
  dismissed_at: Millis | null;
  dismissed_by: number | null;
  /** Since 0025_accommodations: a flag recorded for the record only, never raised. */
  informational: DefaultedBool;
  created_at: Millis;
  updated_at: Millis;
}

export interface SessionFilesTable {
  id: Id;
  student_session_id: number;
  kind: string;
  file_id: number;
  sequence: number;
  created_at: Millis;
}

export interface ToolProvidersTable {
  id: Id;
  institute_id: number;
  name: string;
  lti_version: string;
  consumer_key: string | null;
  shared_secret_encrypted: string | null;
  issuer: string | null;
  client_id: string | null;
  deployment_id: string | null;
  auth_login_url: string | null;
  auth_token_url: string | null;
  jwks_url: string | null;
  created_at: Millis;
  updated_at: Millis;
}

export interface LtiResourcesTable {
  id: Id;
  institute_id: number;
  tool_provider_id: number;
  exam_id: number | null;
  resource_link_id: string;
  context_id: string | null;
  title: string | null;
  created_at: Millis;
  updated_at: Millis;
}

export interface NoncesTable {
  user_id: number;
  nonce: string;
  /** The request's timestamp under NONCE_POLICY=request, the empty string under strict. */
  scope: string;
  expires_at: Millis;
}

/** Since 0004_room_rate_limits: requests admitted per room token in its current window. */
export interface RoomRateLimitsTable {
  /** `room:` + the token (the limiter's key). */
  key: string;
  /** When the key's current window began (epoch ms); it lasts ROOM_RATE_LIMIT.timeWindowMs. */
  window_start: Millis;
  hits: number;
}

/** Since 0005_staff_sign_in: a signed-in browser (the console). */
export interface StaffSessionsTable {
  /** SHA-256 (hex) of the cookie's token. */
  id: string;
  user_id: number;
  csrf_token: string;
  created_at: Millis;
  last_seen_at: Millis;
  /** The absolute end, whatever the activity. */
  expires_at: Millis;
  ip: string | null;
  user_agent: string | null;
}

/** Since 0005_staff_sign_in: invitation and password-reset links, by the SHA-256 of their token. */
export interface OneTimeLinksTable {
  id: string;
  user_id: number;
  /** `invitation` or `password_reset`. */
  purpose: string;
  created_at: Millis;
  expires_at: Millis;
  used_at: Millis | null;
}

/** Since 0005_staff_sign_in: failed sign-ins per account and per client address. */
export interface SignInThrottlesTable {
  key: string;
  failures: number;
  last_failure_at: Millis;
  blocked_until: Millis;
}

/** Since 0006_second_factor: a user's TOTP secret; `enabled_at` is null until enrolment is confirmed. */
export interface SecondFactorsTable {
  user_id: number;
  /** encryptSecret() of the base32 secret. */
  secret_encrypted: string;
  created_at: Millis;
  enabled_at: Millis | null;
  last_used_step: number | null;
}

/** Since 0006_second_factor: single-use recovery codes, by their SHA-256. */
export interface RecoveryCodesTable {
  id: string;
  user_id: number;
  used_at: Millis | null;
}

/** Since 0006_second_factor: a password sign-in waiting for its second step, by its token's SHA-256. */
export interface SecondFactorChallengesTable {
  id: string;
  user_id: number;
  created_at: Millis;
  expires_at: Millis;
  attempts: number;
  ip: string | null;
  user_agent: string | null;
}

export interface JobsTable {
  id: Id;
  kind: string;
  payload: string;
  status: string;
  dedupe_key: string | null;
  attempts: number;
  max_attempts: number;
  run_at: Millis;
  locked_by: string | null;
  locked_until: Millis | null;
  last_error: string | null;
  progress: string | null;
  created_at: Millis;
  updated_at: Millis;
  finished_at: Millis | null;
}

export interface OutboxTable {
  id: Id;
  kind: string;
  to_address: string;
  subject: string;
  text_body: string;
  html_body: string;
  status: string;
  attempts: number;
  next_attempt_at: Millis;
  last_error: string | null;
  student_session_id: number | null;
  created_at: Millis;
  sent_at: Millis | null;
  /** The institute the email belongs to (0009); null for old mail no institute could be found for. */
  institute_id: number | null;
}

export interface ExamZipExportsTable {
  id: Id;
  exam_id: number;
  status: string;
  job_id: number | null;
  file_id: number | null;
  error: string | null;
  created_at: Millis;
  updated_at: Millis;
}

/** Since 0007_audit_events: sign-ins and staff writes (docs/audit-log.md). */
export interface AuditEventsTable {
  id: Id;
  /** Null for a failed sign-in naming no known account. */
  institute_id: number | null;
  user_id: number | null;
  /** `sign_in`, `sign_in_failed`, `sign_out`, ... or `METHOD /api/v3/route/:template`. */
  action: string;
  /** The email typed into a sign-in; null for API writes. */
  email: string | null;
  target_type: string | null;
  target_id: number | null;
  status: number;
  ip: string | null;
  user_agent: string | null;
  created_at: Millis;
}

/** Since 0008_oidc_logins: pending OpenID Connect sign-ins (docs/staff-sign-in.md, "OpenID Connect"). */
export interface OidcLoginsTable {
  id: string;
  identity_provider_id: number;
  browser_hash: string;
  code_verifier_encrypted: string;
  nonce: string;
  return_to: string;
  created_at: Millis;
  expires_at: Millis;
}

/** Since 0013_webhook_secrets: each institute's webhook signing secret (docs/webhooks.md). */
export interface WebhookSecretsTable {
  institute_id: number;
  secret_encrypted: string;
  created_at: Millis;
}

/** Since 0012_session_reviews: one row per verdict recorded on a session, never updated (docs/review.md). */
export interface SessionReviewsTable {
  id: Id;
  student_session_id: number;
  /** The row this one follows (0 for the first); unique per session. */
  previous_review_id: number;
  verdict: string;
  comment: string | null;
  reviewer_id: number | null;
  reviewer_name: string | null;
  /** `not_required`, `pending` or `confirmed`. */
  second_review: string;
  created_at: Millis;
}

/** Since 0030_appeals: a candidate's appeal against a final verdict, one per session (docs/appeals.md). */
export interface AppealsTable {
  id: Id;
  student_session_id: number;
  /** The session_reviews row appealed. */
  review_id: number;
  statement: string;
  /** `open`, `upheld` or `overturned`. */
  status: string;
  submitted_at: Millis;
  decided_by: number | null;
  decided_by_name: string | null;
  decided_at: Millis | null;
  comment: string | null;
  /** The verdict an overturned appeal recorded. */
  decision_review_id: number | null;
}

/** Since 0030_appeals: the files sent with an appeal, in order. */
export interface AppealFilesTable {
  id: Id;
  appeal_id: number;
  file_id: number;
  position: number;
}

/** Since 0011_recordings: one finalised recording per session and stream (docs/recordings.md). */
export interface RecordingsTable {
  id: Id;
  student_session_id: number;
  source: string;
  status: string;
  started_at: Millis | null;
  duration_seconds: number | null;
  /** JSON: [{"start": seconds, "end": seconds}, ...] */
  gaps: Generated<string>;
  file_id: number | null;
  storage_key: string | null;
  size: number | null;
  chunks: Generated<number>;
  chunks_damaged: Generated<number>;
  error: string | null;
  created_at: Millis;
  updated_at: Millis;
}

/** Since 0014_session_retention: the purge log, one row per session and kind of media removed. */
export interface SessionPurgesTable {
  id: Id;
  institute_id: number;
  exam_id: number;
  student_session_id: number;
  /** `recording`, `recording_chunk`, `photo` or `upload`. */
  kind: string;
  files: number;
  bytes: number;
  /** `retention`. */
  reason: string;
  retention_period: number | null;
  purged_at: Millis;
  /** Since 0031_retention_per_kind: `period` or `final_verdict`; null for entries before it. */
  rule: ColumnType<string | null, string | null | undefined, string | null>;
}

/** Since 0031_retention_per_kind: an institute's retention period for one kind of data. */
export interface RetentionPoliciesTable {
  institute_id: number;
  /** `id_photo`, `face_photo`, `recording`, `upload` or `incident`. */
  kind: string;
  /** Days after the session ended; null follows the institute's session_retention_period. */
  days: number | null;
  updated_by: number | null;
  updated_at: Millis;
}

/** Since 0031_retention_per_kind: a kind of a session's data the retention sweep purged. */
export interface SessionKindPurgesTable {
  student_session_id: number;
  kind: string;
  /** `period` or `final_verdict`. */
  rule: string;
  days: number | null;
  purged_at: Millis;
  /** For `id_photo`: the ID was checked (a final verdict was recorded), by whom and when. */
  id_checked: DefaultedBool;
  id_checked_by: number | null;
  id_checked_by_name: string | null;
  id_checked_at: Millis | null;
}

/** Since 0015_live_proctoring: the chat between a session's proctors and its candidate. */
export interface LiveMessagesTable {
  id: Id;
  student_session_id: number;
  /** `proctor` or `candidate`. */
  sender: string;
  /** The proctor who wrote it; null for the candidate's (and once the account is gone). */
  user_id: number | null;
  body: string;
  created_at: Millis;
}

/** One practice run of a candidate's technical setup (migration 0025, docs/accommodations.md). */
export interface PracticeRunsTable {
  id: Id;
  student_session_id: number;
  /** `running`, `passed` or `failed`. */
  status: string;
  /** The check that failed; null unless failed. */
  failed_check: string | null;
  /** JSON object: each check's outcome (`succeeded`, `failed`, `skipped`). */
  checks: ColumnType<string, string | undefined, string>;
  started_at: Millis;
  finished_at: Millis | null;
  created_at: Millis;
  updated_at: Millis;
}

/** Invigil's LTI 1.3 signing keys (migration 0016, docs/lti.md). */
export interface LtiToolKeysTable {
  id: Id;
  kid: string;
  /** The PKCS#8 PEM private key, encrypted with the server key (encryptSecret). */
  private_key_encrypted: string;
  /** The public key as a JWK (JSON text), with kid, alg and use. */
  public_jwk: string;
  created_at: Millis;
  /** From then on the key no longer signs (a newer one does); null while it is the signing key. */
  retired_at: Millis | null;
  /** From then on the key is no longer published at /lti/jwks; null while it is. */
  expires_at: Millis | null;
}

/** A pending LTI 1.3 login, single use, ten minutes. */
export interface LtiLoginsTable {
  id: Id;
  /** SHA-256 (hashToken) of the state sent to the platform. */
  state_hash: string;
  nonce: string;
  tool_provider_id: number;
  /** hashToken of the browser binding value (kept in a cookie or the platform's storage). */
  binding_hash: string;
  /** `cookie` or `storage`. */
  binding_kind: string;
  /** JSON of the login initiation's own parameters, to start the same login again top-level. */
  login_params: string;
  created_at: Millis;
  expires_at: Millis;
  used_at: Millis | null;
}

/** An LTI 1.1 OAuth nonce seen from a tool provider. */
export interface LtiOauthNoncesTable {
  tool_provider_id: number;
  nonce: string;
  expires_at: Millis;
}

/** A single-use ticket carrying a verified launch across a browser step. */
export interface LtiTicketsTable {
  id: Id;
  /** hashToken of the ticket. */
  ticket_hash: string;
  /** `continue` or `deep_link`. */
  purpose: string;
  /** JSON of what the ticket carries. */
  payload: string;
  created_at: Millis;
  expires_at: Millis;
  used_at: Millis | null;
}

/** What later LTI messages need about a launched student session. */
export interface LtiSessionLinksTable {
  student_session_id: number;
  tool_provider_id: number;
  /** `1.1` or `1.3`. */
  lti_version: string;
  platform_user_id: string;
  deployment_id: string | null;
  attempt_number: number | null;
  start_assessment_url: string | null;
  session_data: string | null;
  acs_url: string | null;
  /** JSON array of the Assessment Control Service's actions. */
  acs_actions: string | null;
  created_at: Millis;
  updated_at: Millis;
}

/** Since 0029_candidate_data_access: one-time codes and download keys of a candidate's own data. */
export interface CandidateDataCodesTable {
  id: Id;
  student_session_id: number;
  /** SHA-256 (hex) of the emailed code; the code itself is never kept. */
  code_hash: string;
  /** Wrong codes tried against this one. */
  attempts: ColumnType<number, number | undefined, number>;
  created_at: Millis;
  expires_at: Millis;
  /** When the code was entered right (it works once). */
  used_at: Millis | null;
  /** SHA-256 (hex) of the download key given for the code; null before. */
  download_hash: string | null;
  download_expires_at: Millis | null;
}

/** An institute's data key of one version, wrapped under the server key (docs/storage.md). */
export interface DataKeysTable {
  institute_id: number;
  version: number;
  /** base64 of nonce, tag and the AES-256-GCM-encrypted 32-byte key. */
  wrapped_key: string;
  created_at: Millis;
}

export interface Tables {
  institutes: InstitutesTable;
  identity_providers: IdentityProvidersTable;
  users: UsersTable;
  exams: ExamsTable;
  exam_comanagers: ExamComanagersTable;
  files: FilesTable;
  documents: DocumentsTable;
  attachments: AttachmentsTable;
  student_sessions: StudentSessionsTable;
  message_overrides: MessageOverridesTable;
  incidents: IncidentsTable;
  session_files: SessionFilesTable;
  tool_providers: ToolProvidersTable;
  lti_resources: LtiResourcesTable;
  nonces: NoncesTable;
  jobs: JobsTable;
  outbox: OutboxTable;
  exam_zip_exports: ExamZipExportsTable;
  room_rate_limits: RoomRateLimitsTable;
  staff_sessions: StaffSessionsTable;
  one_time_links: OneTimeLinksTable;
  sign_in_throttles: SignInThrottlesTable;
  second_factors: SecondFactorsTable;
  recovery_codes: RecoveryCodesTable;
  second_factor_challenges: SecondFactorChallengesTable;
  audit_events: AuditEventsTable;
  oidc_logins: OidcLoginsTable;
  session_reviews: SessionReviewsTable;
  recordings: RecordingsTable;
  webhook_secrets: WebhookSecretsTable;
  session_purges: SessionPurgesTable;
  retention_policies: RetentionPoliciesTable;
  session_kind_purges: SessionKindPurgesTable;
  live_messages: LiveMessagesTable;
  practice_runs: PracticeRunsTable;
  lti_tool_keys: LtiToolKeysTable;
  lti_logins: LtiLoginsTable;
  lti_oauth_nonces: LtiOauthNoncesTable;
  lti_tickets: LtiTicketsTable;
  lti_session_links: LtiSessionLinksTable;
  candidate_data_codes: CandidateDataCodesTable;
  appeals: AppealsTable;
  appeal_files: AppealFilesTable;
  data_keys: DataKeysTable;
}
