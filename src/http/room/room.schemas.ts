/**
 * OpenAPI descriptions of the candidate room's routes (docs/room-api.md). They document; the domain
 * validates. The room is not signed: the token in the path is its only credential.
 */

import {
  ON_DEVICE_KINDS,
  PRIVACY_RETENTION_KINDS,
  RECORDED_KINDS,
  RETENTION_RULES,
  VIEWER_ROLES,
} from '../../domain/room/privacy.ts';
import { LOCALES, PSEUDO_LOCALE } from '../../i18n/locales.ts';
import { MOBILE_STATUSES } from '../../domain/mobile/mobile.ts';
import { FLAG_TYPES } from '../../domain/flags/flag-types.ts';
import { errorBody } from '../v3/common.schemas.ts';
import { flagSettingsRecord } from '../v3/exams.schemas.ts';
import { liveMessageList, liveMessageRecord, messageBodyInput } from '../v3/live.schemas.ts';

const tags = ['candidate room'];

const tokenParam = {
  type: 'object',
  properties: { token: { type: 'string', description: 'The session’s room token (32 hex characters)' } },
  required: ['token'],
} as const;

const time = { type: ['string', 'null'], format: 'date-time' } as const;

/** The exam's time zone, in the room's and the phone's views. */
export const examTimeZone = {
  type: ['string', 'null'],
  description:
    'The IANA time zone the candidate’s pages show the exam’s times in (the exam’s `timezone`); null ' +
    'when the stored name is no zone the server knows: the page then uses the browser’s own zone',
  example: 'Europe/Amsterdam',
} as const;

const pageLocale = { type: 'string', enum: [...LOCALES, PSEUDO_LOCALE] } as const;

/** The candidate's language, in the room's and the phone's views and their language answers. */
export const candidateLanguageRecord = {
  type: 'object',
  description:
    'The language the candidate’s pages speak (docs/languages.md, "How the language is chosen"): ' +
    '`current`, the first of the candidate’s own pick, the student’s language, the exam’s, the ' +
    'institute’s and the browser’s Accept-Language that the exam allows, else English (or the ' +
    'exam’s first language); `available`, the languages the language menu offers (the exam’s ' +
    'candidate_languages; en-XA too when the server sets PSEUDO_LOCALE)',
  properties: {
    current: pageLocale,
    available: { type: 'array', items: pageLocale, minItems: 1 },
  },
  required: ['current', 'available'],
} as const;

/** An institute's own wording of page messages, in the room's and the phone's views. */
export const messageOverridesRecord = {
  type: 'object',
  description:
    'The institute’s own wording of candidate., room. and phone. messages (docs/languages.md, "An ' +
    'institute’s own wording"): locale → key → ICU message, to lay over the page’s catalogue; {} when ' +
    'it has none',
  additionalProperties: {
    type: 'object',
    additionalProperties: { type: 'string' },
    example: { 'room.setup.heading': 'Voorbereiding' },
  },
  example: { nl: { 'room.setup.heading': 'Voorbereiding' } },
} as const;

