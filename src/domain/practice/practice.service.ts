import type { DataKeysService } from '../data-keys/data-keys.service.ts';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Db } from '../../db/database.ts';
import { IMAGE_TYPES, sniffContentType } from '../../storage/content-type.ts';
import type { StorageConfig } from '../../config/config.ts';
import type { Storage, StoredObject } from '../../storage/storage.ts';
import type { Upload } from '../../storage/upload.ts';
import type { Clock } from '../clock.ts';
import {
  Invalid,
  NotFoundMessage,
  ParamMissing,
  PayloadTooLarge,
  StateConflictMessage,
  UnsupportedMediaType,
} from '../errors.ts';
import type { Exam } from '../exams/exam.ts';
import { findExam } from '../exams/exams.repository.ts';
import { PLACEHOLDER_EMAIL_DOMAIN } from '../lti/placeholder-email.ts';
import type { Params } from '../input.ts';
import { assembleInChild } from '../recordings/recordings.service.ts';
import { GAP_THRESHOLD_MS } from '../recordings/recording.ts';
import { NO_ROOM, RECORDING_CHUNK_MAX_BYTES, RECORDING_TYPES, type RoomSession } from '../room/room.ts';
import { generateFields, newSessionDefaults } from '../student-sessions/student-session.ts';
import {
  findStudentSessionByToken,
  insertStudentSession,
} from '../student-sessions/student-sessions.repository.ts';
import {
  archiveVisitorSession,
  countVisitorSessions,
  deleteVisitorSession,
  endPracticeRun,
  findPracticeRun,
  insertPracticeRun,
  isVisitorSession,
  type PracticeRun,
  runningRunsOfSession,
  staleRunningRuns,
  staleVisitorSessions,
  updateRunningRecord,
  VISITOR_EXTERNAL_ID,
  VISITORS_PER_EXAM,
} from './practice.repository.ts';
import {
  judgeRun,
  NO_RUN,
  nextPracticeSequence,
  PRACTICE_CLOSED,
  PRACTICE_MAX_BYTES,
  PRACTICE_MIN_SECONDS,
  PRACTICE_RECORDING_SECONDS,
  PRACTICE_STALE_MS,
  type PracticeCheck,
  practiceChecksOf,
  type PracticeChunk,
  type PracticeOutcome,
  type PracticeRecord,
  type PracticeSource,
  practiceSources,
  readPracticeChunk,
  readPracticeOutcomes,
  readRunId,
  RECORDING_CHECK,
  RUN_ENDED,
  UNFINISHED,
} from './practice.ts';

/** A run as the page sees it. */
export interface PracticeRunView {
  readonly id: number;
  readonly status: 'running' | 'passed' | 'failed';
  readonly failedCheck: string | null;
  /** The checks this student's run must pass, in order. */
  readonly required: readonly PracticeCheck[];
  /** What each check gave so far. */
  readonly outcomes: Partial<Record<PracticeCheck, PracticeOutcome>>;
  /** The streams to record, and for how long. */
  readonly sources: readonly PracticeSource[];
  readonly recordingSeconds: number;
  /** Seconds each stream's recording finalised to (at the end). */
  readonly recorded: Partial<Record<PracticeSource, number>>;
  readonly startedAt: number;
  readonly finishedAt: number | null;
}

