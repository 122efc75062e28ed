import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import type { Db } from '../../db/database.ts';
import { sniffContentType } from '../../storage/content-type.ts';
import type { Storage } from '../../storage/storage.ts';
import type { Upload } from '../../storage/upload.ts';
import type { Clock } from '../clock.ts';
import {
  Invalid,
  NotFoundMessage,
  ParamMissing,
  StateConflictMessage,
  UnsupportedMediaType,
} from '../errors.ts';
import type { Exam } from '../exams/exam.ts';
import { findExam, instituteLanguage } from '../exams/exams.repository.ts';
import { pageOverrides } from '../message-overrides/message-overrides.service.ts';
import { optionalBoolean, optionalString, type Params } from '../input.ts';
import { isClockPaused } from '../live/live-clock.ts';
import { type ChunkBody, createRecordingIntake, type RecordingAck } from '../room/recordings.ts';
import { settleBreak } from '../room/breaks.ts';
import {
  type CandidatePage,
  languageFacts,
  type LanguageFacts,
  type PageOverrides,
  readLanguageChoice,
} from '../room/language.ts';
import { nextSequence, updateChosenLanguage, updateRoomChecks } from '../room/room.repository.ts';
import { privacyNotice, type PrivacyNotice } from '../room/privacy.ts';
import { findInstitute } from '../institutes/institutes.repository.ts';
import { effectiveRetention } from '../retention/retention.ts';
import { findRetentionSettings } from '../retention/retention.repository.ts';
import {
  deadlineOf,
  examTerms,
  MOBILE_RECORDING_KIND,
  NO_ROOM,
  RECORDING_TYPES,
  SESSION_FINISHED,
} from '../room/room.ts';
import type { StudentSession } from '../student-sessions/student-session.ts';
import { isExempt } from '../student-sessions/accommodations.ts';
import {
  findStudentSessionByToken,
  findStudentSessionWithoutIncidents,
} from '../student-sessions/student-sessions.repository.ts';
import {
  CHECK_CLIP_MIN_BYTES,
  CHECK_CLOSED,
  inSetup,
  MAX_DEVICE_TEXT,
  MOBILE_FINISH_GRACE_MS,
  MOBILE_INCIDENTS,
  type MobileIncidentKind,
  type MobileStatus,
  NO_MOBILE_CAM,
  NO_PHONE,
  pairingAddress,
  pairingUrl,
  PHONE_NOT_NEEDED,
  type RoomMobile,
  settledStatus,
  WRONG_PIN,
} from './mobile.ts';
import {
  changeMobileState,
  findSessionIdByMobileToken,
  replaceMobileToken,
  sessionsByPin,
  touchMobile,
} from './mobile.repository.ts';

type Session = Omit<StudentSession, 'incidents'>;

/** What the phone page reads: its own state, the session's and the exam's. */
export interface PhoneView {
  readonly session: Omit<StudentSession, 'incidents'>;
  readonly exam: Exam;
  readonly status: MobileStatus;
  /** The sequence of the phone's next recording chunk. */
  readonly nextSequence: number;
  readonly chunksCount: number;
  /** When the exam ends for this student (epoch ms), or null. */
  readonly deadline: number | null;
  readonly now: number;
  /** What is stored that names the candidate's language (src/domain/room/language.ts). */
  readonly languageFacts: LanguageFacts;
  /** The institute's own wording of the page messages, by locale (docs/languages.md). */
  readonly messageOverrides: PageOverrides;
  /** The room's privacy panel, which the phone shows before its camera is used (docs/room.md). */
  readonly privacy: PrivacyNotice;
}

/** The outcome of a PIN and email typed on the phone: the pairing token to continue with. */
export interface PinPairing {
  readonly mobileToken: string;
}

/**
 * The phone's side of a session (docs/room.md "The phone", docs/room-api.md "Phone API"). Every
 * `mobileToken` method throws NotFoundMessage(NO_PHONE) for a token that names no session.
 */