/** The privacy panel shown before the first check (docs/room.md "Privacy panel"), in the room's and the phone's views. */
export const privacyRecord = {
  type: 'object',
  description:
    'What the exam records, what stays on the device, who sees it, how long it is kept, whom to ask ' +
    'and how to contest a decision, generated from the exam’s and the institute’s settings',
  properties: {
    version: {
      type: 'string',
      description:
        'Changes whenever any fact here or the exam’s terms change; POST start sends it as privacy_version',
    },
    recorded: {
      type: 'array',
      items: { type: 'string', enum: [...RECORDED_KINDS] },
      description: 'What is recorded and sent to the server, for this candidate (exemptions left out)',
    },
    on_device: {
      type: 'array',
      items: { type: 'string', enum: [...ON_DEVICE_KINDS] },
      description: 'What runs on the device only; of the detectors, only the flags leave it',
    },
    viewers: {
      type: 'array',
      items: { type: 'string', enum: [...VIEWER_ROLES] },
      description: 'The institute roles that may see the recordings, photos and reviews',
    },
    retention: {
      type: 'array',
      description:
        'How long each kind this exam keeps is kept, from the institute’s retention per kind (docs/retention.md)',
      items: {
        type: 'object',
        properties: {
          kind: { type: 'string', enum: [...PRIVACY_RETENTION_KINDS] },
          days: { type: ['integer', 'null'], description: 'Days after the session ended; null: no period' },
          rule: {
            type: 'string',
            enum: [...RETENTION_RULES],
            description:
              'after_session_end: days after the session ended; after_verdict_or_session_end (the ID photo): ' +
              '24 hours after the final verdict, or days after the session ended if sooner; kept: until the ' +
              'institute deletes it',
          },
        },
        required: ['kind', 'days', 'rule'],
      },
    },
    institute: {
      type: 'object',
      properties: {
        name: { type: 'string' },
        privacy_contact: { type: ['string', 'null'] },
        dpo_name: { type: ['string', 'null'] },
        dpo_email: { type: ['string', 'null'] },
      },
      required: ['name', 'privacy_contact', 'dpo_name', 'dpo_email'],
    },
    appeal_period_days: {
      type: 'integer',
      description: 'Days after a final suspicious or violation verdict in which the candidate may contest it',
    },
  },
  required: ['version', 'recorded', 'on_device', 'viewers', 'retention', 'institute', 'appeal_period_days'],
} as const;

/** The body of a language pick, and its answer. */
export const languageChoice = {
  body: {
    type: 'object',
    properties: {
      language: {
        type: 'string',
        description: 'One of the languages the view’s `language.available` lists',
        example: 'nl',
      },
    },
    required: ['language'],
  },
  answer: {
    type: 'object',
    properties: { language: candidateLanguageRecord },
    required: ['language'],
  },
} as const;
const check = {
  type: 'string',
  enum: ['not_started', 'not_completed', 'succeeded', 'failed', 'skipped'],
} as const;

const roomSession = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    name: { type: 'string' },
    status: { type: 'string' },
    screenshare_check: check,
    microphone_check: check,
    speakers_check: check,
    webcam_check: check,
    mobile_check: check,
    bandwidth_check: check,
    bandwidth_speed: { type: ['number', 'null'] },
    required_checks: { type: 'array', items: { type: 'string' } },
    skip_requirements: { type: 'boolean' },
    use_duration: { type: 'boolean' },
    open_time: time,
    start_time: time,
    end_time: time,
    end_reason: { type: ['string', 'null'] },
    ends_at: time,
    deadline_at: {
      ...time,
      description:
        'When the exam ends for this candidate (the one clock of docs/accommodations.md: duration, ' +
        'extra time, rest breaks, proctor pauses, the exam’s end_time); the same instant as ends_at ' +
        'and the V3 record’s deadline_at. Null until started. Moves later during a rest break',
    },
    time_allowed_seconds: {
      type: ['integer', 'null'],
      description:
        'The time the candidate may work when the exam is timed by its duration: the duration plus ' +
        'the extra time, in seconds; null when only the exam’s end_time limits it',
    },
    time_left_seconds: {
      type: ['integer', 'null'],
      description: 'Seconds until deadline_at by the server clock; stands still during a rest break',
    },
    entered_room: { type: 'boolean' },
    individual_info: { type: ['string', 'null'] },
    is_individual_info_html: { type: 'boolean' },
    individual_info_html: {
      type: ['string', 'null'],
      description: 'individual_info as safe markup: sanitised when flagged as HTML, escaped otherwise',
    },
    has_face_photo: { type: 'boolean' },
    has_id_card: { type: 'boolean' },
    uploads_count: { type: 'integer' },
    recording_chunks_count: { type: 'integer', description: 'Webcam recording chunks stored' },
    screen_recording_chunks_count: { type: 'integer', description: 'Screen recording chunks stored' },
  },
} as const;

