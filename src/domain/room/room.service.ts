import { VISITOR_EXTERNAL_ID } from '../practice/practice.repository.ts';
import type { Db } from '../../db/database.ts';
import type { JobQueue } from '../ports/jobs.ts';
import type { LiveEvents } from '../ports/live-events.ts';
import { MOBILE_CHECK_BY_PHONE } from '../mobile/mobile.ts';
import type { MobileService } from '../mobile/mobile.service.ts';
import { ATTACHMENT_TYPES } from '../../storage/content-type.ts';
import type { Storage } from '../../storage/storage.ts';
import type { Upload } from '../../storage/upload.ts';
import { ATTACHMENT_URL_SECONDS } from '../attachments/attachment.ts';
import type { Clock } from '../clock.ts';
import { findDocumentOfExam } from '../documents/documents.repository.ts';
import { DomainError, Invalid, NotFoundMessage, ParamMissing, StateConflictMessage } from '../errors.ts';
import type { Exam } from '../exams/exam.ts';
import { findExam, instituteLanguage } from '../exams/exams.repository.ts';
import { findInstitute } from '../institutes/institutes.repository.ts';
import { effectiveRetention } from '../retention/retention.ts';
import { findRetentionSettings } from '../retention/retention.repository.ts';
import { pageOverrides } from '../message-overrides/message-overrides.service.ts';
import type { FilesService } from '../files/files.service.ts';
import { optionalString, type Params } from '../input.ts';
import { createLiveChat } from '../live/live-chat.ts';
import { isClockPaused } from '../live/live-clock.ts';
import type { LiveMessage } from '../live/live-message.ts';
import type { PhotoKind, PhotosService } from '../student-sessions/photos.service.ts';
import { queueRecordingFinalisation } from '../recordings/recordings.service.ts';
import { move, type SessionStatus } from '../student-sessions/status.ts';
import { CHECK_FIELDS } from '../student-sessions/student-session.ts';
import {
  findStudentSessionByToken,
  findStudentSessionWithoutIncidents,
} from '../student-sessions/student-sessions.repository.ts';
import { emitStudentSessionFinished } from '../webhooks/emit.ts';
import { hasStartAssessment } from '../lti/lti-launch.repository.ts';
import {
  findEpisode,
  findFlagsRate,
  insertEpisode,
  recordFlagsRate,
  updateEpisode,
} from '../flags/flags.repository.ts';
import {
  isRateLowered,
  rateLoweredComment,
  readFlagRate,
  readFlagReport,
  type StoredFlag,
} from '../flags/flags.ts';
import { effectiveFlagSettings } from '../flags/settings.ts';
import {
  attachmentsOfDocument,
  findTimeUpCandidates,
  findSessionUpload,
  insertRoomIncident,
  insertSessionFile,
  moveRoomSession,
  nextSequence,
  type RoomMove,
  sessionFileCounts,
  updateChosenLanguage,
  updateRoomChecks,
} from './room.repository.ts';
import { type CandidatePage, languageFacts, readLanguageChoice } from './language.ts';
import { type ChunkBody, createRecordingIntake, type RecordingAck } from './recordings.ts';
import { endBreak, endBreakForFinish, onBreak, settleBreak, startBreak } from './breaks.ts';
import {
  admissionRequired,
  AWAITING_ADMISSION,
  awaitingAdmission,
  contentWithLinks,
  assertTermsAccepted,
  deadlineOf,
  END_REASON_FINISHED,
  END_REASON_TIME_UP,
  examTerms,
  instructionsHtml,
  isInformationalRoomEvent,
  missingChecks,
  MOBILE_RECORDING_KIND,
  NO_ROOM,
  readCheckChanges,
  readRoomEvent,
  RECORDING_KIND,
  requiredChecks,
  ROOM_EVENTS,
  type RoomAttachment,
  type RoomDocument,
  type RoomEventType,
  type RoomSession,
  type RoomView,
  SCREEN_RECORDING_KIND,
  SESSION_FINISHED,
  type SessionUpload,
  termsDigest,
  UPLOAD_KIND,
} from './room.ts';
import { createMomentCache } from './moment-cache.ts';
import { acceptanceRecord, PRIVACY_VERSION, privacyNotice, type PrivacyNotice } from './privacy.ts';

/** A status move that keeps losing its race this many times is given up (never in practice). */
const MAX_ROUNDS = 5;
/** Past this many remembered tokens, the memory of which session each names starts again. */
const TOKENS_REMEMBERED = 50_000;

