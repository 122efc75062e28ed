import type { Exam } from '../../domain/exams/exam.ts';
import type { RoomMobile } from '../../domain/mobile/mobile.ts';
import type { StoredFlag } from '../../domain/flags/flags.ts';
import type { RecordedEvent } from '../../domain/room/room.service.ts';
import { examTerms, type RoomDocument, type RoomView, type SessionUpload } from '../../domain/room/room.ts';
import {
  type CandidateLanguage,
  type LanguageRequest,
  resolveCandidateLanguage,
} from '../../domain/room/language.ts';
import { individualInfoHtml } from '../../security/html.ts';
import { CHECK_FIELDS } from '../../domain/student-sessions/student-session.ts';
import { effectiveFlagSettings } from '../../domain/flags/settings.ts';
import { ianaTimeZone } from '../../domain/time-zones.ts';
import { breakEndsAt, timeAllowedSeconds } from '../../domain/student-sessions/deadline.ts';
import { breaksLeft } from '../../domain/room/breaks.ts';
import type { RoomSession } from '../../domain/room/room.ts';
import { isoTime } from '../time.ts';
import type { PrivacyNotice } from '../../domain/room/privacy.ts';
import { flagModelsPath } from './flag-models.ts';

/**
 * The session as its candidate may see it: no token, pin code, email, proctor or file ids. Returns
 * the JSON object; `time_left_seconds` counts down by the server clock while the exam is started
 * and is null otherwise.
 */
export function presentRoomSession(view: RoomView): Record<string, unknown> {
  const { session, deadline, now } = view;
  const started = session.status === 'exam_started';
  return {
    id: session.id,
    name: session.name,
    status: session.status,
    screenshare_check: session.screenshareCheck,
    microphone_check: session.microphoneCheck,
    speakers_check: session.speakersCheck,
    webcam_check: session.webcamCheck,
    mobile_check: session.mobileCheck,
    bandwidth_check: session.bandwidthCheck,
    bandwidth_speed: session.bandwidthSpeed,
    required_checks: view.requiredChecks.map((field) => CHECK_FIELDS[field]),
    skip_requirements: session.skipRequirements,
    use_duration: session.useDuration,
    open_time: isoTime(session.openTime),
    start_time: isoTime(session.startTime),
    end_time: isoTime(session.endTime),
    end_reason: session.endReason,
    ends_at: isoTime(deadline),
    // The one clock's instant (deadline.ts), as the V3 record's deadline_at: the same as ends_at.
    deadline_at: isoTime(deadline),
    time_allowed_seconds: timeAllowedSeconds(session, view.exam),
    time_left_seconds: started && deadline !== null ? Math.max(0, Math.ceil((deadline - now) / 1000)) : null,
    entered_room: session.enteredRoom,
    individual_info: session.individualInfo,
    is_individual_info_html: session.isIndividualInfoHtml,
    individual_info_html: individualInfoHtml(session.individualInfo, session.isIndividualInfoHtml),
    has_face_photo: session.facePhotoFileId !== null,
    has_id_card: session.idCardFileId !== null,
    uploads_count: view.uploadsCount,
    recording_chunks_count: view.recordingChunks.webcam,
    screen_recording_chunks_count: view.recordingChunks.screen,
  };
}

/**
 * The zone the candidate's pages show the exam's times in: the exam's `timezone`, or null when the
 * stored name is no zone this server knows (a row written before zones were checked), so the page
 * falls back to the browser's own zone rather than failing on it.
 */
export function candidateTimeZone(exam: Exam): string | null {
  return ianaTimeZone(exam.timezone) ?? null;
}