const flag = { type: 'boolean' } as const;
const text = { type: ['string', 'null'] } as const;

/** The exam settings a candidate needs (room.presenter.ts presentRoomExam): no ids or staff. */
const roomExam = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    type: { type: 'string', enum: ['demo', 'classroom', 'record_review', 'live_proctoring'] },
    duration_minutes: { type: ['integer', 'null'] },
    use_duration: flag,
    start_time: time,
    end_time: time,
    upload_answers: flag,
    web_cam: flag,
    screen_share: flag,
    mobile_cam: flag,
    allow_websites: flag,
    allow_external_applications: flag,
    allow_textbooks: flag,
    allow_calculator: flag,
    allow_pen_paper: flag,
    allow_additional: flag,
    allowed_websites: text,
    allowed_external_applications: text,
    allowed_textbooks: text,
    allowed_calculator_type: text,
    allowed_additional: text,
    terms: {
      type: ['string', 'null'],
      description:
        'Plain text (never markup) the candidate accepts before starting: POST start then needs ' +
        'terms_accepted true. Null when the exam has no terms',
    },
    timezone: examTimeZone,
    record_during_breaks: {
      type: 'boolean',
      description:
        'The streams keep recording during a rest break (true, the default); false: the room and the ' +
        'phone pause their recordings while the break runs',
    },
    recording_quality: {
      type: 'string',
      enum: ['low', 'standard', 'high'],
      description:
        'The recording profile’s level (docs/recordings.md, "Recording profile"); the room steps down one ' +
        'level by itself when the line cannot keep up',
    },
  },
} as const;

/** The candidate's own accommodations in the room's view (room.presenter.ts presentRoomAccommodations). */
export const roomAccommodations = {
  type: 'object',
  description:
    'The candidate’s accommodations (docs/accommodations.md) as the room needs them: no exemption ' +
    'reasons and no staff note, which are for staff only',
  properties: {
    extra_time_minutes: { type: 'integer', minimum: 0 },
    extra_time_percent: { type: 'integer', minimum: 0 },
    breaks: {
      type: ['object', 'null'],
      description: 'The rest breaks allowed, taken and left; null when the candidate has none',
      properties: {
        count: { type: 'integer', minimum: 1 },
        minutes: { type: 'integer', minimum: 1, description: 'The longest each break may last' },
        taken: { type: 'integer', minimum: 0 },
        remaining: { type: 'integer', minimum: 0 },
      },
      required: ['count', 'minutes', 'taken', 'remaining'],
    },
    break: {
      type: ['object', 'null'],
      description: 'The rest break running now (the exam clock stands still); null while the candidate works',
      properties: {
        started_at: { type: 'string', format: 'date-time' },
        ends_at: {
          ...time,
          description: 'When the break ends by itself (its allowance); null when nothing limits it',
        },
      },
      required: ['started_at', 'ends_at'],
    },
    exemptions: {
      type: 'array',
      description: 'The checks the candidate is exempt from (skipped, not required, not recorded)',
      items: {
        type: 'string',
        enum: ['webcam', 'microphone', 'screen_share', 'mobile', 'id_photo', 'face_photo', 'fullscreen'],
      },
    },
    assistive_technology: { type: 'boolean' },
  },
  required: [
    'extra_time_minutes',
    'extra_time_percent',
    'breaks',
    'break',
    'exemptions',
    'assistive_technology',
  ],
} as const;

/** A multipart body with one file part `file` (not signed: the room is not signed at all). */
const filePart = {
  type: 'object',
  properties: { file: { type: 'string', format: 'binary' } },
  required: ['file'],
} as const;

