import crypto from 'node:crypto';
import type { Readable } from 'node:stream';
import type { Db } from '../../db/database.ts';
import { escapeHtml } from '../../security/html.ts';
import { StorageMissing } from '../../storage/storage.ts';
import type { Actor } from '../access.ts';
import type { AuditClient, AuditService } from '../audit/audit.service.ts';
import type { Clock } from '../clock.ts';
import { Invalid, NotFoundMessage, RateLimited, StateConflictMessage } from '../errors.ts';
import { safeFileName, uniqueNames, worthCompressing } from '../exports/exam-export.ts';
import { type ArchiveEntry, streamArchive } from '../exports/zip-archive.ts';
import type { FilesService } from '../files/files.service.ts';
import { type Params, requiredString } from '../input.ts';
import { candidateMailTranslator } from '../mail/mail-language.ts';
import { createOutbox } from '../mail/outbox-writer.ts';
import type { JobQueue } from '../ports/jobs.ts';
import { findAppealOfSession } from '../appeals/appeals.repository.ts';
import { purgedKindsOf } from '../retention/retention.service.ts';
import { listReviewEntries } from '../reviews/reviews.repository.ts';
import { findVisibleSession } from '../student-sessions/session-access.ts';
import { textDirection } from '../../i18n/locales.ts';
import type { Translator } from '../../i18n/translate.ts';
import {
  buildCandidateManifest,
  CANDIDATE_DATA_DOWNLOADED,
  CANDIDATE_DATA_REQUESTED,
  type CandidateDataContent,
  candidateSummary,
  CODE_MAX_ATTEMPTS,
  CODE_TTL_MS,
  CODE_WINDOW_MS,
  CODES_PER_WINDOW,
  DATA_PURGED,
  DOWNLOAD_EXPIRED,
  DOWNLOAD_TTL_MS,
  finalVerdictOf,
  hashSecret,
  maskEmail,
  MAX_SESSIONS_PER_REQUEST,
  newCode,
  newDownloadKey,
  normaliseCode,
  NOT_FINISHED,
  STAFF_VIEW_ACTIONS,
  type StaffView,
  type StaffViewKind,
  VIEW_EVENT_WINDOW_MS,
} from './candidate-data.ts';
import {
  addWrongAttempt,
  type CandidateSession,
  countCodesSince,
  findCandidateSession,
  findDownloadSession,
  findSessionByToken,
  hasRecentEvent,
  insertCandidateEvent,
  insertCode,
  listCandidateFiles,
  listCandidateIncidents,
  listEndedSessionsOf,
  listLiveCodes,
  listStaffViews,
  useCode,
} from './candidate-data.repository.ts';

/** What the finished page is told once a code went out. */
export interface CodeSent {
  /** The address it went to, masked (`a•••@example.org`). */
  readonly sentTo: string;
  readonly expiresAt: number;
}

/** The zip's expiring address: a key for `/candidate-data/<key>`. */
export interface DownloadGrant {
  readonly key: string;
  readonly expiresAt: number;
}

/** The zip as it streams. */
export interface CandidateZip {
  readonly fileName: string;
  readonly body: Readable;
}

/** A staff look to record (part 6). */
export interface StaffViewEvent {
  readonly actor: Actor;
  readonly kind: StaffViewKind;
  /** The session looked at; for `exam_zip`, the exam. */
  readonly targetId: number;
  readonly status: number;
  readonly client: AuditClient;
}

