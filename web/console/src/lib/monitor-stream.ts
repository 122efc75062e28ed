/**
 * The live monitor's event stream (GET /api/v3/exams/{id}/monitor, docs/live-monitor.md), typed:
 * a `snapshot` first, then `session`, `removed` and `counts` as they happen, `end` before the
 * server closes. Reconnects after a dropped connection with a growing delay (1 s, 2 s, 4 s… at most
 * 30 s, the first never sooner than the server's `retry:`), and each new connection starts with a
 * fresh snapshot.
 *
 * Why not EventSource: the V3 scope answers 406 unless Accept names the V3 media type, and an
 * EventSource always sends `Accept: text/event-stream` and nothing else. So the stream is read with
 * fetch (same origin, the session cookie rides along) and parsed here, line by line, exactly as the
 * event-stream format says (fields, blank line ends an event, `:` comments, CRLF/LF/CR).
 */
import { t } from '../../../shared/i18n.svelte.ts';
import type { paths } from '../../../shared/api-schema';
import { EventStreamParser, type RawEvent } from './event-stream';

type MonitorAnswer =
  paths['/api/v3/exams/{id}/monitor']['get']['responses'][200]['content']['application/json']['monitor'];

/** The whole view of an exam, the `snapshot` event's data. */
export type MonitorSnapshot = MonitorAnswer;
/** One session as the monitor shows it, the `session` event's data. */
export type MonitorSession = MonitorAnswer['sessions'][number];
/** The counts by status and the total, the `counts` event's data. */
export type StatusCounts = MonitorAnswer['counts'];
export type SessionStatus = MonitorSession['status'];

/** Where the connection stands, for the status line. */
export type StreamState =
  | { readonly kind: 'connecting' }
  | { readonly kind: 'live' }
  | {
      readonly kind: 'reconnecting';
      readonly attempt: number;
      readonly delayMs: number;
      readonly why: string;
    }
  | { readonly kind: 'stopped'; readonly why: string };

/** What the screen does with each event. */
export interface MonitorHandlers {
  snapshot(view: MonitorSnapshot): void;
  session(session: MonitorSession): void;
  removed(id: number): void;
  counts(counts: StatusCounts): void;
  state(state: StreamState): void;
}

/** The first reconnection delay and the longest. */
const BACKOFF = { firstMs: 1000, maxMs: 30_000 } as const;

/**
 * How long a stream may stay silent before it is taken for dead: the server sends a heartbeat every
 * 15 s, so three missed ones mean a connection that died without closing (a laptop that slept, a
 * network that changed).
 */
const SILENCE_MS = 45_000;

/** The delay before reconnection `attempt` (1, 2, 3…): doubling from `firstMs`, at most `maxMs`. */
export function backoffDelay(attempt: number, firstMs: number = BACKOFF.firstMs): number {
  return Math.min(BACKOFF.maxMs, firstMs * 2 ** Math.max(0, attempt - 1));
}

/** Why the server ended a stream, in words, and whether to come back. */
function endReason(reason: unknown): { why: string; again: boolean } {
  switch (reason) {
    case 'not_found':
      return { why: t('console.monitorStream.examGone'), again: false };
    case 'unavailable':
      return { why: t('console.monitorStream.databaseUnavailable'), again: true };
    case 'too_slow':
      return { why: t('console.monitorStream.tooSlow'), again: true };
    default:
      return { why: t('console.monitorStream.askedAgain'), again: true };
  }
}

/** A running monitor stream. */
export interface MonitorConnection {
  /** Closes the stream and stops reconnecting. Idempotent. */
  close(): void;
}

/**
 * Opens the monitor stream of exam `examId` and keeps it open, calling `handlers` for each event
 * and each change of connection state. A 403 or 404 stops for good (with the reason); a network
 * failure, a 5xx, a stream silent for SILENCE_MS, the browser going offline or the server's `end`
 * with a reason to come back reconnects after `backoffDelay` (at once when the browser comes back
 * online). Returns the connection; throws nothing.
 */