/** The phone of a mobile_cam exam as the room's view shows it (docs/room.md "The phone"). */
const mobileView = {
  type: 'object',
  description:
    'Only for an exam with mobile_cam: the phone as a second camera (docs/room.md "The phone"); absent ' +
    'for every other exam, and for a candidate exempt from the phone (accommodations.exemptions)',
  properties: {
    pairing_url: {
      type: ['string', 'null'],
      format: 'uri',
      description: 'The address the QR code holds, {PUBLIC_URL}/m/<pairing token>; null once finished',
    },
    pairing_address: { type: 'string', description: 'The short address a phone can type, {PUBLIC_URL}/m' },
    pin_code: {
      type: ['string', 'null'],
      description: 'The session’s six-digit PIN, typed on the phone with the email; null once finished',
    },
    status: { type: 'string', enum: [...MOBILE_STATUSES] },
    device: { type: ['string', 'null'], description: 'The phone’s browser and system, as it reported them' },
    last_seen_at: { ...time, description: 'When the phone was last heard from' },
    chunks_count: { type: 'integer', description: 'Chunks of the phone’s recording stored' },
  },
  required: [
    'pairing_url',
    'pairing_address',
    'pin_code',
    'status',
    'device',
    'last_seen_at',
    'chunks_count',
  ],
} as const;

const roomView = {
  type: 'object',
  properties: {
    session: roomSession,
    exam: roomExam,
    accommodations: roomAccommodations,
    document: {
      type: ['object', 'null'],
      description: 'Null until the exam is started, during a rest break, and after it finished',
      properties: {
        exam_content: { type: 'string' },
        content_with_links: { type: 'string' },
        content_html: {
          type: 'string',
          description: 'The document as sanitised markup, each placeholder a download link',
        },
        attachments: {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              placeholder: { type: 'string' },
              file_name: { type: 'string' },
              content_type: { type: 'string' },
              file_size: { type: 'integer' },
              url: { type: 'string', format: 'uri' },
              expires_at: { type: 'string', format: 'date-time' },
            },
          },
        },
      },
    },
    server_time: { type: 'string', format: 'date-time' },
    live: {
      type: 'object',
      description: 'Live proctoring (docs/api-live.md)',
      properties: {
        enabled: { type: 'boolean', description: 'The exam is live_proctoring' },
        socket: { type: 'string', description: 'The path of the room’s live WebSocket, /live/room/<token>' },
        awaiting_admission: {
          type: 'boolean',
          description: 'The candidate waits in the setup for a proctor to admit it after a live ID check',
        },
        clock_paused: {
          type: 'boolean',
          description: 'A proctor holds the clock still: ends_at moves later while it does',
        },
      },
      required: ['enabled', 'socket', 'awaiting_admission', 'clock_paused'],
    },
    automated_flags: {
      type: 'object',
      description:
        'Only for an exam with automated_flags (docs/automated-flags.md): whether the room runs the ' +
        'detectors, with which thresholds, and where it loads them from; absent for every other exam',
      properties: {
        enabled: {
          type: 'boolean',
          description: 'The exam has automated_flags (and the detectors can be served)',
        },
        settings: flagSettingsRecord,
        models: {
          type: ['string', 'null'],
          description: 'The base path of the detectors and their models, /room/models/<hash>/; null when off',
        },
        has_face_photo: {
          type: 'boolean',
          description: 'The session has a face photo to compare the face in view with (face_match)',
        },
      },
      required: ['enabled', 'settings', 'models', 'has_face_photo'],
    },
    lti_start_assessment: {
      type: 'string',
      description:
        'LTI Proctoring Services (docs/lti.md): once the exam is started, the path to open in a new tab ' +
        'to continue to the learning platform’s assessment; absent for any other session',
    },
    mobile: mobileView,
    language: candidateLanguageRecord,
    message_overrides: messageOverridesRecord,
    privacy: privacyRecord,
  },
  required: [
    'session',
    'exam',
    'accommodations',
    'document',
    'server_time',
    'live',
    'language',
    'message_overrides',
    'privacy',
  ],
} as const;

const commonErrors = {
  404: { description: "`Couldn't find the exam room`", ...errorBody },
  429: { description: 'Too many requests for this token', ...errorBody },
} as const;

const writeErrors = {
  ...commonErrors,
  409: { description: 'Not allowed in the session’s status, or the session is finished', ...errorBody },
  422: { description: 'A parameter is missing or invalid', ...errorBody },
} as const;