/** The exam settings a candidate needs (no ids, owners or co-managers). Returns the JSON object. */
export function presentRoomExam(exam: Exam): Record<string, unknown> {
  return {
    name: exam.name,
    type: exam.type,
    duration_minutes: exam.durationMinutes,
    use_duration: exam.useDuration,
    start_time: isoTime(exam.startTime),
    end_time: isoTime(exam.endTime),
    upload_answers: exam.uploadAnswers,
    web_cam: exam.webCam,
    screen_share: exam.screenShare,
    mobile_cam: exam.mobileCam,
    allow_websites: exam.allowWebsites,
    allow_external_applications: exam.allowExternalApplications,
    allow_textbooks: exam.allowTextbooks,
    allow_calculator: exam.allowCalculator,
    allow_pen_paper: exam.allowPenPaper,
    allow_additional: exam.allowAdditional,
    allowed_websites: exam.allowedWebsites,
    allowed_external_applications: exam.allowedExternalApplications,
    allowed_textbooks: exam.allowedTextbooks,
    allowed_calculator_type: exam.allowedCalculatorType,
    allowed_additional: exam.allowedAdditional,
    // Plain text the candidate accepts before starting; null when the exam has none (or blank).
    terms: examTerms(exam),
    timezone: candidateTimeZone(exam),
    record_during_breaks: exam.recordDuringBreaks,
    recording_quality: exam.recordingQuality,
  };
}

/**
 * The candidate's own accommodations (docs/accommodations.md), as far as the room needs them:
 * `{extra_time_minutes, extra_time_percent, breaks: {count, minutes, taken, remaining} | null,
 * break: {started_at, ends_at} | null, exemptions, assistive_technology}`. `break` is the running
 * rest break (`ends_at` when it ends by itself; null when no allowance limits it). `exemptions`
 * names the checks only: the reasons and the staff note are for staff, never for the candidate.
 */
export function presentRoomAccommodations(session: RoomSession): Record<string, unknown> {
  const { accommodations } = session;
  const { breaks } = accommodations;
  return {
    extra_time_minutes: accommodations.extraTimeMinutes,
    extra_time_percent: accommodations.extraTimePercent,
    breaks:
      breaks === null
        ? null
        : {
            count: breaks.count,
            minutes: breaks.minutes,
            taken: session.breaksTaken,
            remaining: breaksLeft(session),
          },
    break:
      session.breakStartedAt === null
        ? null
        : { started_at: isoTime(session.breakStartedAt), ends_at: isoTime(breakEndsAt(session)) },
    exemptions: accommodations.exemptions.map((exemption) => exemption.check),
    assistive_technology: accommodations.assistiveTechnology,
  };
}

/** The exam's document with its attachment links, or null. Returns the JSON value. */
export function presentRoomDocument(document: RoomDocument | null): Record<string, unknown> | null {
  if (document === null) return null;
  return {
    exam_content: document.document.examContent,
    content_with_links: document.contentWithLinks,
    content_html: document.contentHtml,
    attachments: document.attachments.map((attachment) => ({
      placeholder: attachment.placeholder,
      file_name: attachment.fileName,
      content_type: attachment.contentType,
      file_size: attachment.fileSize,
      url: attachment.url,
      expires_at: isoTime(attachment.urlExpiresAt),
    })),
  };
}

/**
 * The session's live proctoring (docs/api-live.md): `{enabled, socket, awaiting_admission,
 * clock_paused}`, `socket` being the path of the room's live WebSocket. Returns the JSON object.
 */
export function presentRoomLive(view: RoomView): Record<string, unknown> {
  return {
    enabled: view.live.enabled,
    socket: `/live/room/${encodeURIComponent(view.session.token)}`,
    awaiting_admission: view.live.awaitingAdmission,
    clock_paused: view.live.clockPaused,
  };
}

/** The detectors' base path, or null when the packages that hold them are not installed. */
function modelsPath(): string | null {
  try {
    return flagModelsPath();
  } catch {
    return null;
  }
}

/**
 * The automated flags (docs/automated-flags.md): `{enabled, settings, models, has_face_photo}`.
 * `enabled` when the exam has `automated_flags` and the detectors can be served (false when their
 * packages are missing: the room then runs none, rather than failing); `settings` as in
 * force (defaults filled in); `models` the detectors' base path, null when off. Returns the object.
 */
export function presentRoomFlags(view: RoomView): Record<string, unknown> {
  const models = view.exam.automatedFlags ? modelsPath() : null;
  return {
    enabled: models !== null,
    settings: effectiveFlagSettings(view.exam.flagSettings),
    models,
    has_face_photo: view.session.facePhotoFileId !== null,
  };
}

