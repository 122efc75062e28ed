import type { Readable } from 'node:stream';
import type { Db } from '../../db/database.ts';
import { findAppealOfSession } from '../appeals/appeals.repository.ts';
import { translator } from '../../i18n/catalogues.ts';
import { isPageLocale, type PageLocale } from '../../i18n/locales.ts';
import type { Translator } from '../../i18n/translate.ts';
import { StorageMissing } from '../../storage/storage.ts';
import type { Actor } from '../access.ts';
import type { Clock } from '../clock.ts';
import { Invalid } from '../errors.ts';
import { optionalString, type Params } from '../input.ts';
import type { Exam } from '../exams/exam.ts';
import { findExam } from '../exams/exams.repository.ts';
import type { FilesService } from '../files/files.service.ts';
import { findInstitute } from '../institutes/institutes.repository.ts';
import { listRecordings } from '../recordings/recordings.repository.ts';
import type { ReviewEntry } from '../reviews/review.ts';
import { listReviewEntries } from '../reviews/reviews.repository.ts';
import { findVisibleSession } from '../student-sessions/session-access.ts';
import { CHECK_FIELDS, type StudentSession } from '../student-sessions/student-session.ts';
import { findStudentSessionWithoutIncidents } from '../student-sessions/student-sessions.repository.ts';
import { type ReportRenderer, sharedReportRenderer } from './report-renderer.ts';
import { listReportIncidents } from './session-report.repository.ts';
import {
  type ReportPhoto,
  type ReportVerdict,
  reportFileName,
  reportLocale,
  type SessionReportData,
} from './session-report.ts';

/**
 * The language a reviewer asked the report in (params `language`), when it names one the service
 * speaks; undefined when absent or blank. Throws Invalid naming `language` for any other value.
 */
export function readReportLanguage(params: Params): PageLocale | undefined {
  const language = optionalString(params, 'language');
  if (language === undefined || language === null) return undefined;
  if (!isPageLocale(language)) throw new Invalid('language', 'is not included in the list');
  return language;
}

/**
 * A photo larger than this is named in the report, not drawn: the PDF is built in memory, and a
 * camera's snapshot is far smaller (uploads may be up to the upload limit).
 */
export const MAX_EMBEDDED_PHOTO_BYTES = 15 * 1024 * 1024;

/** A rendered report and the name to download it under. */
export interface SessionReportFile {
  readonly fileName: string;
  readonly bytes: Uint8Array;
}

export interface SessionReportsService {
  /**
   * The report of a session (docs/reports.md) for whoever may read the session, rendered off the
   * event loop. Returns the PDF and its download name. Throws NotFound (Student Session, the id as
   * sent) when the session is missing, its exam deleted, or out of scope; ServiceUnavailable when
   * the renderer is full or the report ran past its time budget (report-renderer.ts). Written in
   * `language` when given (a reviewer's pick, readReportLanguage), else in the institute's default
   * language (reportLocale).
   */
  report(actor: Actor, sessionId: string | number, language?: PageLocale): Promise<SessionReportFile>;
  /**
   * The report of session `sessionId` without an actor, for the zip job (whose export was asked for
   * by a manager of the exam). Returns the PDF, or undefined when the session or its exam is gone.
   * Throws what `report` throws from the renderer.
   */
  render(sessionId: number): Promise<Uint8Array | undefined>;
}

type SessionFacts = Omit<StudentSession, 'incidents'>;

/** The report's label of each requirement check (`Screenshare check`, ...). */
const CHECK_NAMES: Readonly<Record<keyof typeof CHECK_FIELDS, string>> = {
  screenshareCheck: 'pdf.check.screenshare',
  microphoneCheck: 'pdf.check.microphone',
  speakersCheck: 'pdf.check.speakers',
  webcamCheck: 'pdf.check.webcam',
  mobileCheck: 'pdf.check.mobile',
  bandwidthCheck: 'pdf.check.bandwidth',
};

function verdictOf(entry: ReviewEntry): ReportVerdict {
  return {
    verdict: entry.verdict,
    comment: entry.comment,
    reviewerName: entry.reviewerName,
    reviewerId: entry.reviewerId,
    secondReview: entry.secondReview,
    at: entry.createdAt,
  };
}

/**
 * Reads a whole stream, giving up (undefined) past `limit` bytes. Returns a copy that owns its
 * memory: Buffer.concat may answer a view into Node's shared pool (a file under 32 KiB on Node 24),
 * and both pdf-lib and a thread's structured clone see the whole pool, not the view.
 */
async function readAtMost(stream: Readable, limit: number): Promise<Uint8Array | undefined> {
  const pieces: Buffer[] = [];
  let size = 0;
  for await (const piece of stream) {
    const buffer = Buffer.isBuffer(piece) ? piece : Buffer.from(piece as Uint8Array);
    size += buffer.length;
    if (size > limit) return undefined;
    pieces.push(buffer);
  }
  return new Uint8Array(Buffer.concat(pieces));
}

/**
 * Builds the report use cases over the database, the clock, the files service (the photos are
 * stored files) and a renderer (by default the process's shared one). Returns the service;
 * building it throws nothing.
 */