export interface CandidateDataService {
  /**
   * Sends a one-time code to the address of the session of room token `token` (the finished page).
   * Returns where (masked) and until when. Throws NotFoundMessage for an unknown token or purged data,
   * StateConflictMessage before the session ended, RateLimited past CODES_PER_WINDOW codes an hour.
   */
  sendCode(token: string, client: AuditClient): Promise<CodeSent>;
  /**
   * Sends a code (with the room link) for each ended, unpurged session of `params.email`, at most
   * the newest MAX_SESSIONS_PER_REQUEST, skipping any over its hourly count. Resolves alike whether
   * or not the address has sessions (no enumeration); throws Invalid for a blank or overlong address.
   */
  requestByEmail(params: Params, client: AuditClient): Promise<void>;
  /**
   * Checks `params.code` against the session's live codes; a right one is used up and gives the
   * zip's expiring address. Returns it. Throws NotFoundMessage or StateConflictMessage as sendCode,
   * ParamMissing without a code, Invalid (`code`) for a wrong, used, expired or exhausted code.
   */
  redeem(token: string, params: Params): Promise<DownloadGrant>;
  /**
   * Opens the zip of the download key's session, streamed (built as it is read). Returns it. Throws
   * NotFoundMessage (DOWNLOAD_EXPIRED) for an unknown or expired key, (DATA_PURGED) once purged.
   */
  open(key: string, client: AuditClient): Promise<CandidateZip>;
  /**
   * The staff views of session `id`, oldest first, for an actor who may read it. Throws NotFound
   * (Student Session) otherwise.
   */
  whoLooked(actor: Actor, id: string | number): Promise<StaffView[]>;
  /**
   * Records a staff look as an audit event, unless the same user recorded the same kind on the same
   * target within VIEW_EVENT_WINDOW_MS. Returns whether an event was written; throws what the
   * database throws.
   */
  recordStaffView(view: StaffViewEvent): Promise<boolean>;
}

/** The longest address a request may carry. */
const EMAIL_MAX = 320;

/** The code email, in the candidate's language. Returns subject, text and HTML. */
function codeMail(
  t: Translator,
  content: { name: string; examName: string; code: string; roomUrl: string; minutes: number },
): { subject: string; text: string; html: string } {
  const subject = t.t('email.candidateData.subject', { exam: content.examName }).replace(/[\r\n]+/g, ' ');
  const greeting = t.t('email.common.greeting', { name: content.name });
  const intro = t.t('email.candidateData.intro', { exam: content.examName });
  const codeLine = t.t('email.candidateData.code', { code: content.code, minutes: content.minutes });
  const open = t.t('email.candidateData.open');
  const notYou = t.t('email.candidateData.notYou');
  const text = [greeting, '', intro, '', codeLine, '', open, content.roomUrl, '', notYou, ''].join('\n');
  const dir = textDirection(t.locale);
  const html = [
    '<!DOCTYPE html>',
    `<html lang="${escapeHtml(t.locale)}" dir="${dir}">`,
    `<head><meta charset="utf-8"><title>${escapeHtml(subject)}</title></head>`,
    `<body dir="${dir}" style="font-family: sans-serif; line-height: 1.5; color: #222;">`,
    `<p>${escapeHtml(greeting)}</p>`,
    `<p>${escapeHtml(intro)}</p>`,
    `<p><strong>${escapeHtml(codeLine)}</strong></p>`,
    `<p>${escapeHtml(open)}<br><a href="${escapeHtml(content.roomUrl)}">${escapeHtml(content.roomUrl)}</a></p>`,
    `<p>${escapeHtml(notYou)}</p>`,
    '</body>',
    '</html>',
    '',
  ].join('\n');
  return { subject, text, html };
}

/**
 * Builds the candidate-data use cases over the database, clock, files (the stored bytes, read
 * through the storage port so encryption at rest stays transparent), the job queue (the outbox),
 * the audit service and the public address rooms are reached at. Returns it; throws nothing.
 */
