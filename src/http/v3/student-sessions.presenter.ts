import { settledStatus } from '../../domain/mobile/mobile.ts';
import { presentAccommodations } from '../../domain/student-sessions/accommodations.ts';
import { type ClockExam, deadlineOf, timeAllowedSeconds } from '../../domain/student-sessions/deadline.ts';
import { NO_EXAM_CLOCK } from '../../domain/student-sessions/exam-clocks.repository.ts';
import type { Incident, StudentSession } from '../../domain/student-sessions/student-session.ts';
import { CHECK_FIELDS } from '../../domain/student-sessions/student-session.ts';
import { isClockPaused, pausedSeconds } from '../../domain/live/live-clock.ts';
import { isoTime } from '../time.ts';

/** The V3 incident record, with an automated flag's fields (null/false for other incidents). */
export function presentIncidentV3(incident: Incident): Record<string, unknown> {
  return {
    id: incident.id,
    student_session_id: incident.studentSessionId,
    comment: incident.comment,
    created_at: isoTime(incident.createdAt),
    updated_at: isoTime(incident.updatedAt),
    offset_time: incident.offsetTime,
    // Step 12's automated flags (docs/automated-flags.md); null/false for every other incident.
    type: incident.type,
    source: incident.source,
    confidence: incident.confidence,
    end_offset_time: incident.endOffsetTime,
    dismissed: incident.dismissedAt !== null,
    dismissed_at: isoTime(incident.dismissedAt),
    dismissed_by: incident.dismissedBy,
    // Step 17: a flag that assistive technology set off, recorded and never raised.
    informational: incident.informational,
  };
}

/** Whether a record is the answer to a create (then without `is_email_sent`). */
export interface StudentRecordOptions {
  readonly created?: boolean;
}

/**
 * The V3 student record (api.md's table, in its order, then contract §6's additions, `use_duration`
 * and the LMS fields `student_lms_id`, `resource_link_id`, `context_id`, `lti_resource_id`, then
 * live proctoring's `live_status`, `clock_paused` and `paused_seconds`, counted up to `now`, then
 * step 17's `accommodations`, `deadline_at` and `time_allowed_seconds` (the one clock, deadline.ts,
 * over `exam`'s clock fields at `now`), `breaks_taken`, `on_break` and `practice`).
 * `is_email_sent` is left out of the create answer only, as api.md says.
 */
export function presentStudentSessionV3(
  session: StudentSession,
  exam: ClockExam,
  now: number,
  options: StudentRecordOptions = {},
): Record<string, unknown> {
  const record: Record<string, unknown> = {
    id: session.id,
    session_id: session.sessionId,
    student_id: session.studentId,
    time_slot: session.timeSlot,
    created_at: isoTime(session.createdAt),
    updated_at: isoTime(session.updatedAt),
    email: session.email,
    name: session.name,
    pin_code: session.pinCode,
    operating_system: session.operatingSystem,
    browser: session.browser,
    browser_version: session.browserVersion,
    status: session.status,
    token: session.token,
  };
  for (const [key, field] of Object.entries(CHECK_FIELDS)) {
    record[field] = session[key as keyof typeof CHECK_FIELDS];
  }
  Object.assign(record, {
    bandwidth_speed: session.bandwidthSpeed,
    dummy_exam_survey: session.dummyExamSurvey,
    skip_requirements: session.skipRequirements,
    send_confirmation: session.sendConfirmation,
    start_time: isoTime(session.startTime),
    end_time: isoTime(session.endTime),
    open_time: isoTime(session.openTime),
    reservation_time: isoTime(session.reservationTime),
    expires_at: isoTime(session.expiresAt),
    recording_started_at: isoTime(session.recordingStartedAt),
    recording_ended_at: isoTime(session.recordingEndedAt),
    exam_id: session.examId,
    entered_room: session.enteredRoom,
    exam_document_content_type: session.examDocumentContentType,
    exam_document_file_size: session.examDocumentFileSize,
    exam_document_updated_at: isoTime(session.examDocumentUpdatedAt),
    reviewed: session.reviewed,
    id_card_file_name: session.idCardFileName,
    id_card_content_type: session.idCardContentType,
    id_card_file_size: session.idCardFileSize,
    face_photo_file_name: session.facePhotoFileName,
    face_photo_content_type: session.facePhotoContentType,
    face_photo_file_size: session.facePhotoFileSize,
    individual_info: session.individualInfo,
    is_individual_info_html: session.isIndividualInfoHtml,
    rtc_session_id: session.rtcSessionId,
    rtc_session_ids: session.rtcSessionIds,
    in_setup: session.inSetup,
    in_check_requirements: session.inCheckRequirements,
    attempt: session.attempt,
    archived: session.archived,
    current_exam_mode: session.currentExamMode,
    transcoding_status: session.transcodingStatus,
    priority: session.priority,
  });
  if (!options.created) record.is_email_sent = session.isEmailSent;
  Object.assign(record, {
    use_duration: session.useDuration,
    proctor_id: session.proctorId,
    external_id: session.externalId,
    end_reason: session.endReason,
    student_lms_id: session.lmsUserId,
    resource_link_id: session.resourceLinkId,
    context_id: session.contextId,
    lti_resource_id: session.ltiResourceId,
    live_status: session.liveStatus,
    clock_paused: isClockPaused(session),
    paused_seconds: pausedSeconds(session, now),
    mobile_status: settledStatus(session, now).status,
    mobile_device: session.mobileDevice,
    terms_accepted_at: isoTime(session.termsAcceptedAt),
    language: session.language,
    chosen_language: session.chosenLanguage,
    accommodations: presentAccommodations(session.accommodations),
    deadline_at: isoTime(deadlineOf(session, exam, now)),
    time_allowed_seconds: timeAllowedSeconds(session, exam),
    breaks_taken: session.breaksTaken,
    on_break: session.breakStartedAt !== null,
    practice: {
      status: session.practiceStatus,
      failed_check: session.practiceFailedCheck,
      at: isoTime(session.practiceAt),
    },
    incidents_count: session.incidents.length,
    incidents: session.incidents.map(presentIncidentV3),
  });
  return record;
}

/** What loads the clock fields of exams (the student-sessions service's examClocks). */
export interface ExamClockSource {
  examClocks(examIds: readonly number[]): Promise<ReadonlyMap<number, ClockExam>>;
}

/**
 * The V3 records of `sessions` at `now`, their exams' clocks loaded in one query. Returns them in
 * the order given; throws what the database throws.
 */
export async function presentStudentSessionsV3(
  source: ExamClockSource,
  sessions: readonly StudentSession[],
  now: number,
  options: StudentRecordOptions = {},
): Promise<Record<string, unknown>[]> {
  const clocks = await source.examClocks(sessions.map((session) => session.examId));
  return sessions.map((session) =>
    presentStudentSessionV3(session, clocks.get(session.examId) ?? NO_EXAM_CLOCK, now, options),
  );
}

/** The V3 record of one session at `now` (presentStudentSessionsV3 for one). */
export async function presentOneStudentSessionV3(
  source: ExamClockSource,
  session: StudentSession,
  now: number,
  options: StudentRecordOptions = {},
): Promise<Record<string, unknown>> {
  const clocks = await source.examClocks([session.examId]);
  return presentStudentSessionV3(session, clocks.get(session.examId) ?? NO_EXAM_CLOCK, now, options);
}