/** A route answering the room view. */
function viewRoute(summary: string, description: string) {
  return {
    tags,
    summary,
    description,
    params: tokenParam,
    response: { 200: roomView, ...writeErrors },
  } as const;
}

export const roomViewSchema = {
  tags,
  summary: 'What the candidate room shows',
  description:
    'The session, its exam’s settings, the document with attachment links (while the exam is ' +
    'started) and the server time. A started session whose time is up is finished first.',
  params: tokenParam,
  response: { 200: roomView, ...commonErrors },
} as const;

export const roomLanguageSchema = {
  tags,
  summary: 'Pick the room’s language',
  description:
    'Remembers the candidate’s pick in the language menu for the session (docs/languages.md); the ' +
    'room, the phone page and the closing page then speak it. Allowed in every status, a finished ' +
    "session included. 422 `'language':['is not offered for this exam']` for a language outside " +
    '`language.available`, `is not a valid language tag` for a malformed one, `can’t be blank` when ' +
    'missing.',
  params: tokenParam,
  body: languageChoice.body,
  response: {
    200: languageChoice.answer,
    ...commonErrors,
    422: { description: 'The language is missing, malformed or not offered', ...errorBody },
  },
} as const;

export const roomChecksSchema = {
  ...viewRoute(
    'Record requirement checks',
    'Any of the six checks, bandwidth_speed, operating_system, browser, browser_version. A ' +
      'registered or email_sent session whose required checks all succeeded moves to after_check_req.',
  ),
  body: {
    type: 'object',
    properties: {
      screenshare_check: check,
      microphone_check: check,
      speakers_check: check,
      webcam_check: check,
      mobile_check: check,
      bandwidth_check: check,
      bandwidth_speed: { type: 'number' },
      operating_system: { type: 'string' },
      browser: { type: 'string' },
      browser_version: { type: 'string' },
    },
  },
} as const;

export const roomIdCardSchema = {
  ...viewRoute('Upload the ID-card photo', 'Multipart field `file`, an image by content (415 otherwise).'),
  consumes: ['multipart/form-data'],
  body: filePart,
} as const;
export const roomFacePhotoSchema = {
  ...viewRoute('Upload the face photo', 'Multipart field `file`, an image by content (415 otherwise).'),
  consumes: ['multipart/form-data'],
  body: filePart,
} as const;
export const roomEnterSchema = viewRoute('Enter the setup', 'Moves to in_setup.');
export const roomLeaveSchema = viewRoute(
  'Leave the setup',
  'Moves to exam_not_started. 409 `Your proctor has to check your ID before you can continue` in a ' +
    'live_proctoring exam with live_id_check: there a proctor admits the candidate instead.',
);
export const roomStartSchema = {
  ...viewRoute(
    'Start the exam',
    'Moves to exam_started. 409 before open_time or the exam’s start_time, at or after its end_time, ' +
      'or while a required check has not succeeded (unless skip_requirements); in a live_proctoring exam ' +
      'with live_id_check, only once a proctor admitted the candidate (exam_not_started). When the exam ' +
      "has terms (exam.terms), 422 `Param is missing or the value is empty: 'terms_accepted'` unless " +
      'terms_accepted is true; the acceptance is stored with its time and the SHA-256 of the terms.',
  ),
  body: {
    type: 'object',
    properties: {
      terms_accepted: {
        type: 'boolean',
        description: 'true: the candidate accepted exam.terms (needed only when the exam has terms)',
      },
      privacy_version: {
        type: 'string',
        description:
          'The privacy.version the candidate accepted with the terms; stored with the acceptance. 422 ' +
          "`'privacy_version'` when it is not the version in force (the page shows the panel again)",
      },
    },
  },
} as const;
export const roomFinishSchema = viewRoute(
  'Finish the exam',
  'Moves to exam_finished, end_reason finished. A rest break still running ends with it (break_ended).',
);
export const roomBreakStartSchema = viewRoute(
  'Start a rest break',
  'Only for a candidate whose accommodations give rest breaks (docs/accommodations.md): the exam clock ' +
    'stops (deadline_at moves later while the break runs), the document is hidden, and a break_started ' +
    'incident is written. A break not ended by the candidate ends itself at its allowance ' +
    '(accommodations.breaks.minutes), with its break_ended incident dated at that instant. 409 `This ' +
    'student has no rest breaks`, `No rest breaks are left`, `A rest break is already running`, `Rest ' +
    'breaks can be taken only while the exam is started`, while a proctor holds the clock, or once the ' +
    'session is finished.',
);
export const roomBreakEndSchema = viewRoute(
  'End the rest break',
  'The candidate is back: the exam clock runs again and a break_ended incident is written. 409 `No ' +
    'rest break is running` (it may have ended itself at its allowance), or when the session is not ' +
    'started or is finished.',
);