export function createCandidateDataService(deps: {
  db: Db;
  clock: Clock;
  files: FilesService;
  jobs: JobQueue;
  audit: AuditService;
  publicUrl: string;
}): CandidateDataService {
  const { db, clock, files, jobs, audit, publicUrl } = deps;
  const outbox = createOutbox({ clock, jobs });

  /** The session of a token, ended and with its data: else the error the candidate reads. */
  async function readySession(token: string): Promise<CandidateSession> {
    const session = await findSessionByToken(db, token);
    if (session === undefined) throw new NotFoundMessage("Couldn't find the exam session");
    if (session.mediaPurgedAt !== null) throw new NotFoundMessage(DATA_PURGED);
    if (session.endTime === null) throw new StateConflictMessage(NOT_FINISHED);
    return session;
  }

  function record(session: CandidateSession, action: string, status: number, client: AuditClient) {
    return insertCandidateEvent(db, {
      instituteId: session.instituteId,
      action,
      sessionId: session.id,
      status,
      ip: client.ip,
      userAgent: client.userAgent === null ? null : client.userAgent.slice(0, 256),
      now: clock.now(),
    });
  }

  /** Writes a code and its email in one transaction. Returns the code's expiry, or undefined over the limit. */
  async function issueCode(session: CandidateSession): Promise<number | undefined> {
    const now = clock.now();
    const code = newCode();
    const expiresAt = now + CODE_TTL_MS;
    const t = await candidateMailTranslator(
      db,
      { id: session.examId, instituteId: session.instituteId },
      session.id,
    );
    return db.transaction().execute(async (trx) => {
      if ((await countCodesSince(trx, session.id, now - CODE_WINDOW_MS)) >= CODES_PER_WINDOW)
        return undefined;
      await insertCode(trx, {
        sessionId: session.id,
        codeHash: hashSecret(code, session.id),
        now,
        expiresAt,
      });
      await outbox.write(trx, {
        kind: 'candidate_data_code',
        to: session.email,
        message: codeMail(t, {
          name: session.name,
          examName: session.examName,
          code,
          roomUrl: `${publicUrl}/room/${session.token}`,
          minutes: CODE_TTL_MS / 60_000,
        }),
        studentSessionId: session.id,
      });
      return expiresAt;
    });
  }

  function archiveOf(content: CandidateDataContent, t: Translator): Readable {
    const controller = new AbortController();
    const entries: ArchiveEntry[] = content.files.map((file) => ({
      path: file.path,
      size: file.size,
      sha256: file.sha256,
      compress: worthCompressing(file.contentType),
      modifiedAt: new Date(file.createdAt),
      describe: `file ${file.fileId} of student session ${content.session.id}`,
      open: async () => {
        const missing = () =>
          new Error(`file ${file.fileId} of student session ${content.session.id} is missing from storage`);
        // The record as the files service keeps it, so whatever it needs to read the bytes (a data
        // key, once encryption at rest is on) comes with it.
        const record = await files.find(file.fileId);
        if (record === undefined) throw missing();
        try {
          return await files.open(record);
        } catch (error) {
          if (!(error instanceof StorageMissing)) throw error;
          throw Object.assign(missing(), { cause: error });
        }
      },
    }));
    const body = streamArchive({
      entries,
      generated: [
        {
          path: 'summary.txt',
          content: () => Buffer.from(`\uFEFF${candidateSummary(content, (key, values) => t.t(key, values))}`),
        },
        {
          path: 'manifest.json',
          content: () => Buffer.from(`${JSON.stringify(buildCandidateManifest(content), null, 2)}\n`),
        },
      ],
      generatedModifiedAt: new Date(content.generatedAt),
      signal: controller.signal,
      // Streamed to the reader as it is read: no job to report progress to.
      beforeEntry: () => Promise.resolve(),
    });
    // The reader went away: stop reading the stored file in hand.
    body.once('close', () => controller.abort(new Error('the download was closed')));
    return body;
  }

  return {
    async sendCode(token, client) {
      const session = await readySession(token);
      const expiresAt = await issueCode(session);
      if (expiresAt === undefined) {
        throw new RateLimited('Too many codes were sent for this exam session: try again in an hour');
      }
      await record(session, CANDIDATE_DATA_REQUESTED, 202, client);
      return { sentTo: maskEmail(session.email), expiresAt };
    },

    async requestByEmail(params, client) {
      const email = requiredString(params, 'email').trim();
      if (email === '' || email.length > EMAIL_MAX || !email.includes('@')) {
        throw new Invalid('email', 'is invalid');
      }
      const sessions = await listEndedSessionsOf(db, email, MAX_SESSIONS_PER_REQUEST);
      for (const session of sessions) {
        if (session.mediaPurgedAt !== null || session.examStatus === 'deleted') continue;
        const expiresAt = await issueCode(session);
        if (expiresAt !== undefined) await record(session, CANDIDATE_DATA_REQUESTED, 202, client);
      }
    },

    async redeem(token, params) {
      const session = await readySession(token);
      const typed = normaliseCode(requiredString(params, 'code'));
      const wrong = new Invalid('code', 'is wrong or has expired');
      if (!/^\d{8}$/.test(typed)) throw wrong;
      const now = clock.now();
      const live = await listLiveCodes(db, session.id, now, CODE_MAX_ATTEMPTS);
      const typedHash = Buffer.from(hashSecret(typed, session.id), 'latin1');
      const match = live.find((code) =>
        crypto.timingSafeEqual(Buffer.from(code.codeHash, 'latin1'), typedHash),
      );
      if (match === undefined) {
        await addWrongAttempt(
          db,
          live.map((code) => code.id),
        );
        throw wrong;
      }
      const key = newDownloadKey();
      const expiresAt = now + DOWNLOAD_TTL_MS;
      const used = await useCode(db, match.id, {
        now,
        downloadHash: hashSecret(key),
        downloadExpiresAt: expiresAt,
      });
      if (!used) throw wrong;
      return { key, expiresAt };
    },

    async open(key, client) {
      const now = clock.now();
      const sessionId = /^[A-Za-z0-9_-]{43}$/.test(key)
        ? await findDownloadSession(db, hashSecret(key), now)
        : undefined;
      if (sessionId === undefined) throw new NotFoundMessage(DOWNLOAD_EXPIRED);
      const session = await findCandidateSession(db, sessionId);
      if (session === undefined) throw new NotFoundMessage(DOWNLOAD_EXPIRED);
      if (session.mediaPurgedAt !== null) throw new NotFoundMessage(DATA_PURGED);
      const stored = await listCandidateFiles(db, session.id);
      const unique = { recordings: uniqueNames(), photos: uniqueNames(), uploads: uniqueNames() };
      const placed = stored.map((file) => ({
        ...file,
        path: `${file.folder}/${unique[file.folder](safeFileName(file.originalName, `file-${file.fileId}`))}`,
      }));
      const content: CandidateDataContent = {
        session,
        files: placed,
        incidents: await listCandidateIncidents(db, session.id),
        verdict: finalVerdictOf(await listReviewEntries(db, session.id)),
        appeal: await findAppealOfSession(db, session.id),
        purged: await purgedKindsOf(db, session.id),
        views: await listStaffViews(db, session.id, session.examId),
        generatedAt: now,
      };
      const t = await candidateMailTranslator(
        db,
        { id: session.examId, instituteId: session.instituteId },
        session.id,
      );
      await record(session, CANDIDATE_DATA_DOWNLOADED, 200, client);
      return { fileName: `exam-session-${session.id}-my-data.zip`, body: archiveOf(content, t) };
    },

    async whoLooked(actor, id) {
      const { session } = await findVisibleSession(db, actor, id);
      return listStaffViews(db, session.id, session.examId);
    },

    async recordStaffView(view) {
      const action = STAFF_VIEW_ACTIONS[view.kind];
      const targetType = view.kind === 'exam_zip' ? 'exams' : 'student_sessions';
      const recent = await hasRecentEvent(db, {
        userId: view.actor.id,
        action,
        targetType,
        targetId: view.targetId,
        since: clock.now() - VIEW_EVENT_WINDOW_MS,
      });
      if (recent) return false;
      await audit.recordWrite({
        actor: view.actor,
        action,
        targetType,
        targetId: view.targetId,
        status: view.status,
        client: view.client,
      });
      return true;
    },
  };
}
