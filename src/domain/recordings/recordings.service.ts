import { instituteOfSession } from '../data-keys/data-keys.repository.ts';
import type { DataKeysService } from '../data-keys/data-keys.service.ts';
import { MOBILE_FINISH_GRACE_MS } from '../mobile/mobile.ts';
import { emitRecordingReady } from '../webhooks/emit.ts';
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import type { Logger } from 'pino';
import type { StorageConfig } from '../../config/config.ts';
import type { Db } from '../../db/database.ts';
import { type Storage, StorageMissing } from '../../storage/storage.ts';
import type { Actor } from '../access.ts';
import type { Clock } from '../clock.ts';
import { NotFound } from '../errors.ts';
import type { JobContext, JobQueue } from '../ports/jobs.ts';
import { insertFile } from '../files/files.repository.ts';
import type { FilesService } from '../files/files.service.ts';
import { RECORDING_KINDS, RECORDING_SOURCES, type RecordingSource } from '../room/room.ts';
import { findVisibleSession } from '../student-sessions/session-access.ts';
import type { FinalizeReport, FinalizeRequest } from './finalize-child.ts';
import {
  GAP_THRESHOLD_MS,
  type LinkedRecording,
  RECORDING_FINALIZE_ATTEMPTS,
  RECORDING_FINALIZE_JOB,
  RECORDING_URL_SECONDS,
  recordingFileName,
} from './recording.ts';
import {
  countRecordingChunks,
  deleteChunkRows,
  findRecording,
  findRecordingTimes,
  listRecordings,
  recordingChunks,
  replaceGapIncidents,
  saveRecording,
  setTranscodingStatus,
} from './recordings.repository.ts';

/** Finalised recordings: the review's listing and the job's work (docs/recordings.md). */
export interface RecordingsService {
  /**
   * The session's recordings, for whoever may read the session, webcam, then screen, then the
   * phone; a completed one with an expiring address of its file (RECORDING_URL_SECONDS). Returns
   * them. Throws NotFound (Student Session) when the session is missing or out of scope.
   */
  list(actor: Actor, sessionId: string | number): Promise<LinkedRecording[]>;
  /**
   * The job's work: assembles each stream of the session that has chunks (webcam, screen, phone)
   * into one file on the same clock (video time 0 is the session's recording start), stores it,
   * writes its recording row and gap incidents, moves `transcoding_status` (`processing`, then
   * `completed` or, for a stream with nothing playable, `failed`) and removes the chunks unless
   * configured to keep them. Idempotent: a completed stream is not assembled again. Returns
   * nothing; throws what storage or the database throw (the job is retried), after marking the
   * session `failed` when this was the last attempt.
   */
  finalize(sessionId: number, ctx: JobContext): Promise<void>;
}

/**
 * Queues the finalisation of a finished session's recordings when it has any chunk: its
 * `transcoding_status` becomes `queued` and a `recording.finalize` job (one per session while
 * queued or running) is written, both through `db` (pass the transaction that ends the session), on
 * the job queue `jobs`. Returns whether it queued anything.
 */
export async function queueRecordingFinalisation(
  db: Db,
  deps: { readonly clock: Clock; readonly jobs: JobQueue },
  sessionId: number,
): Promise<boolean> {
  const { clock, jobs } = deps;
  const sources: RecordingSource[] = [];
  for (const source of RECORDING_SOURCES) {
    if ((await countRecordingChunks(db, sessionId, [RECORDING_KINDS[source]])) > 0) sources.push(source);
  }
  if (sources.length === 0) return false;
  const now = clock.now();
  for (const source of sources) await saveRecording(db, sessionId, source, { status: 'queued' }, now);
  await setTranscodingStatus(db, sessionId, 'queued', now);
  await jobs.enqueue(db, {
    kind: RECORDING_FINALIZE_JOB,
    payload: { studentSessionId: sessionId },
    dedupeKey: `session:${sessionId}`,
    maxAttempts: RECORDING_FINALIZE_ATTEMPTS,
    // The phone's last chunk may still arrive for a short while after the end (room.repository.ts).
    ...(sources.includes('mobile') ? { runAt: now + MOBILE_FINISH_GRACE_MS } : {}),
  });
  return true;
}

/** The assembling process's entry point, and its heap: small, so what it allocates is collected early. */
const CHILD_ENTRY = path.join(import.meta.dirname, 'finalize-child.ts');
const CHILD_FLAGS = ['--max-semi-space-size=1', '--max-old-space-size=100'];
/** How much of the child's stderr a failure quotes. */
const STDERR_TAIL = 2000;

/** The outcome of one stream's assembly in the child (its `done` or `unplayable` report). */
type ChildOutcome = Exclude<FinalizeReport, { type: 'progress' }>;