export function openMonitorStream(examId: number | string, handlers: MonitorHandlers): MonitorConnection {
  let closed = false;
  let attempt = 0;
  /** Counts connections: a late answer or failure of an earlier one is ignored. */
  let generation = 0;
  let controller: AbortController | undefined;
  let retryTimer: ReturnType<typeof setTimeout> | undefined;
  let silence: ReturnType<typeof setTimeout> | undefined;
  let serverRetry: number | undefined;

  const current = (mine: number) => !closed && mine === generation;

  /** Drops the connection in use, if any: whatever it still reports is ignored. */
  const drop = () => {
    generation += 1;
    clearTimeout(silence);
    controller?.abort();
    controller = undefined;
  };

  const stop = (why: string) => {
    drop();
    closed = true;
    handlers.state({ kind: 'stopped', why });
  };

  const retryLater = (why: string) => {
    drop();
    clearTimeout(retryTimer);
    attempt += 1;
    const delayMs = backoffDelay(attempt, Math.max(BACKOFF.firstMs, serverRetry ?? 0));
    handlers.state({ kind: 'reconnecting', attempt, delayMs, why });
    retryTimer = setTimeout(() => {
      retryTimer = undefined;
      void connect();
    }, delayMs);
  };

  /** Handles one event; returns the reason to end this connection, when it says so. */
  const handle = (raw: RawEvent): { why: string; again: boolean } | undefined => {
    const data = JSON.parse(raw.data) as unknown;
    switch (raw.event) {
      case 'snapshot':
        attempt = 0;
        handlers.snapshot(data as MonitorSnapshot);
        handlers.state({ kind: 'live' });
        return undefined;
      case 'session':
        handlers.session(data as MonitorSession);
        return undefined;
      case 'removed':
        handlers.removed((data as { id: number }).id);
        return undefined;
      case 'counts':
        handlers.counts(data as StatusCounts);
        return undefined;
      case 'end':
        return endReason((data as { reason?: unknown }).reason);
      default:
        return undefined;
    }
  };

  /** Reads events until the stream ends; returns why, and whether to come back. */
  const read = async (mine: number, body: ReadableStream<Uint8Array>, abort: AbortController) => {
    const parser = new EventStreamParser();
    const decoder = new TextDecoder();
    const reader = body.getReader();
    for (;;) {
      clearTimeout(silence);
      silence = setTimeout(() => abort.abort(), SILENCE_MS);
      const { value, done } = await reader.read();
      if (!current(mine)) return undefined;
      if (done) return { why: t('console.monitorStream.closed'), again: true };
      for (const raw of parser.push(decoder.decode(value, { stream: true }))) {
        serverRetry = parser.retry ?? serverRetry;
        const ended = handle(raw);
        if (ended !== undefined) {
          await reader.cancel();
          return ended;
        }
      }
    }
  };

  async function connect(): Promise<void> {
    if (closed) return;
    drop();
    const mine = generation;
    const abort = new AbortController();
    controller = abort;
    if (attempt === 0) handlers.state({ kind: 'connecting' });
    try {
      const response = await fetch(`/api/v3/exams/${encodeURIComponent(String(examId))}/monitor`, {
        headers: { accept: 'application/vnd.procwise.v3, text/event-stream' },
        credentials: 'same-origin',
        cache: 'no-store',
        signal: abort.signal,
      });
      if (!current(mine)) return;
      if (response.status === 403) return stop(t('console.monitorStream.forbidden'));
      if (response.status === 404) return stop(t('console.monitorStream.notFound'));
      if (!response.ok || response.body === null)
        return retryLater(t('console.monitorStream.answered', { status: String(response.status) }));
      const ended = await read(mine, response.body, abort);
      if (ended === undefined || !current(mine)) return;
      if (ended.again) retryLater(ended.why);
      else stop(ended.why);
    } catch {
      if (current(mine)) retryLater(t('console.monitorStream.interrupted'));
    }
  }

  // The browser knows first when the network goes: stop waiting on a stream that cannot deliver,
  // and come back as soon as the network does.
  const offline = () => {
    if (!closed) retryLater(t('console.monitorStream.offline'));
  };
  const online = () => {
    if (closed || retryTimer === undefined) return;
    clearTimeout(retryTimer);
    retryTimer = undefined;
    void connect();
  };
  window.addEventListener('offline', offline);
  window.addEventListener('online', online);

  void connect();
  return {
    close() {
      if (closed) return;
      drop();
      closed = true;
      clearTimeout(retryTimer);
      window.removeEventListener('offline', offline);
      window.removeEventListener('online', online);
    },
  };
}
