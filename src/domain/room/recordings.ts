import { performance } from 'node:perf_hooks';
import { Readable } from 'node:stream';
import type { Db } from '../../db/database.ts';
import { sniffContentType } from '../../storage/content-type.ts';
import type { Storage, StoredObject } from '../../storage/storage.ts';
import type { Clock } from '../clock.ts';
import { ParamMissing, PayloadTooLarge, StateConflictMessage, UnsupportedMediaType } from '../errors.ts';
import type { Params } from '../input.ts';
import { type ChunkLedger, createChunkLedger, recordingState, sessionFileType } from './room.repository.ts';
import {
  readRecordingChunk,
  RECORDING_CHUNK_MAX_BYTES,
  RECORDING_KINDS,
  RECORDING_TYPES,
  type RecordingSource,
} from './room.ts';

/**
 * The recording-chunk path of the room (`POST /api/room/<token>/recordings`), built for thousands
 * of candidates each sending a webcam and a screen chunk every few seconds:
 *
 * - the token and the session's state are judged before a byte of the body is read, from a short
 *   cache of started sessions (the database stays the judge: see ChunkLedger);
 * - the chunk streams from the request straight into the storage (no spool file), its type judged
 *   by its first bytes as they arrive, sealed under the institute's data key on the way (one cipher
 *   per chunk held in memory; the session's institute comes with its remembered state and the key
 *   is remembered, so no query);
 * - its two rows are written in grouped transactions, and the request answers once they commit.
 */

/** A text field of a chunk request's body. */
export interface ChunkField {
  readonly type: 'field';
  readonly name: string;
  readonly value: string;
}

/** A file part of a chunk request's body; its bytes come from ChunkBody.fileData. */
export interface ChunkFile {
  readonly type: 'file';
  readonly name: string;
  readonly fileName: string;
}

/** A chunk request's body, read part by part as it arrives (the HTTP layer's multipart reader). */
export interface ChunkBody {
  /** The next part (the rest of the previous one skipped), undefined after the last. */
  next(): Promise<ChunkField | ChunkFile | undefined>;
  /** The bytes of the file part `next` gave last. */
  fileData(): AsyncIterable<Buffer>;
}

/** The outcome of a recording chunk: whether it was stored now, and the sequence expected next. */
export interface RecordingAck {
  readonly stored: boolean;
  readonly nextSequence: number;
}

/**
 * A started session, as far as chunks need it. Only a hint for SESSION_TRUST_MS: every room request
 * (each poll of the page) remembers it again with the deadline of the session as it now stands, so a
 * changed deadline (accommodations changed, a rest break) is taken within one poll; a remembered
 * deadline that passed is asked again at once; and the database refuses any chunk of a session that
 * is no longer started whatever is remembered (ChunkLedger).
 */
export interface StartedSession {
  readonly id: number;
  /** When its time runs out (epoch ms), or null. */
  readonly deadline: number | null;
  /** The institute whose data key seals its chunks (its exam's). */
  readonly instituteId: number;
}

/** How long a started session is taken on trust before it is read again. */
const SESSION_TRUST_MS = 30_000;
/** How many leading bytes judge a first chunk's type (as for any upload). */
const SNIFF_BYTES = 4096;
/** How much of a chunk may wait in memory for the storage to take it. */
const STREAM_BUFFER_BYTES = 256 * 1024;
/**
 * A chunk up to this size is held in memory as it arrives and written with one call when the
 * storage offers it (Storage.putBytes): a webcam or screen chunk of a few hundred kB then costs one
 * open, one write and a rename instead of a stream per chunk. A larger one streams, so a request
 * never holds more than this (plus the stream's buffer) in memory.
 */
export const HOLD_BYTES = 1024 * 1024;
/** Past this many remembered sessions, the expired ones are forgotten. */
const SWEEP_ABOVE = 10_000;

/** What is remembered of one recording of a session: the sequence expected next and its type. */
interface RecordingState {
  next: number;
  contentType: string | undefined;
}

interface Remembered {
  readonly session: StartedSession;
  readonly until: number;
}

/** What became of a request's file part. */
interface Received {
  /** The stored object, when the part was kept (to be recorded or removed). */
  stored: StoredObject | undefined;
  /** Bytes seen (at least maxBytes + 1 once the limit was passed). */
  size: number;
  tooLarge: boolean;
  /** The type its first bytes show, when they were looked at. */
  sniffed: string | undefined;
  head: Buffer | undefined;
}

/** The name a chunk is stored under: `webcam-N.webm`, `screen-N.webm` (`.mp4` for an MP4 recording). */
export function chunkFileName(source: RecordingSource, sequence: number, contentType: string): string {
  return `${source}-${sequence}.${contentType === 'video/mp4' ? 'mp4' : 'webm'}`;
}