/**
 * Assembles and stores one stream in a child process (finalize-child.ts), passing its `progress`
 * reports to `onProgress`. Returns its final report. Throws the signal's reason when aborted (the
 * child is killed and its temporary file removed), and an Error quoting the child's stderr when it
 * fails or exits without a final report.
 */
export function assembleInChild(
  request: FinalizeRequest,
  signal: AbortSignal,
  onProgress: (done: number) => Promise<void>,
): Promise<ChildOutcome> {
  signal.throwIfAborted();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...CHILD_FLAGS, CHILD_ENTRY], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stderr = '';
    let outcome: ChildOutcome | undefined;
    let progress: Promise<void> = Promise.resolve();
    const abort = (): void => {
      child.kill('SIGKILL');
    };
    signal.addEventListener('abort', abort, { once: true });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (text: string) => {
      stderr = (stderr + text).slice(-STDERR_TAIL);
    });
    readline.createInterface({ input: child.stdout }).on('line', (line) => {
      let report: FinalizeReport;
      try {
        report = JSON.parse(line) as FinalizeReport;
      } catch {
        stderr = (stderr + line).slice(-STDERR_TAIL);
        return;
      }
      if (report.type === 'progress') {
        const done = report.done;
        progress = progress.then(() => onProgress(done)).catch(() => undefined);
      } else outcome = report;
    });
    // A child that exits before reading its request closes the pipe: reported by 'close' below.
    child.stdin.on('error', () => undefined);
    child.stdin.end(JSON.stringify(request));
    child.on('error', (error) => {
      signal.removeEventListener('abort', abort);
      reject(error);
    });
    child.on('close', (code, killedBy) => {
      signal.removeEventListener('abort', abort);
      void progress.then(async () => {
        if (signal.aborted) {
          await fs.promises.rm(request.outputPath, { force: true });
          reject(signal.reason instanceof Error ? signal.reason : new Error(String(signal.reason)));
        } else if (code === 0 && outcome !== undefined) resolve(outcome);
        else {
          await fs.promises.rm(request.outputPath, { force: true });
          reject(
            new Error(
              `recording assembly failed (${killedBy ?? `exit code ${String(code)}`}): ${stderr.trim()}`,
            ),
          );
        }
      });
    });
  });
}

/**
 * Builds the service over the database, the clock, the storage, the files service, the job queue
 * (for the `recording.ready` webhook) and the logger; `keepChunks` (KEEP_RECORDING_CHUNKS) leaves the chunks in place after success. Returns it.
 */
