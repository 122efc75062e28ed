import type { Logger } from 'pino';
import { isDatabaseUnavailable } from '../db/unavailable.ts';
import type { RoomService } from '../domain/room/room.service.ts';

/**
 * How often the worker finishes sessions whose deadline passed unnoticed. A sweep finishes every one
 * due when it starts, so a session ends at most this long (plus the sweep itself) after its deadline:
 * well within the minute docs/jobs.md promises.
 */
export const TIME_UP_INTERVAL_MS = 30_000;

/**
 * Starts the time-up sweep of the worker role: at once, then every `intervalMs`, it finishes the
 * started sessions whose deadline has passed though no request reopened them (room.finishTimedOut),
 * which queues their finalisation and webhook. A sweep still running when the next is due makes that
 * one skip; a failing sweep is logged and the next one tries again. Returns a function that stops
 * the timer and resolves once a sweep in progress has finished.
 */
export function startTimeUpSweep(deps: {
  readonly room: Pick<RoomService, 'finishTimedOut'>;
  readonly logger: Logger;
  readonly intervalMs?: number;
}): () => Promise<void> {
  const { room, logger } = deps;
  let current: Promise<void> | undefined;
  const sweep = async () => {
    try {
      const { checked, finished } = await room.finishTimedOut();
      if (finished > 0) logger.info({ checked, finished }, 'sessions past their deadline finished');
    } catch (error) {
      if (isDatabaseUnavailable(error)) logger.warn({ err: error }, 'time-up sweep: database unavailable');
      else logger.error({ err: error }, 'time-up sweep failed');
    }
  };
  const start = () => {
    if (current !== undefined) return;
    current = sweep().finally(() => {
      current = undefined;
    });
  };
  start();
  const timer = setInterval(start, deps.intervalMs ?? TIME_UP_INTERVAL_MS);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await current;
  };
}
