/**
 * The SQLite checkpointer's thread (sqlite-checkpointer.ts): its own connection to the database file,
 * copying the write-ahead log into the database every `intervalMs` with a passive checkpoint, which
 * never waits for nor blocks the service's writers. Stops (closing its connection) on 'stop'.
 */
import { DatabaseSync } from 'node:sqlite';
import { parentPort, workerData } from 'node:worker_threads';

const { file, intervalMs } = workerData as { file: string; intervalMs: number };
const db = new DatabaseSync(file);
const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');

const timer = setInterval(() => {
  try {
    checkpoint.get();
  } catch {
    // Busy or gone: the next turn tries again, and the service's own close checkpoints at the end.
  }
}, intervalMs);

parentPort?.on('message', (message: unknown) => {
  if (message !== 'stop') return;
  clearInterval(timer);
  if (db.isOpen) db.close();
  parentPort?.close();
});