/** A recorded room event, as answered. */
export interface RecordedEvent {
  readonly type: RoomEventType;
  readonly comment: string;
  readonly offsetTime: number | null;
  readonly createdAt: number;
}

/** A flag report's outcome: the episode as stored, and whether this report created it. */
export interface RecordedFlag {
  readonly flag: StoredFlag;
  readonly created: boolean;
}

/** A rate report's outcome: the rate stored, and whether it was recorded as lowered. */
export interface RecordedFlagsRate {
  readonly hz: number;
  readonly lowered: boolean;
}

/** The 409 for a flag or rate report in an exam that does not run the automated flags. */
export const FLAGS_OFF = 'This exam does not use automated flags';

export type { ChunkBody, ChunkField, ChunkFile, RecordingAck } from './recordings.ts';

/**
 * The candidate exam room (contract §11). Every call names the session by its room token, the
 * only credential, and first finishes a started session whose time is up (end_reason `time_up`).
 * Every call throws NotFoundMessage (NO_ROOM) for a token that names no session (or a session of a
 * deleted exam); every write throws StateConflict / StateConflictMessage (409) on a finished session.
 */
/** How many sessions the time-up sweep reads per query; it pages on until none is left. */
export const TIME_UP_BATCH = 200;

export interface RoomService {
  /** What the room shows. Returns the view. */
  view(token: string): Promise<RoomView>;
  /**
   * The name of the session's exam, for the page's title: no document, addresses or counts are
   * read. Returns it.
   */
  examName(token: string): Promise<string>;
  /** The exam's name and the language facts for the room's page (no document or counts read). */
  page(token: string): Promise<CandidatePage>;
  /**
   * Finishes every started session whose deadline has passed though nobody reopened it, exactly as opening the room would (end_reason `time_up`, end and recording end at the
   * deadline, finalisation and the webhook queued with the move): the worker calls it on a timer
   * (docs/jobs.md). Returns how many sessions were looked at and how many of them are now finished.
   */
  finishTimedOut(): Promise<{ checked: number; finished: number }>;
  /**
   * Records requirement checks and client details (readCheckChanges); a `registered` or
   * `email_sent` session whose required checks have all succeeded moves to `after_check_req`.
   * Returns the view. Throws Invalid naming a bad field.
   */
  updateChecks(token: string, params: Params): Promise<RoomView>;
  /**
   * Keeps the upload as the ID-card or face photo (images only, by content). Returns the view.
   * Throws ParamMissing (`file`), UnsupportedMediaType.
   */
  attachPhoto(token: string, kind: PhotoKind, upload: Upload | undefined): Promise<RoomView>;
  /**
   * Moves to `in_setup` (entered_room), except a candidate already admitted by a proctor
   * (admissionRequired), who stays in `exam_not_started`. Returns the view; throws StateConflict for
   * a forbidden move.
   */
  enter(token: string): Promise<RoomView>;
  /**
   * Moves to `exam_not_started`. Returns the view; throws StateConflict for a forbidden move,
   * StateConflictMessage (AWAITING_ADMISSION) in an exam whose proctor admits each candidate after a
   * live ID check (admissionRequired): there only the proctor's admission leaves the setup.
   */
  leave(token: string): Promise<RoomView>;
  /**
   * Moves to `exam_started` (start_time and recording_started_at now). Throws StateConflict for a
   * forbidden move, StateConflictMessage when the exam is not open, before the session's open_time
   * or the exam's start_time, at or after the exam's end_time, before a proctor admitted the
   * candidate where admissionRequired (AWAITING_ADMISSION: only from `exam_not_started`), or when a
   * required check has not succeeded and the session does not skip requirements. In an exam with
   * terms (examTerms), `params` must accept them (`terms_accepted` true): the acceptance is stored
   * with the start, its time and the SHA-256 of the terms as read in the same round. Returns the
   * view. Throws ParamMissing (`terms_accepted`) or Invalid when the terms are not accepted.
   */
  start(token: string, params: Params): Promise<RoomView>;
  /**
   * Moves to `exam_finished` (end_time and recording_ended_at now, end_reason `finished`; a
   * running pause of the clock ends) and tells the live sockets (control `ended`). Returns the view;
   * throws StateConflict for a forbidden move.
   */
  finish(token: string): Promise<RoomView>;
  /**
   * Remembers the candidate's pick in the room's language menu (`language`, one the exam offers;
   * `pseudo` lets `en-XA` be picked) for the session, whatever its state: a finished candidate still
   * reads the closing page. Returns the view. Throws Invalid naming `language` (readLanguageChoice).
   */
  chooseLanguage(token: string, params: Params, options: { readonly pseudo: boolean }): Promise<RoomView>;
  /**
   * Appends one recording chunk at `sequence` from `source` (body fields, over `params`), the file
   * part `file` streamed straight into the storage as the body arrives; the token and the session's
   * state are judged before the body is read. The first chunk must be video/webm or video/mp4 by
   * content; later ones continue its stream and are taken as they are. Every chunk is stored as
   * `<source>-<sequence>.<webm|mp4>`. A sequence already stored is acknowledged without storing
   * (stored false). Returns the acknowledgement once the chunk's rows are committed. Throws
   * StateConflictMessage unless `exam_started` or for a sequence past the next expected one,
   * ParamMissing (`sequence`, `file`), Invalid (`sequence`, `source`), PayloadTooLarge above
   * RECORDING_CHUNK_MAX_BYTES, UnsupportedMediaType for a first chunk that is no video, and what the
   * body throws (MalformedBody, an aborted request: nothing is kept).
   */
  appendRecording(token: string, params: Params, body: ChunkBody): Promise<RecordingAck>;
  /**
   * Keeps an answer file (ATTACHMENT_TYPES by content) as the session's next upload. Returns it.
   * Throws Invalid (`file`) when the exam takes no uploaded answers, StateConflictMessage unless
   * `exam_started`, ParamMissing (`file`), UnsupportedMediaType.
   */
  addUpload(token: string, upload: Upload | undefined): Promise<SessionUpload>;
  /**
   * Records an event the room saw as an incident (kind = type, comment a sentence). Without
   * `offset_time`, a started session's offset is taken from the server clock. Returns it. Throws
   * ParamMissing or Invalid naming the field.
   */
  recordEvent(token: string, params: Params): Promise<RecordedEvent>;
  /**
   * Records one report of an automated flag's episode (docs/automated-flags.md): the first report of
   * a `key` creates the incident (kind `flag`, source `automatic`, the type's sentence); a later one
   * sets its end and raises its confidence. Without `offset_time`, the offset comes from the server
   * clock. Returns the flag and whether it was created. Throws StateConflictMessage (FLAGS_OFF, or
   * unless `exam_started`), ParamMissing or Invalid naming the field (a later report of another
   * type: `type`; an end before the start: `end_offset_time`).
   */
  recordFlag(token: string, params: Params): Promise<RecordedFlag>;
  /**
   * Stores the detection rate (`hz`) the room keeps up; a rate lower than before (the first time:
   * than the exam's detection_hz) also records a `flags_rate_lowered` incident. Returns the rate and
   * whether it was lowered. Throws StateConflictMessage (FLAGS_OFF, or unless `exam_started`),
   * ParamMissing or Invalid (`hz`).
   */
  reportFlagsRate(token: string, params: Params): Promise<RecordedFlagsRate>;
  /** The chat with the proctor: the newest 200 messages, oldest first (docs/api-live.md). */
  messages(token: string): Promise<LiveMessage[]>;
  /**
   * Writes a message to the proctors (live-chat.ts: 1 to 2000 characters after trimming; the live
   * sockets are told). Returns it. Throws StateConflictMessage for an exam that is not
   * `live_proctoring` (NO_LIVE_PROCTOR) or a finished session, ParamMissing or Invalid on `body`.
   */
  postMessage(token: string, params: Params): Promise<LiveMessage>;
  /**
   * Starts one of the candidate's rest breaks (breaks.ts; docs/accommodations.md): the exam clock
   * stops, a `break_started` incident is written. Returns the view. Throws StateConflictMessage
   * (409) when the session is not started or is finished, has no breaks (left), already runs one,
   * or the proctor holds the clock.
   */
  startBreak(token: string): Promise<RoomView>;
  /**
   * Ends the running rest break (`break_ended` incident): the clock runs again. Returns the view.
   * Throws StateConflictMessage (409) when no break runs (it may have ended itself at its
   * allowance) or the session is not started.
   */
  endBreak(token: string): Promise<RoomView>;
}

