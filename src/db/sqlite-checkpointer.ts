import { Worker } from 'node:worker_threads';

/** How often the write-ahead log is copied into the database file. */
export const CHECKPOINT_INTERVAL_MS = 1000;

/** A running checkpointer thread. */
export interface Checkpointer {
  /** Asks the thread to stop; it closes its connection and ends on its own. Idempotent. */
  stop(): void;
}

/**
 * Starts a thread that checkpoints the SQLite file `file` (in WAL mode) every `intervalMs`, for a
 * connection that has turned its own automatic checkpoints off (`PRAGMA wal_autocheckpoint = 0`).
 *
 * Why: node:sqlite runs on the event loop's thread, and SQLite's automatic checkpoint runs inside the
 * commit that crosses the log's threshold, copying the log and syncing the database file there.
 * Under recording load the disk is busy with synced chunk writes, and that commit held the event
 * loop for tens of milliseconds every few seconds (docs/performance.md, "Room capacity"). A passive
 * checkpoint from another thread does the same copying without holding a lock the writers wait for.
 * The thread does not keep the process alive. Returns the checkpointer.
 */
export function startCheckpointer(file: string, intervalMs = CHECKPOINT_INTERVAL_MS): Checkpointer {
  const worker = new Worker(new URL('./sqlite-checkpoint-worker.ts', import.meta.url), {
    workerData: { file, intervalMs },
  });
  worker.unref();
  // A thread that failed to start or died leaves the log to grow until the next start's checkpoint:
  // nothing is lost, so it is not worth stopping the service for.
  worker.on('error', () => undefined);
  let stopped = false;
  return {
    stop() {
      if (stopped) return;
      stopped = true;
      worker.postMessage('stop');
    },
  };
}
