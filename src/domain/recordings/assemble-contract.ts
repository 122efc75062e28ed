/**
 * What assembling one stream of a recording takes and gives, whatever the chunks' format (WebM:
 * assemble.ts; fragmented MP4: mp4-assemble.ts).
 */
import type { Gap } from './recording.ts';

/** A stored chunk of the stream, in sequence order. */
export interface ChunkRef {
  readonly sequence: number;
  readonly storageKey: string;
  /** Bytes recorded when it was stored (fewer read back: it was cut short). */
  readonly size: number;
  /** When the server stored it (epoch ms). */
  readonly createdAt: number;
}

export interface AssembleInput {
  readonly chunks: readonly ChunkRef[];
  /**
   * The chunk's bytes, in the pieces they were read in (not joined: one copy fewer), or undefined
   * when its object is gone. Throws for anything worth a retry.
   */
  read(chunk: ChunkRef): Promise<readonly Uint8Array[] | undefined>;
  /** Video time 0 (epoch ms): the session's recording start. */
  readonly startedAt: number;
  /** When the recording ended (epoch ms), for a gap at the end; null when unknown. */
  readonly endedAt: number | null;
  /** Where the file is written (a temporary file the caller removes). */
  readonly outputPath: string;
  /** Gaps shorter than this (ms) are not reported. */
  readonly gapThresholdMs: number;
  readonly signal?: AbortSignal;
  /** Called every few chunks with the number read so far. */
  progress?(done: number): Promise<void>;
}

export interface AssembleResult {
  readonly durationSeconds: number;
  readonly gaps: readonly Gap[];
  readonly segments: number;
  /** Chunks missing or cut short. */
  readonly chunksDamaged: number;
  /** Places where the stream did not parse and the reader searched forward. */
  readonly resyncs: number;
  /** The file's type: video/webm (WebM chunks) or video/mp4 (fragmented-MP4 chunks, Safari's). */
  readonly contentType: RecordingContentType;
}

/** What a finalised recording is. */
export type RecordingContentType = 'video/webm' | 'video/mp4';

/** The stream holds nothing that can be played (every chunk lost, or neither WebM nor MP4). */
export class NoPlayableRecording extends Error {
  override name = 'NoPlayableRecording';
}

/** One chunk as the assemblers take it: its bytes (undefined when gone) and their length. */
export interface ReadChunk {
  readonly chunk: ChunkRef;
  readonly index: number;
  readonly pieces: readonly Uint8Array[] | undefined;
  readonly length: number;
}

/**
 * The chunks of `input` in order with their bytes, each one read while the one before it is
 * parsed (one chunk ahead, no more: memory stays bounded). Throws the signal's reason when aborted
 * and what `read` throws.
 */
export async function* readAhead(input: AssembleInput): AsyncGenerator<ReadChunk> {
  let next = input.chunks[0] === undefined ? undefined : input.read(input.chunks[0]);
  for (const [index, chunk] of input.chunks.entries()) {
    input.signal?.throwIfAborted();
    const pieces = await next;
    const following = input.chunks[index + 1];
    next = following === undefined ? undefined : input.read(following);
    // Awaited on the next turn; a failure meanwhile must not count as unhandled.
    next?.catch(() => undefined);
    const length = pieces?.reduce((sum, piece) => sum + piece.length, 0) ?? 0;
    yield { chunk, index, pieces, length };
  }
}

/**
 * The placing rules both assemblers follow (WebM's and MP4's): a segment (one recorder's run) is
 * placed on the exam's clock from the arrival of its first PLACEMENT_CHUNKS chunks (about 16 s); a
 * frame never lasts longer than MAX_FRAME_MS (a longer distance to the next one is a gap); progress
 * is told every PROGRESS_EVERY chunks.
 */
export const PLACEMENT_CHUNKS = 4;
export const MAX_FRAME_MS = 1000;
export const PROGRESS_EVERY = 25;

/**
 * The offset (output ms = media ms + offset) of a segment whose buffered frames start at media time
 * `firstMs` (Infinity when it has none): where its chunks' arrival says it began (`estimates`: each
 * chunk's arrival − the media time it reached; none: the recording's start), but never over what
 * the file already covers (`coveredUntil`, ms) and never before time 0.
 */
export function segmentOffsetMs(
  firstMs: number,
  estimates: readonly number[],
  startedAt: number,
  coveredUntil: number,
): number {
  const wallStart = estimates.length === 0 ? startedAt : Math.min(...estimates);
  const earliest = Number.isFinite(firstMs) ? coveredUntil - firstMs : coveredUntil;
  return Math.max(wallStart - startedAt, earliest, 0);
}
