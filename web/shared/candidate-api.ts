/**
 * The candidate pages' view of their two APIs, /api/room/{token}/* and /api/mobile/{token}/*, typed
 * from the generated OpenAPI types (api-schema.d.ts, made from /api/openapi.json). The pages send
 * their requests with requestJson (http.ts) and narrow its `json` to these types once the status is
 * known, so a renamed or retyped field in the server's schema fails the type check here, not in a
 * candidate's browser.
 */
import type { paths } from './api-schema';

/** The JSON body of one answer, or never when that answer carries none. */
type JsonOf<Answer> = Answer extends { content: { 'application/json': infer Body } } ? Body : never;

/** The JSON body operation `Method` of `Path` answers with status `Status`. */
type Answer<
  Path extends keyof paths,
  Method extends 'get' | 'put' | 'post',
  Status extends number,
> = paths[Path][Method] extends { responses: infer Answers }
  ? Status extends keyof Answers
    ? JsonOf<Answers[Status]>
    : never
  : never;

/** The JSON body operation `Method` of `Path` takes (null stands for "no body" where the schema allows it). */
type Sent<Path extends keyof paths, Method extends 'put' | 'post'> = paths[Path][Method] extends {
  requestBody?: infer Request;
}
  ? JsonOf<NonNullable<Request>>
  : never;

// ---- Both pages: the candidate's language ----

/**
 * The language part of the room's and the phone's views: the language shown and the ones the exam
 * offers (the language menu), and the institute's own wording per language (locale → key → message).
 */
export type CandidateLanguageFields = Pick<
  Answer<'/api/room/{token}', 'get', 200>,
  'language' | 'message_overrides'
>;

/** The view's `language`: the one shown now, and those the candidate may choose from. */
export type CandidateLanguage = CandidateLanguageFields['language'];

/** PUT /api/room/{token}/language (and the phone's, the same body): the candidate's choice. */
export type LanguageRequest = Sent<'/api/room/{token}/language', 'put'>;

/** The answer to PUT …/language: the view's `language` again. */
export type LanguageAnswer = Answer<'/api/room/{token}/language', 'put', 200>;

// ---- The room: /api/room/{token} ----

/**
 * What the room shows: GET /api/room/{token}. The same body answers PUT checks and POST enter,
 * start, finish, leave, id_card, face_photo and mobile/pairing, so every step refreshes the page
 * from one shape.
 */
export type RoomView = Answer<'/api/room/{token}', 'get', 200>;
export type RoomSession = RoomView['session'];
export type RoomExam = RoomView['exam'];
/** The privacy panel both candidate pages show before a camera is used (docs/room.md "Privacy panel"). */
export type PrivacyFacts = RoomView['privacy'];
export type RoomLive = RoomView['live'];
/** The exam's document while it is started; RoomView.document is null before and after. */
export type RoomDocument = NonNullable<RoomView['document']>;
export type RoomAttachment = RoomDocument['attachments'][number];
/** The phone as a second camera; RoomView.mobile is absent when the exam has no mobile_cam. */
export type RoomMobile = NonNullable<RoomView['mobile']>;
/** The detectors' settings; RoomView.automated_flags is absent when the exam has no automated flags. */
export type AutomatedFlags = NonNullable<RoomView['automated_flags']>;
export type AutomatedFlagSettings = AutomatedFlags['settings'];

/** The state of one setup check (webcam, microphone, speakers, screen share, bandwidth, phone). */
export type CheckState = RoomSession['webcam_check'];
/** The phone's link to the session, as the room and the phone page both see it. */
export type MobileStatus = RoomMobile['status'];

/** PUT /api/room/{token}/checks: the checks' results and the browser's description. */
export type RoomChecksRequest = Sent<'/api/room/{token}/checks', 'put'>;
/** POST /api/room/{token}/start: the terms accepted, when the exam has terms. */
export type RoomStartRequest = Sent<'/api/room/{token}/start', 'post'>;

/** POST /api/room/{token}/events: one event in the session's log. */
export type RoomEventRequest = Sent<'/api/room/{token}/events', 'post'>;
export type RoomEventAnswer = Answer<'/api/room/{token}/events', 'post', 201>;

/** POST /api/room/{token}/flags: a flag opened (201) or extended (200); both answer the same shape. */
export type RoomFlagRequest = Sent<'/api/room/{token}/flags', 'post'>;
export type RoomFlagAnswer = Answer<'/api/room/{token}/flags', 'post', 201>;
export type FlagType = RoomFlagRequest['type'];
/** POST /api/room/{token}/flags/rate: the detection rate the device manages. */
export type FlagRateRequest = Sent<'/api/room/{token}/flags/rate', 'post'>;
export type FlagRateAnswer = Answer<'/api/room/{token}/flags/rate', 'post', 200>;

/** GET /api/room/{token}/messages: the conversation with the proctors. */
export type RoomMessages = Answer<'/api/room/{token}/messages', 'get', 200>;
/** One message; POST /api/room/{token}/messages answers the message it stored (201). */
export type RoomMessage = Answer<'/api/room/{token}/messages', 'post', 201>;
export type RoomMessageRequest = Sent<'/api/room/{token}/messages', 'post'>;

/** POST /api/room/{token}/recordings (multipart): the sequence the server expects next (201 stored, 200 a repeat). */
export type RecordingAnswer = Answer<'/api/room/{token}/recordings', 'post', 201>;
/** The `source` field of a room recording chunk. */
export type RecordingSource = NonNullable<
  paths['/api/room/{token}/recordings']['post']['requestBody']['content']['multipart/form-data']['source']
>;
/** POST /api/room/{token}/uploads (multipart): the answer file stored. */
export type RoomUploadAnswer = Answer<'/api/room/{token}/uploads', 'post', 201>;

// ---- The phone: /api/mobile/{token} ----

/**
 * What the phone page shows: GET /api/mobile/{token}. The same body answers POST hello, heartbeat,
 * check and leave.
 */
export type PhoneView = Answer<'/api/mobile/{token}', 'get', 200>;
export type PhoneSession = PhoneView['session'];
export type PhoneExam = PhoneView['exam'];
export type PhoneMobile = PhoneView['mobile'];
/** The session's status as the phone sees it (the room's is a plain string). */
export type PhoneSessionStatus = PhoneSession['status'];

/** POST /api/mobile/{token}/hello: the phone's browser and system; null sends nothing. */
export type PhoneHelloRequest = Sent<'/api/mobile/{token}/hello', 'post'>;
/** POST /api/mobile/{token}/heartbeat: battery, visibility, streaming; null sends nothing. */
export type PhoneHeartbeatRequest = Sent<'/api/mobile/{token}/heartbeat', 'post'>;
/** POST /api/mobile/{token}/recordings (multipart): the sequence the server expects next. */
export type PhoneRecordingAnswer = Answer<'/api/mobile/{token}/recordings', 'post', 201>;

// ---- Refusals ----

/** The body of a refused call on either API (4xx, 503): the sentence, and per-field reasons on a 400 or 413. */
export interface ApiErrorBody {
  readonly error: string;
  readonly errors?: Readonly<Record<string, readonly string[]>>;
}