export const roomRecordingSchema = {
  tags,
  summary: 'Append a recording chunk',
  description:
    'Multipart `file`, `sequence` (0, 1, 2, ...) and `source` (`webcam`, the default, or `screen`; ' +
    'each source is its own recording, numbered on its own). 201 when stored, 200 for a sequence ' +
    'already stored (nothing stored twice); 409 naming the expected sequence for a gap. Only while ' +
    'exam_started.',
  consumes: ['multipart/form-data'],
  params: tokenParam,
  body: {
    type: 'object',
    properties: {
      file: { type: 'string', format: 'binary' },
      sequence: { type: 'integer', minimum: 0, description: 'The chunk’s place in its recording, from 0' },
      source: { type: 'string', enum: ['webcam', 'screen'], default: 'webcam' },
    },
    required: ['file', 'sequence'],
  },
  response: {
    200: { type: 'object', properties: { next_sequence: { type: 'integer' } } },
    201: { type: 'object', properties: { next_sequence: { type: 'integer' } } },
    413: { description: 'Chunk too large', ...errorBody },
    415: { description: 'The first chunk is no video/webm or video/mp4', ...errorBody },
    ...writeErrors,
  },
} as const;

export const roomMobileQrSchema = {
  tags,
  summary: 'The phone’s pairing QR code',
  description:
    'An SVG QR code holding mobile.pairing_url (docs/room.md "The phone"). 404 when the exam has no ' +
    'mobile_cam, 409 once the session is finished.',
  params: tokenParam,
  produces: ['image/svg+xml'],
  response: {
    200: {
      description: 'The QR code',
      content: { 'image/svg+xml': { schema: { type: 'string' } } },
    },
    ...commonErrors,
    409: { description: 'The session is finished: no phone is needed', ...errorBody },
  },
} as const;

export const roomMobilePairingSchema = viewRoute(
  'Replace the phone’s pairing',
  'A new pairing token: the QR code and pairing_url change, and the old phone link stops working at ' +
    'once (during the exam a phone still attached counts as lost). 409 once finished or for an exam ' +
    'without mobile_cam.',
);

export const roomUploadSchema = {
  tags,
  summary: 'Hand in an answer file',
  description: 'Multipart `file`; only while exam_started and when the exam takes uploaded answers.',
  consumes: ['multipart/form-data'],
  params: tokenParam,
  body: filePart,
  response: {
    201: {
      type: 'object',
      properties: {
        upload: {
          type: 'object',
          properties: {
            file_name: { type: 'string' },
            size: { type: 'integer' },
            content_type: { type: 'string' },
          },
        },
      },
    },
    415: { description: 'File type not allowed', ...errorBody },
    ...writeErrors,
  },
} as const;