/** The practice run of the candidate pages (docs/practice.md). Every call names the session by its room token. */
export interface PracticeService {
  /**
   * Begins a run: the session's practice becomes `running`; an earlier run still running is ended
   * first (its chunks removed). Any session before `exam_started` may practise. Returns the run.
   * Throws NotFoundMessage (NO_ROOM), StateConflictMessage (PRACTICE_CLOSED) once the exam started
   * or finished.
   */
  begin(token: string): Promise<PracticeRunView>;
  /** The run. Throws NotFoundMessage (NO_ROOM, NO_RUN), Invalid (`run`). */
  view(token: string, runId: string): Promise<PracticeRunView>;
  /**
   * Records what the page's checks gave (readPracticeOutcomes). Returns the run. Throws as `view`,
   * StateConflictMessage (RUN_ENDED, PRACTICE_CLOSED), Invalid naming a bad field.
   */
  recordChecks(token: string, runId: string, params: Params): Promise<PracticeRunView>;
  /**
   * Judges a practice photo (`file`, an image by content) and drops it; nothing is kept. Returns
   * the run. Throws as `recordChecks`, ParamMissing (`file`), UnsupportedMediaType.
   */
  checkPhoto(token: string, runId: string, upload: Upload | undefined): Promise<PracticeRunView>;
  /**
   * Stores one chunk of a practice recording (readPracticeChunk; the first of a stream must be
   * video/webm or video/mp4 by content) until the run ends. A sequence already stored is
   * acknowledged (stored false). Returns the acknowledgement. Throws as `recordChecks`,
   * ParamMissing (`sequence`, `file`), Invalid (`sequence`, `source`), StateConflictMessage for a
   * gap, PayloadTooLarge (the chunk, or the run past PRACTICE_MAX_BYTES), UnsupportedMediaType.
   */
  appendRecording(
    token: string,
    runId: string,
    params: Params,
    upload: Upload | undefined,
  ): Promise<{ stored: boolean; nextSequence: number }>;
  /**
   * Ends the run: each stream's chunks are finalised into one file (as the exam's recordings are)
   * and must play at least PRACTICE_MIN_SECONDS, then every chunk and the file are deleted; the run
   * passes when every required check succeeded, else fails naming the first that did not. The
   * session's practice status follows; its `status` never changes. A visitor's throwaway session
   * (demo exam) is deleted with it. Returns the ended run. Throws as `view`, StateConflictMessage
   * (RUN_ENDED).
   */
  finish(token: string, runId: string): Promise<PracticeRunView>;
  /**
   * A visitor's practice of a `demo` exam from its public link: a throwaway session (archived, so
   * in no list) is made, and removed when its run ends or by the sweep. Returns its room token.
   * Throws NotFoundMessage for an exam that is not an open demo, StateConflictMessage when too many
   * visitors practise at once.
   */
  visitorSession(examId: number): Promise<string>;
  /**
   * Removes what abandoned runs left: runs still running after PRACTICE_STALE_MS lose their chunks
   * and fail (`unfinished`), and visitor sessions that old are deleted. Returns how many runs and
   * visitor sessions were cleaned; throws what the database throws.
   */
  sweep(): Promise<{ runs: number; visitors: number }>;
}

/** How many stale runs or visitor sessions one sweep handles. */
const SWEEP_BATCH = 100;
/** Rounds a record write may lose to a concurrent one before giving up. */
const MAX_ROUNDS = 8;
/** A practice begins the sweep at most this often per process. */
const SWEEP_EVERY_MS = 5 * 60 * 1000;
/** The longest one test recording's assembly may take before the run reports it as failed. */
const FINALISE_TIMEOUT_MS = 60_000;

/** The 409 message of a demo practice link with too many visitors at once. */
export const TOO_MANY_VISITORS =
  'Too many people are practising right now: please try again in a few minutes';
/** The 404 message of a public practice link that names no open demo exam. */
export const NO_PRACTICE_EXAM = "Couldn't find the practice exam";

interface Opened {
  readonly session: RoomSession;
  readonly exam: Exam;
}

/**
 * Builds the practice runs over the database, the clock and the storage (where practice chunks wait
 * until their run ends). Returns the service; building it throws nothing.
 */
