import { NO_ACCOMMODATIONS } from './accommodations.ts';
import type { StudentSession } from './student-session.ts';

/** The emails a preview can show: those send_emails sends (today the exam link only). */
export const PREVIEW_KINDS = ['exam_link'] as const;
export type PreviewKind = (typeof PREVIEW_KINDS)[number];

/** An email as it would be written to the outbox, and whom it would go to. */
export interface EmailPreview {
  readonly kind: PreviewKind;
  readonly to: string;
  readonly subject: string;
  readonly text: string;
  readonly html: string;
  /** True when it was made for the sample candidate, not a session of the exam. */
  readonly sample: boolean;
}

/**
 * The room token of the sample candidate: not 32 hex characters, so it can never be a real
 * session's token, and its link plainly says what it is (the room answers it as unknown).
 */
export const SAMPLE_TOKEN = 'sample-link-for-preview-only';

/**
 * A candidate who does not exist, for a preview before any student is added: a reserved
 * `.invalid` address (RFC 2606), the sample token, no individual information, and the exam's own
 * window and duration. Returns it as a session of `examId` that was never stored (id 0).
 */
export function sampleSession(examId: number, now: number): StudentSession {
  return {
    id: 0,
    examId,
    name: 'Sample Student',
    email: 'sample.student@example.invalid',
    attempt: 0,
    status: 'registered',
    token: SAMPLE_TOKEN,
    pinCode: 0,
    sessionId: null,
    studentId: null,
    timeSlot: 0,
    operatingSystem: null,
    browser: null,
    browserVersion: null,
    screenshareCheck: 'not_started',
    microphoneCheck: 'not_started',
    speakersCheck: 'not_started',
    webcamCheck: 'not_started',
    mobileCheck: 'not_started',
    bandwidthCheck: 'not_started',
    bandwidthSpeed: null,
    dummyExamSurvey: null,
    skipRequirements: false,
    sendConfirmation: false,
    useDuration: true,
    startTime: null,
    endTime: null,
    openTime: null,
    reservationTime: null,
    expiresAt: null,
    recordingStartedAt: null,
    recordingEndedAt: null,
    enteredRoom: false,
    examDocumentFileId: null,
    examDocumentContentType: null,
    examDocumentFileSize: null,
    examDocumentUpdatedAt: null,
    reviewed: 'not_reviewed',
    idCardFileId: null,
    idCardFileName: null,
    idCardContentType: null,
    idCardFileSize: null,
    facePhotoFileId: null,
    facePhotoFileName: null,
    facePhotoContentType: null,
    facePhotoFileSize: null,
    individualInfo: null,
    isIndividualInfoHtml: false,
    rtcSessionId: null,
    rtcSessionIds: [],
    inSetup: false,
    inCheckRequirements: false,
    archived: false,
    currentExamMode: null,
    transcodingStatus: 'not_sent_to_queue',
    priority: null,
    isEmailSent: false,
    proctorId: null,
    externalId: null,
    endReason: null,
    ltiResourceId: null,
    lmsUserId: null,
    resourceLinkId: null,
    contextId: null,
    liveStatus: 'offline',
    clockPausedAt: null,
    clockPausedMs: 0,
    mobileToken: null,
    mobileStatus: 'not_paired',
    mobileSeenAt: null,
    mobileDevice: null,
    termsAcceptedAt: null,
    termsSha256: null,
    language: null,
    chosenLanguage: null,
    accommodations: NO_ACCOMMODATIONS,
    breakStartedAt: null,
    breakMs: 0,
    breaksTaken: 0,
    practiceStatus: 'not_tried',
    practiceFailedCheck: null,
    practiceAt: null,
    practiceRemindedAt: null,
    createdAt: now,
    updatedAt: now,
    incidents: [],
  };
}