/** The candidate's language: `{current, available}` (docs/languages.md). */
export function presentCandidateLanguage(language: CandidateLanguage): Record<string, unknown> {
  return { current: language.current, available: [...language.available] };
}

/**
 * The whole room answer: `{"session", "exam", "accommodations", "document", "server_time", "live",
 * "language"}`,
 * `automated_flags` for an exam that has them, and `lti_start_assessment` for a session launched
 * with LTI Proctoring Services. `reader` is what the request says about the candidate's language.
 */
export function presentRoomView(view: RoomView, reader: LanguageRequest): Record<string, unknown> {
  return {
    session: presentRoomSession(view),
    exam: presentRoomExam(view.exam),
    accommodations: presentRoomAccommodations(view.session),
    document: presentRoomDocument(view.document),
    server_time: isoTime(view.now),
    live: presentRoomLive(view),
    // Only for an exam with automated flags, so every other room answer is unchanged.
    ...(view.exam.automatedFlags ? { automated_flags: presentRoomFlags(view) } : {}),
    // Only in the answer of a Proctoring Services session, so every other room answer is unchanged.
    ...(view.ltiStartAssessment
      ? { lti_start_assessment: `/lti/start-assessment/${encodeURIComponent(view.session.token)}` }
      : {}),
    // Only for an exam with a phone camera, so every other room answer is unchanged.
    ...(view.mobile === null ? {} : { mobile: presentRoomMobile(view.mobile) }),
    language: presentCandidateLanguage(resolveCandidateLanguage(view.languageFacts, reader)),
    message_overrides: view.messageOverrides,
    privacy: presentRoomPrivacy(view.privacy),
  };
}

/**
 * The privacy panel (docs/room.md "Privacy panel"): `{version, recorded, on_device, viewers,
 * retention: [{kind, days, rule}], institute: {name, privacy_contact, dpo_name, dpo_email},
 * appeal_period_days}`. Returns the JSON object (the phone's view carries the same).
 */
export function presentRoomPrivacy(notice: PrivacyNotice): Record<string, unknown> {
  return {
    version: notice.version,
    recorded: [...notice.recorded],
    on_device: [...notice.onDevice],
    viewers: [...notice.viewers],
    retention: notice.retention.map((fact) => ({ kind: fact.kind, days: fact.days, rule: fact.rule })),
    institute: {
      name: notice.institute.name,
      privacy_contact: notice.institute.privacyContact,
      dpo_name: notice.institute.dpoName,
      dpo_email: notice.institute.dpoEmail,
    },
    appeal_period_days: notice.appealPeriodDays,
  };
}

/**
 * The phone of a mobile_cam exam: `{pairing_url, pairing_address, pin_code, status, device,
 * last_seen_at, chunks_count}`. Returns the JSON object.
 */
export function presentRoomMobile(mobile: RoomMobile): Record<string, unknown> {
  return {
    pairing_url: mobile.pairingUrl,
    pairing_address: mobile.pairingAddress,
    pin_code: mobile.pinCode,
    status: mobile.status,
    device: mobile.device,
    last_seen_at: isoTime(mobile.lastSeenAt),
    chunks_count: mobile.chunksCount,
  };
}

/** A handed-in file: `{file_name, size, content_type}`. */
export function presentRoomUpload(upload: SessionUpload): Record<string, unknown> {
  return { file_name: upload.fileName, size: upload.size, content_type: upload.contentType };
}

/** A recorded event: `{type, comment, offset_time, created_at}`. */
export function presentRoomEvent(event: RecordedEvent): Record<string, unknown> {
  return {
    type: event.type,
    comment: event.comment,
    offset_time: event.offsetTime,
    created_at: isoTime(event.createdAt),
  };
}

/** A flag as the room reported it: `{key, type, confidence, offset_time, end_offset_time, comment, ...}`. */
export function presentRoomFlag(flag: StoredFlag): Record<string, unknown> {
  return {
    key: flag.key,
    type: flag.type,
    confidence: flag.confidence,
    offset_time: flag.offsetTime,
    end_offset_time: flag.endOffsetTime,
    comment: flag.comment,
    created_at: isoTime(flag.createdAt),
    updated_at: isoTime(flag.updatedAt),
  };
}