export function createSessionReportsService(deps: {
  db: Db;
  clock: Clock;
  files: FilesService;
  renderer?: ReportRenderer;
}): SessionReportsService {
  const { db, clock, files } = deps;
  const renderer = deps.renderer ?? sharedReportRenderer;

  async function photoOf(
    t: Translator,
    kind: ReportPhoto['kind'],
    fileId: number | null,
  ): Promise<ReportPhoto> {
    const none = { kind, contentType: null, bytes: undefined };
    if (fileId === null) return { ...none, note: t.t('pdf.photos.noneTaken') };
    const file = await files.find(fileId);
    if (file === undefined) return { ...none, note: t.t('pdf.photos.missing') };
    if (file.size > MAX_EMBEDDED_PHOTO_BYTES) {
      return {
        ...none,
        contentType: file.contentType,
        note: t.t('pdf.photos.tooLargeBytes', { bytes: String(file.size) }),
      };
    }
    try {
      const stream = await files.open(file);
      const bytes = await readAtMost(stream, MAX_EMBEDDED_PHOTO_BYTES);
      if (bytes === undefined) {
        stream.destroy();
        return { ...none, contentType: file.contentType, note: t.t('pdf.photos.tooLarge') };
      }
      return { kind, contentType: file.contentType, bytes, note: undefined };
    } catch (error) {
      if (!(error instanceof StorageMissing)) throw error;
      return { ...none, contentType: file.contentType, note: t.t('pdf.photos.missing') };
    }
  }

  /**
   * Everything the report shows of `session` (of `exam`), in `language` when given, else the
   * institute's. Returns the data.
   */
  async function gather(
    session: SessionFacts,
    exam: Exam,
    language?: PageLocale,
  ): Promise<SessionReportData> {
    const institute = await findInstitute(db, exam.instituteId);
    const locale = reportLocale(language, institute?.defaultLanguage);
    const t = translator(locale);
    const [incidents, history, recordings, idCard, face, appeal] = await Promise.all([
      listReportIncidents(db, session.id),
      listReviewEntries(db, session.id),
      listRecordings(db, session.id),
      photoOf(t, 'id_card', session.idCardFileId),
      photoOf(t, 'face_photo', session.facePhotoFileId),
      findAppealOfSession(db, session.id),
    ]);
    const verdicts = history.map(verdictOf);
    return {
      locale,
      generatedAt: clock.now(),
      timeZone: exam.timezone,
      institute: { id: exam.instituteId, name: institute?.name ?? `Institute ${exam.instituteId}` },
      exam: { id: exam.id, name: exam.name, type: exam.type },
      session: {
        id: session.id,
        name: session.name,
        email: session.email,
        attempt: session.attempt,
        status: session.status,
        archived: session.archived,
        reviewed: session.reviewed,
        externalId: session.externalId,
        studentId: session.studentId,
        lmsUserId: session.lmsUserId,
        startTime: session.startTime,
        termsAcceptedAt: session.termsAcceptedAt,
        endTime: session.endTime,
        endReason: session.endReason,
        recordingStartedAt: session.recordingStartedAt,
        recordingEndedAt: session.recordingEndedAt,
        operatingSystem: session.operatingSystem,
        browser: session.browser,
        browserVersion: session.browserVersion,
        bandwidthSpeed: session.bandwidthSpeed,
        transcodingStatus: session.transcodingStatus,
        checks: Object.keys(CHECK_FIELDS).map((field) => ({
          name: t.t(CHECK_NAMES[field as keyof typeof CHECK_FIELDS]),
          value: session[field as keyof typeof CHECK_FIELDS],
        })),
        accommodations: {
          extraTimeMinutes: session.accommodations.extraTimeMinutes,
          extraTimePercent: session.accommodations.extraTimePercent,
          breaks: session.accommodations.breaks,
          breaksTaken: session.breaksTaken,
          exemptions: session.accommodations.exemptions,
          assistiveTechnology: session.accommodations.assistiveTechnology,
          note: session.accommodations.note,
        },
      },
      photos: [idCard, face],
      recordings: recordings.map((recording) => ({
        source: recording.source,
        status: recording.status,
        durationSeconds: recording.durationSeconds,
        gaps: recording.gaps.length,
      })),
      incidents,
      verdict: verdicts.at(-1),
      history: verdicts,
      ...(appeal === undefined
        ? {}
        : {
            appeal: {
              status: appeal.status,
              appealedVerdict: history.find((entry) => entry.id === appeal.reviewId)?.verdict ?? 'violation',
              statement: appeal.statement,
              submittedAt: appeal.submittedAt,
              fileNames: appeal.files.map((file) => file.fileName),
              decidedByName: appeal.decidedByName,
              decidedById: appeal.decidedBy,
              decidedAt: appeal.decidedAt,
              comment: appeal.comment,
            },
          }),
    };
  }

  return {
    async report(actor, sessionId, language) {
      const { session, exam } = await findVisibleSession(db, actor, sessionId);
      return {
        fileName: reportFileName(session.id),
        bytes: await renderer.render(await gather(session, exam, language)),
      };
    },

    async render(sessionId) {
      const session = await findStudentSessionWithoutIncidents(db, sessionId);
      const exam = session === undefined ? undefined : await findExam(db, session.examId);
      if (session === undefined || exam === undefined) return undefined;
      return renderer.render(await gather(session, exam));
    },
  };
}