interface Opened {
  readonly session: RoomSession;
  readonly exam: Exam;
}

/** Whole seconds since the session started (the offset of something happening now), or null before. */
function elapsedSeconds(session: RoomSession, now: number): number | null {
  return session.startTime === null ? null : Math.max(0, Math.floor((now - session.startTime) / 1000));
}

function iso(millis: number): string {
  return new Date(millis).toISOString();
}

/**
 * Builds the room's use cases over the database, the clock, the files service, the photos service,
 * the storage (recording chunks go straight into it) and the live event bus (chat messages, and the
 * end of a session, for the live sockets). Returns the service; building it throws nothing.
 */
export function createRoomService(deps: {
  db: Db;
  clock: Clock;
  files: FilesService;
  photos: Pick<PhotosService, 'attachPhoto'>;
  storage: Storage;
  liveEvents: LiveEvents;
  /** Where the finished session's webhook and recording finalisation are queued. */
  jobs: JobQueue;
  /** The phone of `mobile_cam` exams, as the view shows it. */
  mobile: Pick<MobileService, 'roomMobile'>;
}): RoomService {
  const { db, clock, files, photos, storage, liveEvents, jobs, mobile } = deps;
  const recordings = createRecordingIntake({ db, clock, storage });
  const chat = createLiveChat({ db, clock, liveEvents });

  /**
   * Which session each token named when it was last looked up: a token is given once and never
   * changes, so every poll, event and chunk need not ask again. Only a hint: the session read by
   * its id must still carry the token (a deleted session's id may be given to another).
   */
  const sessionIds = new Map<string, number>();
  /** The exam, its instructions and its institute's settings, kept for a moment (moment-cache.ts). */
  const moment = createMomentCache(db);

  /**
   * moveRoomSession, and for a move to `exam_finished` in one transaction with the
   * `student_session.finished` webhook (queued only when the move happened), then the live sockets
   * told (control `ended`). Returns whether it moved.
   */
  async function moveSession(session: RoomSession, change: RoomMove): Promise<boolean> {
    const { id } = session;
    if (change.to !== 'exam_finished') return moveRoomSession(db, id, change);
    // A break still running when the exam finishes ends with it (open() settled one past its allowance).
    if (onBreak(session)) await endBreakForFinish(db, session, change.endTime ?? change.now);
    const moved = await db.transaction().execute(async (trx) => {
      const done = await moveRoomSession(trx, id, change);
      if (done) await emitStudentSessionFinished(jobs, trx, id, change.now);
      if (done) await queueRecordingFinalisation(trx, { clock, jobs }, id);
      return done;
    });
    if (moved) liveEvents.emit({ kind: 'control', examId: session.examId, sessionId: id, action: 'ended' });
    return moved;
  }

  async function reread(id: number): Promise<RoomSession> {
    const session = await findStudentSessionWithoutIncidents(db, id);
    if (session === undefined) throw new NotFoundMessage(NO_ROOM);
    return session;
  }

  /** The session a token names. Throws NotFoundMessage (NO_ROOM) when there is none. */
  async function sessionOfToken(token: string): Promise<RoomSession> {
    const known = sessionIds.get(token);
    if (known !== undefined) {
      const session = await findStudentSessionWithoutIncidents(db, known);
      if (session?.token === token) return session;
      sessionIds.delete(token);
    }
    const session = await findStudentSessionByToken(db, token);
    if (session === undefined) throw new NotFoundMessage(NO_ROOM);
    if (sessionIds.size >= TOKENS_REMEMBERED) sessionIds.clear();
    sessionIds.set(token, session.id);
    return session;
  }

  /**
   * Throws NotFoundMessage (NO_ROOM) for a demo exam's throwaway practice visitor (docs/practice.md):
   * its token serves the practice run only, never a seat in the exam.
   */
  function assertNotVisitor(session: RoomSession): void {
    if (session.externalId === VISITOR_EXTERNAL_ID) throw new NotFoundMessage(NO_ROOM);
  }

  /** The session and exam of a token, a started session past its deadline finished first. */
  async function open(token: string): Promise<Opened> {
    const read = await sessionOfToken(token);
    const exam = await moment.get(`exam:${read.examId}`, () => findExam(db, read.examId));
    if (exam === undefined || exam.status === 'deleted') throw new NotFoundMessage(NO_ROOM);
    // A rest break past its allowance ended itself then: written now, dated at the limit (breaks.ts).
    const session = (await settleBreak(db, read, clock.now())) ? await reread(read.id) : read;
    const deadline = deadlineOf(session, exam, clock.now());
    if (session.status !== 'exam_started') return { session, exam };
    // A paused clock's deadline moves on with the time, so a paused session never runs out.
    if (deadline === null || clock.now() < deadline || isClockPaused(session)) {
      // A page polling its view keeps its session remembered for the recording chunks.
      recordings.remember(token, { id: session.id, deadline, instituteId: exam.instituteId });
      return { session, exam };
    }
    // Ended when the time ran out, not when someone noticed. A racing request may have ended it first.
    await moveSession(session, {
      from: 'exam_started',
      to: move('exam_started', 'exam_finished'),
      now: clock.now(),
      inSetup: false,
      endTime: deadline,
      recordingEndedAt: deadline,
      endReason: END_REASON_TIME_UP,
    });
    return { session: await reread(session.id), exam };
  }

  /** As open, refusing a finished session (every write but the status moves, which the machine judges). */
  async function openForWrite(token: string): Promise<Opened> {
    const opened = await open(token);
    if (opened.session.status === 'exam_finished') throw new StateConflictMessage(SESSION_FINISHED);
    return opened;
  }

  async function documentOf(exam: Exam): Promise<RoomDocument | null> {
    const document = await findDocumentOfExam(db, exam.id);
    if (document === undefined) return null;
    const attachments: RoomAttachment[] = await files.withAddresses(
      await attachmentsOfDocument(db, document.id),
      ATTACHMENT_URL_SECONDS,
    );
    return {
      document,
      attachments,
      contentWithLinks: contentWithLinks(document.examContent, attachments),
      contentHtml: instructionsHtml(document.examContent, attachments),
    };
  }

  /** The institute's panel settings and its retention per kind; NotFoundMessage when it is gone. */
  async function privacySettings(instituteId: number) {
    const { institute, retention } = await moment.get(`privacy:${instituteId}`, async () => ({
      institute: await findInstitute(db, instituteId),
      retention: await findRetentionSettings(db, instituteId),
    }));
    if (institute === undefined || retention === undefined) throw new NotFoundMessage(NO_ROOM);
    return { institute, retention: effectiveRetention(retention.settings, retention.sessionPeriod) };
  }

  /** The institute's default language for candidates (kept for a moment, as the exam is). */
  function languageOf(instituteId: number) {
    return moment.get(`language:${instituteId}`, () => instituteLanguage(db, instituteId));
  }

  /** The privacy panel of the candidate's exam, from the institute's settings as they stand now. */
  async function privacyOf(session: RoomSession, exam: Exam): Promise<PrivacyNotice> {
    const { institute, retention } = await privacySettings(exam.instituteId);
    return privacyNotice(exam, session.accommodations, institute, retention, examTerms(exam));
  }

  async function viewOf({ session, exam }: Opened): Promise<RoomView> {
    const counts = await sessionFileCounts(db, session.id);
    const mobileChunks = counts.get(MOBILE_RECORDING_KIND) ?? 0;
    const phone = await mobile.roomMobile(session, exam, mobileChunks);
    const now = clock.now();
    return {
      session,
      exam,
      // Hidden during a rest break: the clock stands still, so the candidate may not work meanwhile.
      document:
        session.status === 'exam_started' && !onBreak(session)
          ? await moment.get(`document:${exam.id}`, () => documentOf(exam))
          : null,
      uploadsCount: counts.get(UPLOAD_KIND) ?? 0,
      recordingChunks: {
        webcam: counts.get(RECORDING_KIND) ?? 0,
        screen: counts.get(SCREEN_RECORDING_KIND) ?? 0,
        mobile: mobileChunks,
      },
      mobile: phone,
      requiredChecks: requiredChecks(exam, session.accommodations),
      deadline: deadlineOf(session, exam, now),
      now,
      live: {
        enabled: exam.type === 'live_proctoring',
        awaitingAdmission: awaitingAdmission(session, exam),
        clockPaused: isClockPaused(session),
      },
      ltiStartAssessment: await hasStartAssessment(db, session.id),
      languageFacts: languageFacts(session, exam, (await languageOf(exam.instituteId)) ?? null),
      messageOverrides: await moment.get(`overrides:${exam.instituteId}`, () =>
        pageOverrides(db, exam.instituteId),
      ),
      privacy: await privacyOf(session, exam),
    };
  }

  /**
   * Moves the session to `to` through the status machine, with the fields `fields` gives for the
   * current session; `guard` may refuse first. Conditional on the status read, retried if another
   * request moved the session meanwhile. Returns the view as saved.
   */
  async function transition(
    token: string,
    to: SessionStatus,
    fields: (now: number, opened: Opened) => Omit<RoomMove, 'from' | 'to' | 'now'>,
    guard?: (opened: Opened, now: number) => void,
  ): Promise<RoomView> {
    for (let round = 0; round < MAX_ROUNDS; round += 1) {
      const opened = await open(token);
      const from = opened.session.status;
      move(from, to);
      const now = clock.now();
      guard?.(opened, now);
      if (await moveSession(opened.session, { from, to, now, ...fields(now, opened) })) {
        recordings.forget(token);
        return viewOf({ session: await reread(opened.session.id), exam: opened.exam });
      }
    }
    throw new Error(`the room session kept changing status; not moved to ${to}`);
  }

  function assertCanStart({ session, exam }: Opened, now: number): void {
    if (exam.status !== 'open') {
      throw new StateConflictMessage(`The exam is not open (its status is ${exam.status})`);
    }
    const opensAt = Math.max(
      session.openTime ?? Number.MIN_SAFE_INTEGER,
      exam.startTime ?? Number.MIN_SAFE_INTEGER,
    );
    if (now < opensAt) throw new StateConflictMessage(`The exam cannot be started before ${iso(opensAt)}`);
    if (exam.endTime !== null && now >= exam.endTime) {
      throw new StateConflictMessage(`The exam closed at ${iso(exam.endTime)}`);
    }
    // Only a proctor's admission moves such a candidate to exam_not_started, where it may start.
    if (admissionRequired(exam) && session.status !== 'exam_not_started') {
      throw new StateConflictMessage(AWAITING_ADMISSION);
    }
    if (session.skipRequirements) return;
    const missing = missingChecks(session, exam);
    if (missing.length === 0) return;
    throw new StateConflictMessage(
      `The requirement checks have not all succeeded: ${missing.map((field) => CHECK_FIELDS[field]).join(', ')}`,
    );
  }

  function assertStarted(session: RoomSession, what: string): void {
    if (session.status === 'exam_started') return;
    throw new StateConflictMessage(
      `${what} are accepted only while the exam is started (the session is ${session.status})`,
    );
  }

  return {
    async view(token) {
      return viewOf(await open(token));
    },

    async finishTimedOut() {
      const now = clock.now();
      let checked = 0;
      let finished = 0;
      // Pages by id, so sessions whose time is not up after all never hold back the ones after them.
      for (let afterId = 0; ;) {
        const page = await findTimeUpCandidates(db, now, afterId, TIME_UP_BATCH);
        for (const { id, token } of page) {
          afterId = id;
          checked += 1;
          try {
            // open() is the room's one rule for a deadline (pauses included) and finishes the session.
            if ((await open(token)).session.status === 'exam_finished') finished += 1;
          } catch (error) {
            // Deleted meanwhile (session or exam): nothing left to finish.
            if (!(error instanceof DomainError)) throw error;
          }
        }
        if (page.length < TIME_UP_BATCH) return { checked, finished };
      }
    },

    async examName(token) {
      return (await open(token)).exam.name;
    },

    async page(token) {
      const { session, exam } = await open(token);
      return {
        examName: exam.name,
        languageFacts: languageFacts(session, exam, (await languageOf(exam.instituteId)) ?? null),
      };
    },

    async chooseLanguage(token, params, options) {
      const opened = await open(token);
      const facts = languageFacts(
        opened.session,
        opened.exam,
        (await languageOf(opened.exam.instituteId)) ?? null,
      );
      const language = readLanguageChoice(params, facts, options.pseudo);
      await updateChosenLanguage(db, opened.session.id, language, clock.now());
      return viewOf({ ...opened, session: await reread(opened.session.id) });
    },

    async updateChecks(token, params) {
      const { session, exam } = await openForWrite(token);
      const changes = readCheckChanges(params);
      // The phone's check passes only when its frames reach the server (mobile.service.ts check).
      if (exam.mobileCam && changes.checks.mobileCheck === 'succeeded') {
        throw new Invalid('mobile_check', MOBILE_CHECK_BY_PHONE);
      }
      await updateRoomChecks(db, session.id, changes, clock.now());
      const saved = await reread(session.id);
      const checkable = saved.status === 'registered' || saved.status === 'email_sent';
      if (checkable && missingChecks(saved, exam).length === 0) {
        // Conditional on the status read: a racing request that moved it first wins.
        await moveRoomSession(db, saved.id, {
          from: saved.status,
          to: move(saved.status, 'after_check_req'),
          now: clock.now(),
        });
      }
      return viewOf({ session: await reread(session.id), exam });
    },

    async attachPhoto(token, kind, upload) {
      const { session, exam } = await openForWrite(token);
      if (upload === undefined || upload.size === 0) throw new ParamMissing('file');
      const saved = await photos.attachPhoto(session.id, kind, upload);
      return viewOf({ session: saved, exam });
    },

    async enter(token) {
      // A candidate a proctor has already admitted (exam_not_started) stays admitted when the page
      // is reloaded: stepping back into the setup would make the proctor check the ID again.
      const opened = await open(token);
      assertNotVisitor(opened.session);
      if (admissionRequired(opened.exam) && opened.session.status === 'exam_not_started') {
        return viewOf(opened);
      }
      return transition(token, 'in_setup', () => ({ enteredRoom: true, inSetup: true }));
    },

    leave: (token) =>
      transition(
        token,
        'exam_not_started',
        () => ({ inSetup: false }),
        ({ exam }) => {
          if (admissionRequired(exam)) throw new StateConflictMessage(AWAITING_ADMISSION);
        },
      ),

    async start(token, params) {
      // The panel the candidate accepted (docs/room.md "Privacy panel"); absent from older pages.
      const accepted = optionalString(params, PRIVACY_VERSION) ?? undefined;
      const first = await open(token);
      const { institute, retention } = await privacySettings(first.exam.instituteId);
      const noticeOf = ({ session, exam }: Opened) =>
        privacyNotice(exam, session.accommodations, institute, retention, examTerms(exam));
      return transition(
        token,
        'exam_started',
        (now, opened) => {
          const terms = examTerms(opened.exam);
          // The text hashed is the one the guard judged acceptance against, read in this round.
          const termsSha256 = terms === null ? null : termsDigest(terms);
          const record =
            accepted === undefined ? termsSha256 : acceptanceRecord(termsSha256, noticeOf(opened).version);
          return {
            enteredRoom: true,
            inSetup: false,
            startTime: now,
            recordingStartedAt: now,
            // terms_accepted_at stays null for an exam without terms (the V3 record's contract): there
            // the panel's acceptance is the start itself, and start_time its time.
            ...(record === null ? {} : { termsSha256: record }),
            ...(terms === null ? {} : { termsAcceptedAt: now }),
          };
        },
        (opened, now) => {
          assertNotVisitor(opened.session);
          assertCanStart(opened, now);
          if (examTerms(opened.exam) !== null) assertTermsAccepted(params);
          // A panel changed since the page showed it (settings, terms): the candidate reads it again.
          if (accepted !== undefined && accepted !== noticeOf(opened).version) {
            throw new Invalid(PRIVACY_VERSION, 'is not the privacy notice in force; read it again');
          }
        },
      );
    },

    finish: (token) =>
      transition(token, 'exam_finished', (now) => ({
        inSetup: false,
        endTime: now,
        recordingEndedAt: now,
        endReason: END_REASON_FINISHED,
      })),

    appendRecording(token, params, body) {
      return recordings.append(token, params, body, async (asked) => {
        const { session, exam } = await openForWrite(asked);
        assertStarted(session, 'Recording chunks');
        return {
          id: session.id,
          deadline: deadlineOf(session, exam, clock.now()),
          instituteId: exam.instituteId,
        };
      });
    },

    async addUpload(token, upload) {
      const { session, exam } = await openForWrite(token);
      if (!exam.uploadAnswers)
        throw new Invalid('file', 'is not accepted: this exam takes no uploaded answers');
      assertStarted(session, 'Answer files');
      if (upload === undefined || upload.size === 0) throw new ParamMissing('file');
      const file = await files.keep(upload, ATTACHMENT_TYPES, exam.instituteId);
      for (let round = 0; round < MAX_ROUNDS; round += 1) {
        const sequence = await nextSequence(db, session.id, UPLOAD_KIND);
        const now = clock.now();
        if (
          await insertSessionFile(db, {
            sessionId: session.id,
            kind: UPLOAD_KIND,
            fileId: file.id,
            sequence,
            now,
          })
        ) {
          const saved = await findSessionUpload(db, session.id, UPLOAD_KIND, sequence);
          if (saved === undefined) throw new NotFoundMessage(NO_ROOM);
          return saved;
        }
      }
      await files.remove([file.id]);
      throw new Error(`uploads of student session ${session.id} kept racing; not kept`);
    },

    async recordEvent(token, params) {
      const { session } = await openForWrite(token);
      const event = readRoomEvent(params);
      const now = clock.now();
      const offsetTime =
        event.offsetTime ??
        (session.startTime === null ? null : Math.max(0, Math.floor((now - session.startTime) / 1000)));
      const comment = ROOM_EVENTS[event.type];
      const informational = isInformationalRoomEvent(event.type, session.accommodations);
      await insertRoomIncident(db, session.id, { kind: event.type, comment, offsetTime, informational }, now);
      return { type: event.type, comment, offsetTime, createdAt: now };
    },

    async recordFlag(token, params) {
      const { session, exam } = await openForWrite(token);
      if (!exam.automatedFlags) throw new StateConflictMessage(FLAGS_OFF);
      assertStarted(session, 'Automated flags');
      const report = readFlagReport(params);
      const now = clock.now();
      const offsetTime = report.offsetTime ?? elapsedSeconds(session, now);
      const known = await findEpisode(db, session.id, report.key);
      if (known === undefined) {
        if (offsetTime !== null && report.endOffsetTime !== null && report.endOffsetTime < offsetTime) {
          throw new Invalid('end_offset_time', 'must not be before offset_time');
        }
        const created = await insertEpisode(db, session.id, { ...report, offsetTime }, now);
        if (created !== undefined) return { flag: created, created: true };
      }
      // A later report, or one that lost the race to create the episode: it updates.
      const episode = known ?? (await findEpisode(db, session.id, report.key));
      if (episode === undefined) throw new Error(`episode ${report.key} vanished while it was reported`);
      if (episode.type !== report.type) {
        throw new Invalid('type', `does not match the episode's type (${episode.type})`);
      }
      const start = episode.offsetTime;
      if (start !== null && report.endOffsetTime !== null && report.endOffsetTime < start) {
        throw new Invalid('end_offset_time', 'must not be before offset_time');
      }
      const change = { confidence: report.confidence, endOffsetTime: report.endOffsetTime };
      const saved = await updateEpisode(db, session.id, report.key, change, now);
      if (saved === undefined) throw new Error(`episode ${report.key} vanished while it was reported`);
      return { flag: saved, created: false };
    },

    async reportFlagsRate(token, params) {
      const { session, exam } = await openForWrite(token);
      if (!exam.automatedFlags) throw new StateConflictMessage(FLAGS_OFF);
      assertStarted(session, 'Detection rates');
      const hz = readFlagRate(params);
      const now = clock.now();
      const previous = await findFlagsRate(db, session.id);
      const lowered = isRateLowered(hz, previous, effectiveFlagSettings(exam.flagSettings).detection_hz);
      const note = lowered
        ? { comment: rateLoweredComment(hz), offsetTime: elapsedSeconds(session, now) }
        : null;
      await recordFlagsRate(db, session.id, { hz, lowered: note }, now);
      return { hz, lowered };
    },

    async messages(token) {
      const { session } = await open(token);
      return chat.list(session.id);
    },

    async postMessage(token, params) {
      const { session, exam } = await open(token);
      return chat.post(session, exam, { sender: 'candidate', userId: null }, params);
    },

    async startBreak(token) {
      const { session, exam } = await openForWrite(token);
      await startBreak(db, session, clock.now());
      const saved = await reread(session.id);
      // The deadline now moves with the break: the chunks' memory takes the new one.
      recordings.remember(token, {
        id: saved.id,
        deadline: deadlineOf(saved, exam, clock.now()),
        instituteId: exam.instituteId,
      });
      return viewOf({ session: saved, exam });
    },

    async endBreak(token) {
      const { session, exam } = await openForWrite(token);
      await endBreak(db, session, clock.now());
      const saved = await reread(session.id);
      recordings.remember(token, {
        id: saved.id,
        deadline: deadlineOf(saved, exam, clock.now()),
        instituteId: exam.instituteId,
      });
      return viewOf({ session: saved, exam });
    },
  };
}