export function createPracticeService(deps: {
  db: Db;
  clock: Clock;
  storage: Storage;
  /** Where the storage lives, for the child process that assembles the test recordings. */
  storageConfig: StorageConfig;
  /** The data keys the child process opens the chunks with (they are sealed like any object). */
  dataKeys: Pick<DataKeysService, 'snapshot'>;
}): PracticeService {
  const { db, clock, storage, storageConfig, dataKeys } = deps;
  let lastSweep = Number.NEGATIVE_INFINITY;

  async function open(token: string): Promise<Opened> {
    const session = await findStudentSessionByToken(db, token);
    if (session === undefined) throw new NotFoundMessage(NO_ROOM);
    const exam = await findExam(db, session.examId);
    if (exam === undefined || exam.status === 'deleted') throw new NotFoundMessage(NO_ROOM);
    return { session, exam };
  }

  function assertMayPractise(session: RoomSession): void {
    if (session.status === 'exam_started' || session.status === 'exam_finished') {
      throw new StateConflictMessage(PRACTICE_CLOSED);
    }
  }

  async function runOf(token: string, rawId: string): Promise<Opened & { run: PracticeRun }> {
    const opened = await open(token);
    const run = await findPracticeRun(db, opened.session.id, readRunId(rawId));
    if (run === undefined) throw new NotFoundMessage(NO_RUN);
    return { ...opened, run };
  }

  async function runningRunOf(token: string, rawId: string): Promise<Opened & { run: PracticeRun }> {
    const found = await runOf(token, rawId);
    if (found.run.status !== 'running') throw new StateConflictMessage(RUN_ENDED);
    assertMayPractise(found.session);
    return found;
  }

  function present(run: PracticeRun, opened: Opened): PracticeRunView {
    return {
      id: run.id,
      status: run.status,
      failedCheck: run.failedCheck,
      required: practiceChecksOf(opened.exam, opened.session.accommodations),
      outcomes: run.record.outcomes,
      sources: practiceSources(opened.exam, opened.session.accommodations),
      recordingSeconds: PRACTICE_RECORDING_SECONDS,
      recorded: run.record.recorded,
      startedAt: run.startedAt,
      finishedAt: run.finishedAt,
    };
  }

  /** Deletes stored objects; a failure leaves only unreachable garbage (nothing points at it). */
  async function removeKeys(keys: readonly string[]): Promise<void> {
    for (const key of keys) {
      try {
        await storage.delete(key);
      } catch {
        // nothing refers to it any more
      }
    }
  }

  /**
   * Changes a running run's record with `change` (applied to the newest stored record, retried
   * when a concurrent request wrote first). Returns the record written. Throws RUN_ENDED when the
   * run ended meanwhile, and what `change` throws.
   */
  async function changeRecord(
    run: PracticeRun,
    change: (record: PracticeRecord) => PracticeRecord,
  ): Promise<PracticeRecord> {
    let current = run;
    for (let round = 0; round < MAX_ROUNDS; round += 1) {
      const next = change(current.record);
      if (await updateRunningRecord(db, current.id, current.record, next, clock.now())) return next;
      const reread = await findPracticeRun(db, current.studentSessionId, current.id);
      if (reread === undefined) throw new NotFoundMessage(NO_RUN);
      if (reread.status !== 'running') throw new StateConflictMessage(RUN_ENDED);
      current = reread;
    }
    throw new Error(`practice run ${run.id} kept changing; not changed`);
  }

  /**
   * Ends a run as failed (`unfinished`) after removing its chunks: an earlier run replaced by a new
   * one, or one the sweep found abandoned. Returns whether it was still running.
   */
  async function abandon(run: PracticeRun): Promise<boolean> {
    await removeKeys(run.record.chunks.map((chunk) => chunk.key));
    return endPracticeRun(
      db,
      run,
      {
        status: 'failed',
        failedCheck: UNFINISHED,
        record: { ...run.record, chunks: [] },
      },
      clock.now(),
    );
  }

  /**
   * Finalises one stream's chunks exactly as an exam's recording is (assemble.ts), in a child
   * process as the recordings service does (assembleInChild), so a run's megabytes never hold the
   * event loop; then deletes what it stored. Returns the seconds it plays, 0 when nothing plays.
   */
  async function finalise(chunks: readonly PracticeChunk[], instituteId: number): Promise<number> {
    if (chunks.length === 0) return 0;
    const sorted = [...chunks].sort((a, b) => a.sequence - b.sequence);
    const outcome = await assembleInChild(
      {
        chunks: sorted.map((chunk) => ({
          sequence: chunk.sequence,
          storageKey: chunk.key,
          size: chunk.size,
          createdAt: chunk.createdAt,
        })),
        startedAt: sorted[0]?.createdAt ?? clock.now(),
        endedAt: null,
        gapThresholdMs: GAP_THRESHOLD_MS,
        outputPath: path.join(os.tmpdir(), `invigil-practice-${crypto.randomUUID()}.webm`),
        storage: storageConfig,
        keys: await dataKeys.snapshot(instituteId),
      },
      AbortSignal.timeout(FINALISE_TIMEOUT_MS),
      () => Promise.resolve(),
    );
    if (outcome.type === 'unplayable') return 0;
    await removeKeys([outcome.stored.key]);
    return outcome.result.durationSeconds;
  }

  /** Runs the sweep now and then, from the requests that begin runs (no worker needed for it). */
  function sweepNowAndThen(): void {
    const now = clock.now();
    if (now - lastSweep < SWEEP_EVERY_MS) return;
    lastSweep = now;
    void service.sweep().catch(() => {
      // the next one tries again
    });
  }

  const service: PracticeService = {
    async begin(token) {
      const opened = await open(token);
      assertMayPractise(opened.session);
      for (const earlier of await runningRunsOfSession(db, opened.session.id)) await abandon(earlier);
      const run = await db
        .transaction()
        .execute((trx) => insertPracticeRun(trx, opened.session.id, clock.now()));
      sweepNowAndThen();
      return present(run, opened);
    },

    async view(token, runId) {
      const { run, ...opened } = await runOf(token, runId);
      return present(run, opened);
    },

    async recordChecks(token, runId, params) {
      const { run, ...opened } = await runningRunOf(token, runId);
      const outcomes = readPracticeOutcomes(params);
      const record = await changeRecord(run, (current) => ({
        ...current,
        outcomes: { ...current.outcomes, ...outcomes },
      }));
      return present({ ...run, record }, opened);
    },

    async checkPhoto(token, runId, upload) {
      const { run, ...opened } = await runningRunOf(token, runId);
      if (upload === undefined || upload.size === 0) throw new ParamMissing('file');
      const type = sniffContentType(upload.head, upload.fileName);
      if (type === undefined || !IMAGE_TYPES.includes(type)) {
        throw new UnsupportedMediaType('File type not allowed');
      }
      // The photo proved the camera can take one; it is not kept (the spooled file goes with the request).
      return present(run, opened);
    },

    async appendRecording(token, runId, params, upload) {
      const { run, exam, session } = await runningRunOf(token, runId);
      const { sequence, source } = readPracticeChunk(params);
      if (!practiceSources(exam, session.accommodations).includes(source)) {
        throw new Invalid('source', 'is not recorded in this exam');
      }
      const expected = nextPracticeSequence(run.record, source);
      if (sequence < expected) return { stored: false, nextSequence: expected };
      if (sequence > expected) {
        throw new StateConflictMessage(`Expected chunk ${expected} of the ${source} practice recording`);
      }
      if (upload === undefined || upload.size === 0) throw new ParamMissing('file');
      if (upload.size > RECORDING_CHUNK_MAX_BYTES) {
        throw new PayloadTooLarge(`Recording chunk too large (at most ${RECORDING_CHUNK_MAX_BYTES} bytes)`);
      }
      const used = run.record.chunks.reduce((sum, chunk) => sum + chunk.size, 0);
      if (used + upload.size > PRACTICE_MAX_BYTES) {
        throw new PayloadTooLarge(`A practice run stores at most ${PRACTICE_MAX_BYTES} bytes`);
      }
      if (sequence === 0) {
        const type = sniffContentType(upload.head, upload.fileName);
        if (type === undefined || !RECORDING_TYPES.includes(type)) {
          throw new UnsupportedMediaType('File type not allowed');
        }
      }
      const stored: StoredObject = await storage.put(fs.createReadStream(upload.path), {
        institute: exam.instituteId,
        maxBytes: RECORDING_CHUNK_MAX_BYTES,
      });
      const chunk: PracticeChunk = {
        source,
        sequence,
        key: stored.key,
        size: stored.size,
        createdAt: clock.now(),
      };
      let duplicate = false;
      try {
        await changeRecord(run, (current) => {
          duplicate = nextPracticeSequence(current, source) !== sequence;
          return duplicate ? current : { ...current, chunks: [...current.chunks, chunk] };
        });
      } catch (error) {
        await removeKeys([stored.key]);
        throw error;
      }
      // Another request stored the same chunk first: this copy is not needed.
      if (duplicate) await removeKeys([stored.key]);
      return { stored: !duplicate, nextSequence: sequence + 1 };
    },

    async finish(token, runId) {
      const { run, ...opened } = await runOf(token, runId);
      if (run.status !== 'running') throw new StateConflictMessage(RUN_ENDED);
      const sources = practiceSources(opened.exam, opened.session.accommodations);
      const outcomes = { ...run.record.outcomes };
      const recorded: Partial<Record<PracticeSource, number>> = {};
      try {
        for (const source of sources) {
          const seconds = await finalise(
            run.record.chunks.filter((chunk) => chunk.source === source),
            opened.exam.instituteId,
          );
          recorded[source] = seconds;
          outcomes[RECORDING_CHECK[source]] = seconds >= PRACTICE_MIN_SECONDS ? 'succeeded' : 'failed';
        }
      } finally {
        await removeKeys(run.record.chunks.map((chunk) => chunk.key));
      }
      const verdict = judgeRun(practiceChecksOf(opened.exam, opened.session.accommodations), outcomes);
      const record: PracticeRecord = { outcomes, chunks: [], recorded };
      const now = clock.now();
      const ended = await db
        .transaction()
        .execute((trx) => endPracticeRun(trx, run, { ...verdict, record }, now));
      if (!ended) throw new StateConflictMessage(RUN_ENDED);
      if (await isVisitorSession(db, opened.session.id)) await deleteVisitorSession(db, opened.session.id);
      return present(
        { ...run, status: verdict.status, failedCheck: verdict.failedCheck, record, finishedAt: now },
        opened,
      );
    },

    async visitorSession(examId) {
      const exam = await findExam(db, examId);
      if (exam === undefined || exam.type !== 'demo' || exam.status !== 'open') {
        throw new NotFoundMessage(NO_PRACTICE_EXAM);
      }
      if ((await countVisitorSessions(db, exam.id)) >= VISITORS_PER_EXAM) {
        sweepNowAndThen();
        throw new StateConflictMessage(TOO_MANY_VISITORS);
      }
      const session = await insertStudentSession(
        db,
        exam.id,
        {
          ...newSessionDefaults(),
          name: 'Practice visitor',
          // An address no email is ever sent to (as an LTI learner's without one).
          email: `practice-visitor@${PLACEHOLDER_EMAIL_DOMAIN}`,
          attempt: 1,
          externalId: VISITOR_EXTERNAL_ID,
          ...generateFields(),
        },
        clock.now(),
      );
      await archiveVisitorSession(db, session.id);
      return session.token;
    },

    async sweep() {
      const before = clock.now() - PRACTICE_STALE_MS;
      let runs = 0;
      for (const run of await staleRunningRuns(db, before, SWEEP_BATCH)) {
        if (await abandon(run)) runs += 1;
      }
      const visitors = await staleVisitorSessions(db, before, SWEEP_BATCH);
      for (const id of visitors) {
        for (const run of await runningRunsOfSession(db, id)) await abandon(run);
        try {
          await deleteVisitorSession(db, id);
        } catch {
          // Something else now refers to it (the visitor opened the demo exam's room itself): it
          // stays, hidden, and the sweep goes on with the others.
        }
      }
      return { runs, visitors: visitors.length };
    },
  };
  return service;
}
