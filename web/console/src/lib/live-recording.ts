/**
 * Near-live watching of a running session: the room uploads each recording as 4-second WebM chunks
 * (a page reload starts a new recorder, whose first chunk begins with its own WebM header), and
 * this module appends them, as they are listed, to a MediaSource SourceBuffer in `sequence` mode, so
 * the chunks play as one stream whatever their own timestamps say.
 *
 * It starts a few chunks from the newest: with the header of the newest recorder start among them,
 * or else the header of the session's first chunk followed by the first cluster of those chunks
 * (every chunk of one room has the same tracks). A missing chunk or a new recorder resets the
 * parser and goes on at the next cluster. It keeps the player near the live edge and drops what
 * lies far behind it, so memory stays bounded however long the exam lasts.
 */
import { t } from '../../../shared/i18n.svelte.ts';

/** A chunk as the session files listing gives it. */
export interface LiveChunk {
  readonly sequence: number;
  readonly url: string;
}

/** What the viewer is told. */
export type LiveState =
  | { readonly kind: 'waiting' }
  | { readonly kind: 'playing'; readonly sequence: number }
  | { readonly kind: 'failed'; readonly reason: string };

export interface LiveFeed {
  /** Stops polling and lets the MediaSource go. */
  stop(): void;
}

/** How often the chunk list is read (ms). */
export const POLL_MS = 3000;
/** How many of the newest chunks the player starts with (about 12 s behind the candidate). */
const START_CHUNKS = 3;
/** Farther than this behind the newest data (s), the player jumps ahead to it. */
const MAX_LAG_SECONDS = 12;
/** Data older than this behind the playhead (s) is removed from the buffer. */
const KEEP_BEHIND_SECONDS = 60;

const EBML_HEADER = [0x1a, 0x45, 0xdf, 0xa3];
const CLUSTER = [0x1f, 0x43, 0xb6, 0x75];
/** The Timecode element, the first child of every cluster the browser writes. */
const CLUSTER_TIMECODE = 0xe7;

/** Whether `bytes` holds `pattern` at `at`. */
function holds(bytes: Uint8Array, at: number, pattern: readonly number[]): boolean {
  return pattern.every((value, index) => bytes[at + index] === value);
}

/** Whether a chunk begins a recorder's stream (its own WebM header). */
export function startsStream(bytes: Uint8Array): boolean {
  return holds(bytes, 0, EBML_HEADER);
}

/**
 * Where the first cluster of a chunk begins: a Cluster id, then its size (an EBML variable-length
 * number), then a Timecode element; -1 when the chunk has none (a cluster's middle only).
 */
export function firstCluster(bytes: Uint8Array): number {
  for (let at = 0; at + 5 < bytes.length; at += 1) {
    if (!holds(bytes, at, CLUSTER)) continue;
    const sizeByte = bytes[at + 4] ?? 0;
    if (sizeByte === 0) continue;
    const sizeLength = Math.clz32(sizeByte) - 23;
    if (bytes[at + 4 + sizeLength] === CLUSTER_TIMECODE) return at;
  }
  return -1;
}

/** The MediaSource type of a recorder's stream, from the codec ids its header names. */
export function streamType(header: Uint8Array): string {
  const text = new TextDecoder('latin1').decode(header.subarray(0, Math.min(header.length, 4096)));
  const codecs: string[] = [];
  if (text.includes('V_VP9')) codecs.push('vp9');
  else if (text.includes('V_VP8')) codecs.push('vp8');
  else if (text.includes('V_AV1')) codecs.push('av01.0.04M.08');
  if (text.includes('A_OPUS')) codecs.push('opus');
  else if (text.includes('A_VORBIS')) codecs.push('vorbis');
  return codecs.length === 0 ? 'video/webm' : `video/webm; codecs="${codecs.join(',')}"`;
}

/**
 * Follows one recording in `video`. `list` reads the recording's chunks (ordered by sequence);
 * `onstate` hears what to tell the viewer. Returns the feed, to stop it.
 */