export const roomEventSchema = {
  tags,
  summary: 'Report an event as an incident',
  description:
    '`type` (focus_lost, fullscreen_left, connection_lost, ...) and `offset_time` (seconds since the start).',
  params: tokenParam,
  body: {
    type: 'object',
    properties: { type: { type: 'string' }, offset_time: { type: 'integer', minimum: 0 } },
    required: ['type'],
  },
  response: {
    201: {
      type: 'object',
      properties: {
        event: {
          type: 'object',
          properties: {
            type: { type: 'string' },
            comment: { type: 'string' },
            offset_time: { type: ['integer', 'null'] },
            created_at: { type: 'string', format: 'date-time' },
          },
        },
      },
    },
    ...writeErrors,
  },
} as const;

export const roomMessagesSchema = {
  tags,
  summary: 'The chat with the proctor',
  description: 'The newest 200 messages of the session, either side’s, oldest first (docs/api-live.md).',
  params: tokenParam,
  response: { 200: liveMessageList, ...commonErrors },
} as const;

export const roomPostMessageSchema = {
  tags,
  summary: 'Write to the proctor',
  description:
    '`body`: plain text, 1 to 2000 characters after trimming. Answers 201 with the message; the proctor ' +
    'wall receives it at once. 409 `This exam has no live proctor` unless the exam is live_proctoring, ' +
    'and for a finished session.',
  params: tokenParam,
  body: { type: 'object', properties: { ...messageBodyInput }, required: ['body'] },
  response: { 201: liveMessageRecord, ...writeErrors },
} as const;

const flagRecord = {
  type: 'object',
  properties: {
    key: { type: 'string', description: 'The room’s id of the episode' },
    type: { type: 'string', enum: FLAG_TYPES },
    confidence: { type: 'number', minimum: 0, maximum: 1, description: 'The highest reported' },
    offset_time: { type: ['integer', 'null'], description: 'Seconds since the start when the episode began' },
    end_offset_time: { type: ['integer', 'null'], description: 'When it ended; null while it lasts' },
    comment: { type: 'string', description: 'The sentence staff read on the incident' },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
} as const;

export const roomFlagSchema = {
  tags,
  summary: 'Report an automated flag’s episode',
  description:
    'One incident per episode, found by `key` (the room’s id of the episode, 1 to 64 of A-Z a-z 0-9 _ . : -). ' +
    'The first report creates the flag (201): `type` (closed list), `confidence` (0 to 1), `offset_time` ' +
    '(seconds since the start; absent: from the server clock), `end_offset_time` (null while it lasts). A ' +
    'later report with the same key (200) may set end_offset_time and raise confidence; its type must match. ' +
    'Only while exam_started, in an exam with automated_flags (409 otherwise).',
  params: tokenParam,
  body: {
    type: 'object',
    properties: {
      key: { type: 'string', minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_.:-]{1,64}$' },
      type: { type: 'string', enum: FLAG_TYPES },
      confidence: { type: 'number', minimum: 0, maximum: 1 },
      offset_time: { type: 'integer', minimum: 0 },
      end_offset_time: { type: ['integer', 'null'], minimum: 0 },
    },
    required: ['key', 'type', 'confidence'],
  },
  response: {
    200: { type: 'object', properties: { flag: flagRecord } },
    201: { type: 'object', properties: { flag: flagRecord } },
    ...writeErrors,
  },
} as const;

export const roomFlagRateSchema = {
  tags,
  summary: 'Report the detection rate the device keeps up',
  description:
    '`hz` (0 to 10; 0: the detectors stopped). Stored on the session; a rate below the one last reported ' +
    '(or below the exam’s detection_hz, the first time) also records an incident of kind ' +
    'flags_rate_lowered, so a reviewer knows the device analysed less often. Only while exam_started, ' +
    'in an exam with automated_flags (409 otherwise).',
  params: tokenParam,
  body: {
    type: 'object',
    properties: { hz: { type: 'number', minimum: 0, maximum: 10 } },
    required: ['hz'],
  },
  response: {
    200: {
      type: 'object',
      properties: {
        flags_rate: {
          type: 'object',
          properties: {
            hz: { type: 'number' },
            lowered: { type: 'boolean', description: 'Recorded as lowered (an incident was added)' },
          },
        },
      },
    },
    ...writeErrors,
  },
} as const;