export interface MobileService {
  /**
   * The room's view of the phone for a session of `exam` (making its pairing token when it has
   * none), or null when the exam uses no phone or the candidate is exempt from it.
   */
  roomMobile(
    session: Omit<StudentSession, 'incidents'>,
    exam: Exam,
    chunksCount: number,
  ): Promise<RoomMobile | null>;
  /** Replaces the session's pairing token (room token): the old phone link stops working. Throws 404/409. */
  renewPairing(roomToken: string): Promise<void>;
  /** The pairing URL of a room token's session, for its QR code. Throws 404 (no session or no mobile_cam), 409 (finished). */
  pairingUrlOf(roomToken: string): Promise<string>;
  /** Pairs by PIN and email (rate limiting is the caller's). Throws Invalid-like 422 WRONG_PIN, 409 PHONE_NOT_NEEDED. */
  pairByPin(pin: string, email: string): Promise<PinPairing>;
  /** The exam's name for the page title; throws 404. */
  examName(mobileToken: string): Promise<string>;
  /** The exam's name and the language facts for the phone page; throws 404 as examName. */
  page(mobileToken: string): Promise<CandidatePage>;
  /** The phone's view; settles its status first. */
  view(mobileToken: string): Promise<PhoneView>;
  /**
   * Remembers the candidate's pick in the phone page's language menu on the session, as the room's
   * does (RoomService.chooseLanguage). Returns the view; throws Invalid naming `language`.
   */
  chooseLanguage(
    mobileToken: string,
    params: Params,
    options: { readonly pseudo: boolean },
  ): Promise<PhoneView>;
  /** The phone page opened: paired (or back). `device` is its own description. */
  hello(mobileToken: string, params: Params): Promise<PhoneView>;
  /** The phone is still there. */
  heartbeat(mobileToken: string, params: Params): Promise<PhoneView>;
  /** The camera check clip: mobile_check succeeded when it is a video of CHECK_CLIP_MIN_BYTES or more. */
  check(mobileToken: string, upload: Upload | undefined): Promise<PhoneView>;
  /** A recording chunk of the phone (source mobile), as the room's recordings. */
  appendRecording(mobileToken: string, params: Params, body: ChunkBody): Promise<RecordingAck>;
  /** The phone page is leaving: lost now. */
  leave(mobileToken: string): Promise<PhoneView>;
  /** The session a pairing token names, for the live-proctoring socket of the phone. Throws 404; 409 when finished. */
  sessionOfPhone(mobileToken: string): Promise<{ session: Omit<StudentSession, 'incidents'>; exam: Exam }>;
}

/** A new pairing token: 128 random bits as hex, like the room's own token. */
function newMobileToken(): string {
  return crypto.randomBytes(16).toString('hex');
}

/** Seconds since the session started at `at`, or null before a start. */
function offsetAt(session: Session, at: number): number | null {
  return session.startTime === null ? null : Math.max(0, Math.floor((at - session.startTime) / 1000));
}

/** The incident of a phone lost or back, when the session's exam is running; else undefined. */
function incidentOf(
  session: Session,
  kind: MobileIncidentKind,
  at: number,
): { kind: string; comment: string; offsetTime: number | null } | undefined {
  if (session.status !== 'exam_started') return undefined;
  return { kind, comment: MOBILE_INCIDENTS[kind], offsetTime: offsetAt(session, at) };
}

/** Reads the phone's own description (`device`): trimmed, at most MAX_DEVICE_TEXT characters. */
function readDevice(params: Params): string | null | undefined {
  const device = optionalString(params, 'device');
  if (typeof device !== 'string') return device;
  const trimmed = device.trim();
  if (trimmed.length > MAX_DEVICE_TEXT)
    throw new Invalid('device', `is too long (maximum is ${MAX_DEVICE_TEXT} characters)`);
  return trimmed === '' ? null : trimmed;
}