export function createRecordingsService(deps: {
  db: Db;
  clock: Clock;
  storage: Storage;
  files: FilesService;
  jobs: JobQueue;
  logger: Logger;
  keepChunks: boolean;
  /** Where the assembling child process stores the files (the same storage as `storage`). */
  storageConfig: StorageConfig;
  /** The data keys the child process opens the chunks and seals the recording with. */
  dataKeys: Pick<DataKeysService, 'snapshot'>;
}): RecordingsService {
  const { db, clock, storage, files, jobs, logger, keepChunks, storageConfig, dataKeys } = deps;

  /** The institute whose data key seals the session's recording. Throws NotFound for no such session. */
  async function sessionInstitute(sessionId: number): Promise<number> {
    const institute = await instituteOfSession(db, sessionId);
    if (institute === undefined) throw new NotFound('Student Session', sessionId);
    return institute;
  }

  /** Assembles and stores one stream; a stream already completed is left as it is. */
  async function finalizeStream(
    sessionId: number,
    source: RecordingSource,
    times: { startedAt: number | null; endedAt: number | null },
    ctx: JobContext,
  ): Promise<'completed' | 'failed' | 'none'> {
    const kind = RECORDING_KINDS[source];
    const existing = await findRecording(db, sessionId, source);
    const chunks = await recordingChunks(db, sessionId, kind);
    if (existing?.status === 'completed') {
      await removeChunks(sessionId, kind, chunks);
      return 'completed';
    }
    if (chunks.length === 0) return existing?.status === 'failed' ? 'failed' : 'none';
    const startedAt = times.startedAt ?? Math.min(...chunks.map((chunk) => chunk.createdAt));
    await saveRecording(
      db,
      sessionId,
      source,
      { status: 'processing', startedAt, chunks: chunks.length },
      clock.now(),
    );
    const outputPath = path.join(
      os.tmpdir(),
      // The format is known once the first chunk is read: the name's extension does not matter.
      `invigil-recording-${sessionId}-${source}-${crypto.randomBytes(6).toString('hex')}.media`,
    );
    try {
      const outcome = await assembleInChild(
        {
          chunks: chunks.map(({ sequence, storageKey, size, createdAt }) => ({
            sequence,
            storageKey,
            size,
            createdAt,
          })),
          startedAt,
          endedAt: times.endedAt,
          gapThresholdMs: GAP_THRESHOLD_MS,
          outputPath,
          storage: storageConfig,
          keys: await dataKeys.snapshot(await sessionInstitute(sessionId)),
        },
        ctx.signal,
        (done) => ctx.progress(`${source}: ${done}/${chunks.length} chunks`),
      );
      if (outcome.type === 'unplayable') {
        // Nothing to retry: the chunks hold no playable frame. Kept, for whoever wants to look.
        await saveRecording(db, sessionId, source, { status: 'failed', error: outcome.message }, clock.now());
        logger.warn(
          { sessionId, source, reason: outcome.message },
          'recording not finalised: nothing playable',
        );
        return 'failed';
      }
      const { result, stored } = outcome;
      if (ctx.signal.aborted) {
        await storage.delete(stored.key).catch(() => undefined);
        throw ctx.signal.reason;
      }
      try {
        await db.transaction().execute(async (trx) => {
          const file = await insertFile(trx, {
            storageKey: stored.key,
            originalName: recordingFileName(sessionId, source, result.contentType),
            contentType: result.contentType,
            size: stored.size,
            sha256: stored.sha256,
            createdAt: clock.now(),
          });
          await saveRecording(
            trx,
            sessionId,
            source,
            {
              status: 'completed',
              startedAt,
              durationSeconds: result.durationSeconds,
              gaps: result.gaps,
              fileId: file.id,
              storageKey: stored.key,
              size: stored.size,
              chunks: chunks.length,
              chunksDamaged: result.chunksDamaged,
              error: null,
            },
            clock.now(),
          );
          await replaceGapIncidents(trx, sessionId, source, result.gaps, clock.now());
          // In the same transaction: the event exists exactly when the recording is completed.
          await emitRecordingReady(
            jobs,
            trx,
            { sessionId, source, durationSeconds: result.durationSeconds },
            clock.now(),
          );
        });
      } catch (error) {
        await storage.delete(stored.key).catch(() => undefined);
        throw error;
      }
      logger.info(
        {
          sessionId,
          source,
          durationSeconds: result.durationSeconds,
          gaps: result.gaps.length,
          segments: result.segments,
          chunksDamaged: result.chunksDamaged,
          bytes: stored.size,
          assemblerPeakRss: outcome.peakRss,
        },
        'recording finalised',
      );
      await removeChunks(sessionId, kind, chunks);
      return 'completed';
    } finally {
      await fs.promises.rm(outputPath, { force: true });
    }
  }

  /** Removes a finalised stream's chunks (rows, then files and objects) unless they are kept. */
  async function removeChunks(
    sessionId: number,
    kind: string,
    chunks: readonly { fileId: number }[],
  ): Promise<void> {
    if (keepChunks || chunks.length === 0) return;
    await deleteChunkRows(db, sessionId, kind);
    await files.remove(chunks.map((chunk) => chunk.fileId));
  }

  return {
    async list(actor, sessionId) {
      const { session } = await findVisibleSession(db, actor, sessionId);
      const linked: LinkedRecording[] = [];
      for (const recording of await listRecordings(db, session.id)) {
        if (recording.status !== 'completed' || recording.fileId === null) {
          linked.push({ ...recording, url: null, urlExpiresAt: null });
          continue;
        }
        try {
          const address = await files.address(recording.fileId, RECORDING_URL_SECONDS);
          linked.push({ ...recording, url: address.url, urlExpiresAt: address.expiresAt });
        } catch (error) {
          if (!(error instanceof StorageMissing)) throw error;
          linked.push({ ...recording, url: null, urlExpiresAt: null });
        }
      }
      return linked;
    },

    async finalize(sessionId, ctx) {
      const times = await findRecordingTimes(db, sessionId);
      if (times === undefined) return; // deleted meanwhile: nothing to do
      await setTranscodingStatus(db, sessionId, 'processing', clock.now());
      try {
        const outcomes = [];
        for (const source of RECORDING_SOURCES)
          outcomes.push(await finalizeStream(sessionId, source, times, ctx));
        const status = outcomes.includes('failed') ? 'failed' : 'completed';
        await setTranscodingStatus(db, sessionId, status, clock.now());
      } catch (error) {
        const last = ctx.attempt >= RECORDING_FINALIZE_ATTEMPTS;
        await setTranscodingStatus(db, sessionId, last ? 'failed' : 'queued', clock.now());
        if (last) {
          for (const source of RECORDING_SOURCES) {
            const recording = await findRecording(db, sessionId, source);
            if (recording !== undefined && recording.status !== 'completed') {
              const message = error instanceof Error ? error.message : String(error);
              await saveRecording(db, sessionId, source, { status: 'failed', error: message }, clock.now());
            }
          }
        }
        throw error;
      }
    },
  };
}
