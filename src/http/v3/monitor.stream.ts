import type { Writable } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import { isDatabaseUnavailable } from '../../db/unavailable.ts';
import type { MonitorChange, MonitorSnapshot } from '../../domain/monitor/monitor.ts';
import type { MonitorFeed } from '../../domain/monitor/monitor.service.ts';
import {
  presentMonitorSessionV3,
  presentMonitorSnapshotV3,
  presentStatusCountsV3,
} from './monitor.presenter.ts';

/**
 * The live monitor's server-sent event stream (docs/live-monitor.md): a feed's snapshot, then its
 * changes as it polls, heartbeats, and an `end` event before the server closes the stream itself.
 */

/** How a stream paces itself. */
export interface StreamTiming {
  /** Between the end of one look at the database and the start of the next. */
  readonly pollMs: number;
  /** Between two heartbeat comments; access to the exam is checked again at each. */
  readonly heartbeatMs: number;
  /** How long one stream lasts before it asks the client to reconnect. */
  readonly lifetimeMs: number;
  /** The reconnection delay the stream suggests to EventSource (`retry:`). */
  readonly retryMs: number;
  /** How much unsent text may pile up for a client that does not read before it is dropped. */
  readonly maxBufferedBytes: number;
}

export const STREAM_TIMING: StreamTiming = {
  pollMs: 1000,
  heartbeatMs: 15_000,
  lifetimeMs: 10 * 60 * 1000,
  retryMs: 3000,
  maxBufferedBytes: 1024 * 1024,
};

/**
 * Why the server ended a stream: `reconnect` (its lifetime is over, or the server is shutting down:
 * connect again), `not_found` (the exam is gone or no longer readable: do not), `unavailable` (the
 * database failed: connect again after the retry delay), `too_slow` (the client read too little),
 * `error` (anything else; logged).
 */
export type EndReason = 'reconnect' | 'not_found' | 'unavailable' | 'too_slow' | 'error';

/** A running stream. */
export interface MonitorStream {
  /**
   * Stops polling and closes the feed; with a reason, first tells the client why in an `end` event,
   * then ends the stream. Idempotent.
   */
  stop(reason?: EndReason): void;
  /** True once stopped. */
  readonly stopped: boolean;
}

/**
 * One server-sent event: `id` (optional), `event`, and `data` as one line of JSON (JSON escapes
 * every line break inside strings, so an event can never be split). Returns its text.
 */
export function sseEvent(event: string, data: unknown, id?: number): string {
  return `${id === undefined ? '' : `id: ${id}\n`}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

function changeEvent(change: MonitorChange, id: number): string {
  switch (change.kind) {
    case 'session':
      return sseEvent('session', presentMonitorSessionV3(change.session), id);
    case 'removed':
      return sseEvent('removed', { id: change.id }, id);
    case 'counts':
      return sseEvent('counts', presentStatusCountsV3(change.counts), id);
  }
}

/** The snapshot event that opens every stream. */
export function snapshotEvent(snapshot: MonitorSnapshot, id: number): string {
  return sseEvent('snapshot', presentMonitorSnapshotV3(snapshot), id);
}

/**
 * Runs `feed` onto `out`: writes the retry delay and the snapshot at once, then polls every
 * `pollMs` (never two looks at a time), writes each change as an event, a heartbeat comment every
 * `heartbeatMs` (checking access again), and ends with `reconnect` after `lifetimeMs`. A failed look
 * ends the stream (`unavailable` for a database outage, else `error`, logged). The caller stops it
 * when the client goes. Returns the running stream.
 */
export function runMonitorStream(
  feed: MonitorFeed,
  out: Writable,
  options: { readonly timing?: StreamTiming; readonly log: FastifyBaseLogger },
): MonitorStream {
  const timing = options.timing ?? STREAM_TIMING;
  const { log } = options;
  let stopped = false;
  let pollTimer: NodeJS.Timeout | undefined;

  const write = (text: string) => {
    if (stopped || out.writableEnded || out.destroyed) return;
    out.write(text);
    // A client that stopped reading would make the server hold every event for it.
    if (out.writableLength > timing.maxBufferedBytes) stream.stop('too_slow');
  };

  const failed = (error: unknown) => {
    if (stopped) return;
    if (isDatabaseUnavailable(error)) {
      stream.stop('unavailable');
      return;
    }
    log.error({ err: error, examId: feed.snapshot.examId }, 'live monitor stream failed');
    stream.stop('error');
  };

  const poll = async () => {
    pollTimer = undefined;
    try {
      const changes = await feed.poll();
      for (const change of changes) write(changeEvent(change, feed.cursor()));
    } catch (error) {
      failed(error);
      return;
    }
    if (!stopped) pollTimer = setTimeout(() => void poll(), timing.pollMs);
  };

  const heartbeat = setInterval(() => {
    write(': heartbeat\n\n');
    feed.stillVisible().then(
      (visible) => {
        if (!visible) stream.stop('not_found');
      },
      (error: unknown) => failed(error),
    );
  }, timing.heartbeatMs);
  const lifetime = setTimeout(() => stream.stop('reconnect'), timing.lifetimeMs);

  const stream: MonitorStream = {
    get stopped() {
      return stopped;
    },
    stop(reason) {
      if (stopped) return;
      stopped = true;
      clearTimeout(pollTimer);
      clearInterval(heartbeat);
      clearTimeout(lifetime);
      feed.close();
      if (out.writableEnded || out.destroyed) return;
      if (reason !== undefined) out.write(sseEvent('end', { reason }));
      // A client that does not read would keep what is buffered for it, and its connection, forever.
      if (reason === 'too_slow') out.destroy();
      else out.end();
    },
  };

  write(`retry: ${timing.retryMs}\n\n`);
  write(snapshotEvent(feed.snapshot, feed.cursor()));
  if (!stopped) pollTimer = setTimeout(() => void poll(), timing.pollMs);
  return stream;
}