/** The recording-chunk intake of one process. */
export interface RecordingIntake {
  /**
   * Appends the chunk a request carries. `started` is called first, before the body is read, unless
   * the token's session is remembered as started with time left; it must throw the room's errors
   * (404, 409) for anything else and return the session. `params` are the request's other parameters
   * (query); the body's fields win over them. `sources` are those the caller may send (the room's
   * webcam and screen by default; the phone's path: `mobile`), an absent `source` meaning the first;
   * another is 422. Returns the acknowledgement; throws as
   * RoomService.appendRecording describes.
   */
  append(
    token: string,
    params: Params,
    body: ChunkBody,
    started: (token: string) => Promise<StartedSession>,
    sources?: readonly RecordingSource[],
  ): Promise<RecordingAck>;
  /** Remembers the token's session as started (any request that read it may say so). */
  remember(token: string, session: StartedSession): void;
  /** Forgets what is remembered of the token's session (it was moved here). */
  forget(token: string): void;
}

/** Builds the intake over the database, the clock and the storage. Returns it; throws nothing. */
export function createRecordingIntake(deps: { db: Db; clock: Clock; storage: Storage }): RecordingIntake {
  const { db, clock, storage } = deps;
  const ledger: ChunkLedger = createChunkLedger(db);
  const sessions = new Map<string, Remembered>();
  const recordings = new Map<string, RecordingState>();

  /** Keeps both memories bounded: expired sessions go, and the recordings' hints are only hints. */
  function sweep(now: number): void {
    if (recordings.size > 2 * SWEEP_ABOVE) recordings.clear();
    if (sessions.size <= SWEEP_ABOVE) return;
    for (const [token, remembered] of sessions) {
      if (remembered.until <= now) sessions.delete(token);
    }
  }

  /** The started session of a token: remembered while trusted and its time lasts, else asked for. */
  async function sessionOf(
    token: string,
    started: (token: string) => Promise<StartedSession>,
  ): Promise<StartedSession> {
    const now = performance.now();
    const remembered = sessions.get(token);
    if (remembered !== undefined && remembered.until > now) {
      const { deadline } = remembered.session;
      if (deadline === null || clock.now() < deadline) return remembered.session;
    }
    sessions.delete(token);
    const session = await started(token);
    sessions.set(token, { session, until: now + SESSION_TRUST_MS });
    sweep(now);
    return session;
  }

  /** The remembered state of a session's recording of `kind`, read from the database when absent or `fresh`. */
  async function recordingOf(sessionId: number, kind: string, fresh = false): Promise<RecordingState> {
    const key = `${sessionId}:${kind}`;
    const known = recordings.get(key);
    if (known !== undefined && !fresh) return known;
    const read = await recordingState(db, sessionId, kind);
    const state: RecordingState = { next: read.next, contentType: known?.contentType ?? read.contentType };
    recordings.set(key, state);
    return state;
  }

  /**
   * Whether the file part should be kept: when the fields say it is the chunk expected next, or
   * ahead of what is remembered (another serving process may have taken the chunks between: the
   * ledger judges, and a chunk it refuses is removed), or when they do not say yet (fields after the
   * file: judged once the body is read). A chunk below the remembered next is a resend.
   */
  async function worthKeeping(
    sessionId: number,
    fields: Params,
    sources: readonly RecordingSource[] | undefined,
  ): Promise<{ keep: boolean; first: boolean }> {
    let chunk: { sequence: number; source: RecordingSource };
    try {
      chunk = readRecordingChunk(fields, sources);
    } catch {
      return { keep: true, first: false };
    }
    const kind = RECORDING_KINDS[chunk.source];
    const state = await recordingOf(sessionId, kind);
    return { keep: chunk.sequence >= state.next, first: chunk.sequence === 0 };
  }

  /**
   * Stores the file part (when `keep`), counting every byte: held in memory and written at once
   * (Storage.putBytes) while it stays within HOLD_BYTES, else streamed (Storage.put). Once the chunk
   * is refused (too large, not a video) the rest is only counted. Returns what became of it; throws
   * only what the request or the storage throws (an aborted upload: nothing is left behind). The
   * chunk is sealed under the data key of `institute`.
   */
  async function receive(
    data: AsyncIterable<Buffer>,
    fileName: string,
    keep: boolean,
    first: boolean,
    institute: number,
  ): Promise<Received> {
    const received: Received = {
      stored: undefined,
      size: 0,
      tooLarge: false,
      sniffed: undefined,
      head: undefined,
    };
    if (!keep) {
      for await (const piece of data) received.size += piece.length;
      received.tooLarge = received.size > RECORDING_CHUNK_MAX_BYTES;
      return received;
    }
    const inspect = (head: Buffer) => {
      received.head = head;
      received.sniffed = sniffContentType(head, fileName);
      // A first chunk that is no video is refused as soon as its first bytes show it.
      if (first && (received.sniffed === undefined || !RECORDING_TYPES.includes(received.sniffed))) {
        throw new UnsupportedMediaType('File type not allowed');
      }
    };
    const { putBytes } = storage;
    if (putBytes === undefined) return stream(data, received, inspect, [], institute);
    const pieces = data[Symbol.asyncIterator]();
    const held: Buffer[] = [];
    let inspected = false;
    for (let next = await pieces.next(); next.done !== true; next = await pieces.next()) {
      const piece = next.value;
      received.size += piece.length;
      held.push(piece);
      if (!inspected && received.size >= SNIFF_BYTES) {
        inspected = true;
        if (!inspectHeld(held, inspect)) return countRest(pieces, received);
      }
      if (received.size > HOLD_BYTES) {
        // Too large to hold: what is held goes first into the stream, then the rest.
        received.size = 0; // counted again as the stream takes them
        return stream(rest(pieces), received, inspect, held, institute);
      }
    }
    if (!inspected && !inspectHeld(held, inspect)) return received;
    received.stored = await putBytes(held, institute);
    return received;
  }

  /**
   * Runs `inspect` on the first SNIFF_BYTES of `held` (fewer when that is all there is). Returns
   * false when it refused the chunk (UnsupportedMediaType); throws whatever else it throws.
   */
  function inspectHeld(held: readonly Buffer[], inspect: (head: Buffer) => void): boolean {
    const [only] = held;
    const head =
      only !== undefined && (held.length === 1 || only.length >= SNIFF_BYTES)
        ? only.subarray(0, SNIFF_BYTES)
        : Buffer.concat(held).subarray(0, SNIFF_BYTES);
    try {
      inspect(head);
      return true;
    } catch (error) {
      if (error instanceof UnsupportedMediaType) return false;
      throw error;
    }
  }

  /** Counts what is left of a refused chunk's bytes. Returns `received`. */
  async function countRest(pieces: AsyncIterator<Buffer>, received: Received): Promise<Received> {
    for (let next = await pieces.next(); next.done !== true; next = await pieces.next()) {
      received.size += next.value.length;
    }
    return received;
  }

  /**
   * Streams the chunk into the storage (Storage.put): first the pieces already `held`, then `data`,
   * counting every byte into `received`; once the storage refuses (too large, not a video) the rest
   * is only counted. Returns `received`; throws what the request or the storage throws.
   */
  async function stream(
    data: AsyncIterable<Buffer>,
    received: Received,
    inspect: (head: Buffer) => void,
    held: readonly Buffer[],
    institute: number,
  ): Promise<Received> {
    // The body's pieces are pushed into the storage's stream as they arrive (no stage between);
    // past its buffer, the next piece waits until the storage asks for more (`read`), or has failed.
    let wanted: (() => void) | undefined;
    let asked = false;
    const body = new Readable({
      highWaterMark: STREAM_BUFFER_BYTES,
      read() {
        const resume = wanted;
        wanted = undefined;
        if (resume === undefined) asked = true;
        else resume();
      },
    });
    let failure: unknown;
    let settled = false;
    const putting = storage
      .put(body, { institute, maxBytes: RECORDING_CHUNK_MAX_BYTES, headBytes: SNIFF_BYTES, inspect })
      .then(
        (stored) => {
          settled = true;
          received.stored = stored;
        },
        (error: unknown) => {
          settled = true;
          failure = error;
        },
      );
    try {
      for (const piece of held) {
        received.size += piece.length;
        body.push(piece);
      }
      for await (const piece of data) {
        received.size += piece.length;
        if (settled || body.destroyed) continue;
        if (body.push(piece)) continue;
        if (asked) {
          asked = false;
          continue;
        }
        await new Promise<void>((resolve) => {
          wanted = resolve;
          void putting.then(resolve);
        });
      }
    } catch (error) {
      // The request broke off: the storage drops what it had.
      body.destroy(error as Error);
      await putting;
      throw error;
    }
    if (!settled && !body.destroyed) body.push(null);
    await putting;
    if (failure instanceof PayloadTooLarge) {
      received.tooLarge = true;
      return received;
    }
    if (failure instanceof UnsupportedMediaType) return received;
    if (failure instanceof Error) throw failure;
    if (failure !== undefined) throw new Error('the storage failed without an error object');
    return received;
  }

  /** The pieces an iterator has left, as an iterable. */
  async function* rest(pieces: AsyncIterator<Buffer>): AsyncGenerator<Buffer> {
    for (let next = await pieces.next(); next.done !== true; next = await pieces.next()) yield next.value;
  }

  /** Removes a stored object that will not be recorded; a failure leaves unreachable garbage only. */
  async function discard(received: Received | undefined): Promise<void> {
    if (received?.stored === undefined) return;
    const { key } = received.stored;
    received.stored = undefined;
    try {
      await storage.delete(key);
    } catch {
      // unreachable without a record; nothing points at it
    }
  }

  /**
   * Judges the request once its body is read, in the order the rules have always been applied:
   * fields, file present, size, sequence, type. Returns the acknowledgement.
   */
  async function settle(
    token: string,
    session: StartedSession,
    fields: Params,
    received: Received | undefined,
    started: (token: string) => Promise<StartedSession>,
    sources: readonly RecordingSource[] | undefined,
  ): Promise<RecordingAck> {
    const { sequence, source, ageMs } = readRecordingChunk(fields, sources);
    const kind = RECORDING_KINDS[source];
    if (received === undefined || received.size === 0) throw new ParamMissing('file');
    if (received.tooLarge) {
      throw new PayloadTooLarge(`Recording chunk too large (at most ${RECORDING_CHUNK_MAX_BYTES} bytes)`);
    }
    let state = await recordingOf(session.id, kind);
    // Sequences are stored without gaps, so one below the next is already there: a resend. One
    // ahead of what this process remembers goes to the ledger, which records it only when it is the
    // next stored (other serving processes take a recording's chunks too: asking the database
    // first would cost a query per chunk); when it is not, the database is asked below.
    if (sequence < state.next) return { stored: false, nextSequence: state.next };
    if (sequence === 0) {
      const type = received.sniffed;
      if (type === undefined || !RECORDING_TYPES.includes(type)) {
        throw new UnsupportedMediaType(
          type === undefined ? 'File type not allowed' : `File type not allowed: ${type}`,
        );
      }
    }
    if (received.stored === undefined) {
      // Skipped while it looked like a resend, and now it is not (fields after the file, or another
      // request was refused meanwhile): the client sends it again.
      state = await recordingOf(session.id, kind, true);
      if (sequence < state.next) return { stored: false, nextSequence: state.next };
      throw new StateConflictMessage(`Expected ${source} recording chunk ${state.next}, not ${sequence}`);
    }
    // Chunk 0 may have been stored by another process since this one looked.
    if (sequence > 0 && state.contentType === undefined) {
      state.contentType = await sessionFileType(db, session.id, kind, 0);
    }
    const contentType =
      (sequence === 0 ? received.sniffed : state.contentType) ?? RECORDING_TYPES[0] ?? 'video/webm';
    const { stored } = received;
    const now = clock.now();
    const recorded = await ledger.record({
      sessionId: session.id,
      kind,
      sequence,
      storageKey: stored.key,
      originalName: chunkFileName(source, sequence, contentType),
      contentType,
      size: stored.size,
      sha256: stored.sha256,
      now,
      // Placed when the page made it, not when it arrived (it may have waited on the device).
      placedAt: now - ageMs,
    });
    if (recorded) {
      // Only the one expected next was recorded, so the state moves on (a twin may have moved it).
      state.next = Math.max(state.next, sequence + 1);
      if (sequence === 0) state.contentType = contentType;
      return { stored: true, nextSequence: sequence + 1 };
    }
    // Refused by the database: the session left exam_started (answered as any such request is), or
    // a twin recorded this sequence first (a resend), or the client is ahead.
    await discard(received);
    sessions.delete(token);
    await started(token);
    state = await recordingOf(session.id, kind, true);
    if (sequence < state.next) return { stored: false, nextSequence: state.next };
    throw new StateConflictMessage(`Expected ${source} recording chunk ${state.next}, not ${sequence}`);
  }

  return {
    async append(token, params, body, started, sources) {
      const session = await sessionOf(token, started);
      const fields: Record<string, unknown> = { ...params };
      let received: Received | undefined;
      try {
        for (let part = await body.next(); part !== undefined; part = await body.next()) {
          if (part.type === 'field') {
            // An own property whatever the name (`__proto__` included); a repeated field: the last wins.
            Object.defineProperty(fields, part.name, {
              value: part.value,
              enumerable: true,
              writable: true,
              configurable: true,
            });
            continue;
          }
          // The first part named `file` is the chunk; any other file part is skipped by next().
          if (part.name !== 'file' || received !== undefined) continue;
          const { keep, first } = await worthKeeping(session.id, fields, sources);
          received = await receive(body.fileData(), part.fileName, keep, first, session.instituteId);
        }
        const ack = await settle(token, session, fields, received, started, sources);
        if (ack.stored) received = undefined;
        return ack;
      } finally {
        await discard(received);
      }
    },

    remember(token, session) {
      const now = performance.now();
      sessions.set(token, { session, until: now + SESSION_TRUST_MS });
      sweep(now);
    },

    forget(token) {
      sessions.delete(token);
    },
  };
}