export function followLive(
  video: HTMLVideoElement,
  list: () => Promise<readonly LiveChunk[]>,
  onstate: (state: LiveState) => void,
): LiveFeed {
  const mediaSource = new MediaSource();
  const objectUrl = URL.createObjectURL(mediaSource);
  let buffer: SourceBuffer | undefined;
  let last = -1;
  let stopped = false;
  let timer: number | undefined;

  video.muted = true;
  video.src = objectUrl;

  async function bytesOf(chunk: LiveChunk): Promise<Uint8Array> {
    const response = await fetch(chunk.url, { credentials: 'same-origin' });
    if (!response.ok)
      throw new Error(
        t('console.liveRecording.chunkFailed', { sequence: chunk.sequence, status: String(response.status) }),
      );
    return new Uint8Array(await response.arrayBuffer());
  }

  function settled(target: SourceBuffer): Promise<void> {
    return new Promise((resolve, reject) => {
      const done = (): void => {
        target.removeEventListener('updateend', done);
        target.removeEventListener('error', failed);
        resolve();
      };
      const failed = (): void => {
        target.removeEventListener('updateend', done);
        target.removeEventListener('error', failed);
        reject(new Error(t('console.liveRecording.unreadable')));
      };
      target.addEventListener('updateend', done);
      target.addEventListener('error', failed);
    });
  }

  /** The SourceBuffer, made for the stream whose header is `header` on first use. */
  function bufferFor(header: Uint8Array): SourceBuffer {
    if (buffer !== undefined) return buffer;
    const type = streamType(header);
    if (!MediaSource.isTypeSupported(type)) throw new Error(t('console.liveRecording.unsupported', { type }));
    buffer = mediaSource.addSourceBuffer(type);
    buffer.mode = 'sequence';
    return buffer;
  }

  /** Drops what lies long behind the playhead, so a two-hour exam does not fill the memory. */
  async function trim(target: SourceBuffer): Promise<void> {
    const buffered = target.buffered;
    if (buffered.length === 0) return;
    const behind = video.currentTime - KEEP_BEHIND_SECONDS;
    if (buffered.start(0) >= behind) return;
    target.remove(0, behind);
    await settled(target);
  }

  async function append(target: SourceBuffer, bytes: Uint8Array): Promise<void> {
    if (bytes.length === 0) return;
    await trim(target);
    target.appendBuffer(bytes as Uint8Array<ArrayBuffer>);
    await settled(target);
  }

  /** Appends a chunk that does not follow the last one: after a parser reset, from a clean start. */
  async function appendFresh(target: SourceBuffer, bytes: Uint8Array): Promise<boolean> {
    if (target.updating) await settled(target);
    target.abort();
    if (startsStream(bytes)) {
      await append(target, bytes);
      return true;
    }
    const cluster = firstCluster(bytes);
    if (cluster < 0) return false;
    await append(target, bytes.subarray(cluster));
    return true;
  }

  /** The first append: a few chunks from the newest, with a header in front of them. */
  async function begin(chunks: readonly LiveChunk[]): Promise<void> {
    const window = chunks.slice(-START_CHUNKS);
    const fetched = await Promise.all(window.map(bytesOf));
    const startAt = fetched.findLastIndex(startsStream);
    if (startAt >= 0) {
      const target = bufferFor(fetched[startAt] as Uint8Array);
      for (const bytes of fetched.slice(startAt)) await append(target, bytes);
    } else {
      const first = chunks[0] as LiveChunk;
      const header = await bytesOf(first);
      const headerEnd = firstCluster(header);
      if (!startsStream(header) || headerEnd < 0) throw new Error(t('console.liveRecording.noStart'));
      const target = bufferFor(header);
      await append(target, header.subarray(0, headerEnd));
      let started = false;
      for (const bytes of fetched) {
        if (!started) started = await appendFresh(target, bytes);
        else await append(target, bytes);
      }
      if (!started) return;
    }
    last = (window.at(-1) as LiveChunk).sequence;
  }

  async function follow(chunks: readonly LiveChunk[]): Promise<void> {
    const target = buffer;
    if (target === undefined) return;
    for (const chunk of chunks) {
      if (chunk.sequence <= last || stopped) continue;
      const bytes = await bytesOf(chunk);
      const continues = chunk.sequence === last + 1 && !startsStream(bytes);
      if (continues) await append(target, bytes);
      else if (!(await appendFresh(target, bytes))) continue;
      last = chunk.sequence;
    }
  }

  /** Keeps the playhead within MAX_LAG_SECONDS of the newest data, playing. */
  function keepLive(): void {
    const buffered = video.buffered;
    if (buffered.length === 0) return;
    const end = buffered.end(buffered.length - 1);
    if (end - video.currentTime > MAX_LAG_SECONDS || video.currentTime < buffered.start(0)) {
      video.currentTime = Math.max(buffered.start(buffered.length - 1), end - 3);
    }
    if (video.paused) video.play().catch(() => undefined);
  }

  async function poll(): Promise<void> {
    if (stopped) return;
    try {
      const chunks = [...(await list())].sort((a, b) => a.sequence - b.sequence);
      if (chunks.length === 0) onstate({ kind: 'waiting' });
      else if (last < 0) await begin(chunks);
      else await follow(chunks);
      if (last >= 0) {
        keepLive();
        onstate({ kind: 'playing', sequence: last });
      }
    } catch (error) {
      onstate({ kind: 'failed', reason: error instanceof Error ? error.message : String(error) });
      if (buffer !== undefined && mediaSource.readyState !== 'open') return;
    }
    if (!stopped) timer = window.setTimeout(() => void poll(), POLL_MS);
  }

  mediaSource.addEventListener('sourceopen', () => void poll(), { once: true });

  return {
    stop() {
      stopped = true;
      window.clearTimeout(timer);
      video.removeAttribute('src');
      video.load();
      URL.revokeObjectURL(objectUrl);
    },
  };
}