/** Builds the phone's service over the database, clock and storage; `publicUrl` makes the pairing addresses. */
export function createMobileService(deps: {
  db: Db;
  clock: Clock;
  storage: Storage;
  publicUrl: string;
}): MobileService {
  const { db, clock, storage, publicUrl } = deps;
  // The phone's chunks have an intake of their own (its memory keyed by `phone:<token>`); the
  // database judges every chunk as it does the room's.
  const intake = createRecordingIntake({ db, clock, storage });

  /**
   * True when a started session's time has run out (its clock not held by a proctor): the room
   * finishes it on its next request; the phone is refused meanwhile.
   */
  function timeIsUp(session: Session, exam: Exam): boolean {
    if (session.status !== 'exam_started' || isClockPaused(session)) return false;
    const now = clock.now();
    const deadline = deadlineOf(session, exam, now);
    return deadline !== null && now >= deadline;
  }

  async function reread(id: number): Promise<Session> {
    const session = await findStudentSessionWithoutIncidents(db, id);
    if (session === undefined) throw new NotFoundMessage(NO_PHONE);
    return session;
  }

  /** The session and exam of a pairing token. Throws NotFoundMessage(NO_PHONE), or 409 for an exam without a phone. */
  async function open(mobileToken: string): Promise<{ session: Session; exam: Exam }> {
    const id = await findSessionIdByMobileToken(db, mobileToken);
    if (id === undefined) throw new NotFoundMessage(NO_PHONE);
    const read = await reread(id);
    if (read.mobileToken !== mobileToken) throw new NotFoundMessage(NO_PHONE);
    const exam = await findExam(db, read.examId);
    if (exam === undefined || exam.status === 'deleted') throw new NotFoundMessage(NO_PHONE);
    if (!exam.mobileCam) throw new StateConflictMessage(NO_MOBILE_CAM);
    // A rest break past its allowance ended itself then, as the room settles it (room/breaks.ts).
    const session = (await settleBreak(db, read, clock.now())) ? await reread(id) : read;
    return { session, exam };
  }

  /** The session and exam of a room token. Throws NotFoundMessage(NO_ROOM). */
  async function openRoom(roomToken: string): Promise<{ session: Session; exam: Exam }> {
    const session = await findStudentSessionByToken(db, roomToken);
    if (session === undefined) throw new NotFoundMessage(NO_ROOM);
    const exam = await findExam(db, session.examId);
    if (exam === undefined || exam.status === 'deleted') throw new NotFoundMessage(NO_ROOM);
    return { session, exam };
  }

  /**
   * Records a phone that went silent as lost (with its incident during the exam), once. Returns the
   * session as it now stands.
   */
  async function settle(session: Session): Promise<Session> {
    const { status, lostAt } = settledStatus(session, clock.now());
    if (status !== 'lost' || session.mobileStatus === 'lost' || lostAt === null) return session;
    await changeMobileState(db, session.id, {
      from: session.mobileStatus,
      to: 'lost',
      incident: incidentOf(session, 'mobile_lost', lostAt),
      now: clock.now(),
    });
    return reread(session.id);
  }

  /**
   * The phone was heard from now: paired, or streaming when `video` says it sends video (undefined:
   * as it was), a lost phone back (with its incident during the exam). Nothing changes once the
   * session is finished. Returns the session as it now stands.
   */
  async function hear(
    opened: Session,
    video: boolean | undefined,
    device: string | null | undefined,
  ): Promise<Session> {
    if (opened.status === 'exam_finished') return opened;
    const session = await settle(opened);
    const now = clock.now();
    const from = session.mobileStatus;
    const to: MobileStatus =
      video === true
        ? 'streaming'
        : video === false
          ? 'paired'
          : from === 'streaming'
            ? 'streaming'
            : 'paired';
    const changed = await changeMobileState(db, session.id, {
      from,
      to,
      seenAt: now,
      ...(device === undefined ? {} : { device }),
      ...(from === 'lost' ? { incident: incidentOf(session, 'mobile_returned', now) } : {}),
      now,
    });
    if (!changed) await touchMobile(db, session.id, now);
    return reread(session.id);
  }

  async function factsOf(session: Session, exam: Exam): Promise<LanguageFacts> {
    return languageFacts(session, exam, (await instituteLanguage(db, exam.instituteId)) ?? null);
  }

  /** The privacy panel of the session's exam, as the room shows it (src/domain/room/privacy.ts). */
  async function privacyOf(session: Session, exam: Exam): Promise<PrivacyNotice> {
    const institute = await findInstitute(db, exam.instituteId);
    const retention = await findRetentionSettings(db, exam.instituteId);
    if (institute === undefined || retention === undefined) throw new NotFoundMessage(NO_ROOM);
    const kinds = effectiveRetention(retention.settings, retention.sessionPeriod);
    return privacyNotice(exam, session.accommodations, institute, kinds, examTerms(exam));
  }

  async function viewOf(session: Session, exam: Exam): Promise<PhoneView> {
    const now = clock.now();
    const settled = await settle(session);
    const next = await nextSequence(db, session.id, MOBILE_RECORDING_KIND);
    return {
      languageFacts: await factsOf(settled, exam),
      messageOverrides: await pageOverrides(db, exam.instituteId),
      privacy: await privacyOf(settled, exam),
      session: settled,
      exam,
      status: settledStatus(settled, now).status,
      nextSequence: next,
      chunksCount: next,
      deadline: deadlineOf(settled, exam, now),
      now,
    };
  }

  /** The session's pairing token, made now when it has none. */
  async function tokenOf(session: Session): Promise<string> {
    if (session.mobileToken !== null) return session.mobileToken;
    await replaceMobileToken(db, session.id, null, newMobileToken(), clock.now());
    const token = (await reread(session.id)).mobileToken;
    if (token === null)
      throw new Error(`student session ${session.id} has no pairing token after making one`);
    return token;
  }

  return {
    async roomMobile(session, exam, chunksCount) {
      // A candidate exempt from the phone (docs/accommodations.md) needs no pairing: no phone at all.
      if (!exam.mobileCam || isExempt(session.accommodations, 'mobile')) return null;
      const finished = session.status === 'exam_finished';
      const token = finished ? session.mobileToken : await tokenOf(session);
      const settled = await settle(session);
      return {
        pairingUrl: finished || token === null ? null : pairingUrl(publicUrl, token),
        pairingAddress: pairingAddress(publicUrl),
        pinCode: finished ? null : String(session.pinCode).padStart(6, '0'),
        status: settledStatus(settled, clock.now()).status,
        device: settled.mobileDevice,
        lastSeenAt: settled.mobileSeenAt,
        chunksCount,
      };
    },

    async renewPairing(roomToken) {
      const { session, exam } = await openRoom(roomToken);
      if (!exam.mobileCam) throw new StateConflictMessage(NO_MOBILE_CAM);
      if (session.status === 'exam_finished') throw new StateConflictMessage(SESSION_FINISHED);
      const now = clock.now();
      const settled = await settle(session);
      // A phone still attached is let go: during the exam that is the phone lost.
      if (settled.mobileStatus === 'paired' || settled.mobileStatus === 'streaming') {
        await changeMobileState(db, session.id, {
          from: settled.mobileStatus,
          to: 'lost',
          incident: incidentOf(settled, 'mobile_lost', now),
          now,
        });
      }
      await replaceMobileToken(db, session.id, settled.mobileToken, newMobileToken(), now);
    },

    async pairingUrlOf(roomToken) {
      const { session, exam } = await openRoom(roomToken);
      if (!exam.mobileCam) throw new NotFoundMessage(NO_MOBILE_CAM);
      if (session.status === 'exam_finished') throw new StateConflictMessage(PHONE_NOT_NEEDED);
      return pairingUrl(publicUrl, await tokenOf(session));
    },

    async pairByPin(pin, email) {
      const digits = pin.trim();
      const address = email.trim();
      if (digits === '') throw new ParamMissing('pin');
      if (address === '') throw new ParamMissing('email');
      if (!/^\d{6}$/.test(digits)) throw new Invalid('pin', WRONG_PIN);
      const candidates = await sessionsByPin(db, Number(digits), address);
      if (candidates.length === 0) throw new Invalid('pin', WRONG_PIN);
      const waiting = candidates.find((candidate) => candidate.status !== 'exam_finished');
      if (waiting === undefined) throw new StateConflictMessage(PHONE_NOT_NEEDED);
      return { mobileToken: await tokenOf(await reread(waiting.id)) };
    },

    async examName(mobileToken) {
      return (await open(mobileToken)).exam.name;
    },

    async page(mobileToken) {
      const { session, exam } = await open(mobileToken);
      return { examName: exam.name, languageFacts: await factsOf(session, exam) };
    },

    async view(mobileToken) {
      const { session, exam } = await open(mobileToken);
      return viewOf(session, exam);
    },

    async chooseLanguage(mobileToken, params, options) {
      const { session, exam } = await open(mobileToken);
      const language = readLanguageChoice(params, await factsOf(session, exam), options.pseudo);
      await updateChosenLanguage(db, session.id, language, clock.now());
      return viewOf(await reread(session.id), exam);
    },

    async hello(mobileToken, params) {
      const { session, exam } = await open(mobileToken);
      const device = readDevice(params);
      return viewOf(await hear(session, undefined, device), exam);
    },

    async heartbeat(mobileToken, params) {
      const { session, exam } = await open(mobileToken);
      const video = optionalBoolean(params, 'streaming');
      return viewOf(await hear(session, video ?? undefined, undefined), exam);
    },

    async check(mobileToken, upload) {
      const { session, exam } = await open(mobileToken);
      if (session.status === 'exam_finished') throw new StateConflictMessage(SESSION_FINISHED);
      if (!inSetup(session.status)) throw new StateConflictMessage(CHECK_CLOSED);
      if (upload === undefined || upload.size === 0) throw new ParamMissing('file');
      const type = sniffContentType(upload.head, upload.fileName);
      if (type === undefined || !RECORDING_TYPES.includes(type)) {
        throw new UnsupportedMediaType(
          type === undefined ? 'File type not allowed' : `File type not allowed: ${type}`,
        );
      }
      if (upload.size < CHECK_CLIP_MIN_BYTES) {
        throw new Invalid('file', `holds too little video (at least ${CHECK_CLIP_MIN_BYTES} bytes)`);
      }
      // The clip only proves that frames arrive; it is not kept.
      await fs.rm(upload.path, { force: true });
      await updateRoomChecks(db, session.id, { checks: { mobileCheck: 'succeeded' } }, clock.now());
      return viewOf(await hear(await reread(session.id), true, undefined), exam);
    },

    async appendRecording(mobileToken, params, body) {
      const ack = await intake.append(
        `phone:${mobileToken}`,
        params,
        body,
        async () => {
          const { session, exam } = await open(mobileToken);
          if (session.status === 'exam_finished') {
            // The last chunk, recorded before the end, may arrive a little after it.
            // A recording not begun before the end is not begun after it (room.repository.ts).
            const until = session.endTime === null ? null : session.endTime + MOBILE_FINISH_GRACE_MS;
            const begun = (await nextSequence(db, session.id, MOBILE_RECORDING_KIND)) > 0;
            if (until === null || clock.now() > until || !begun) {
              throw new StateConflictMessage(SESSION_FINISHED);
            }
            return { id: session.id, deadline: until, instituteId: exam.instituteId };
          }
          if (session.status !== 'exam_started') {
            throw new StateConflictMessage(
              `Recording chunks are accepted only while the exam is started (the session is ${session.status})`,
            );
          }
          const deadline = deadlineOf(session, exam, clock.now());
          // Past its time the room finishes it on its next request; the grace runs from the deadline.
          if (
            timeIsUp(session, exam) &&
            deadline !== null &&
            clock.now() > deadline + MOBILE_FINISH_GRACE_MS
          ) {
            throw new StateConflictMessage(SESSION_FINISHED);
          }
          return {
            id: session.id,
            deadline: deadline === null ? null : deadline + MOBILE_FINISH_GRACE_MS,
            instituteId: exam.instituteId,
          };
        },
        ['mobile'],
      );
      const { session } = await open(mobileToken);
      await hear(session, true, undefined);
      return ack;
    },

    async leave(mobileToken) {
      const { session, exam } = await open(mobileToken);
      if (session.status !== 'exam_finished') {
        const settled = await settle(session);
        if (settled.mobileStatus === 'paired' || settled.mobileStatus === 'streaming') {
          const now = clock.now();
          await changeMobileState(db, session.id, {
            from: settled.mobileStatus,
            to: 'lost',
            seenAt: now,
            incident: incidentOf(settled, 'mobile_lost', now),
            now,
          });
        }
      }
      return viewOf(await reread(session.id), exam);
    },

    async sessionOfPhone(mobileToken) {
      const opened = await open(mobileToken);
      if (opened.session.status === 'exam_finished' || timeIsUp(opened.session, opened.exam)) {
        throw new StateConflictMessage(SESSION_FINISHED);
      }
      return opened;
    },
  };
}
