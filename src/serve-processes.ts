import cluster, { type Worker } from 'node:cluster';
import type { Logger } from 'pino';
import { UsageError } from './cli/usage.ts';
import { type Config, MAX_PROCESSES } from './config/config.ts';
import { openDatabase } from './db/database.ts';
import { migrateToLatest } from './db/migrate.ts';
import { loadServerKeys } from './security/keys.ts';

/**
 * `invigil serve` from several processes on one port (INVIGIL_PROCESSES, `serve --processes N`):
 * one event loop holds about a thousand recording chunks a second, so a machine's other cores can
 * only help through more processes. The supervising process (node:cluster's primary) prepares what
 * must happen once (migrations, the server key), forks the serving processes, hands them the
 * connections it accepts in turn (the cluster module's round robin), and stops them together.
 * Everything a request depends on is shared through the database, as between any serving processes
 * (docs/architecture.md, "Several processes, one service"); the first serving process alone runs
 * the background worker and its sweeps.
 */

/** The message the supervisor sends a serving process to make it shut down gracefully. */
export const STOP_MESSAGE = 'invigil:stop';

/**
 * How many processes `serve` runs: `--processes N` (or `--processes=N`) among `args`, else the
 * configuration's. Returns it; throws UsageError for a malformed or out-of-range flag.
 */
export function serveProcessCount(args: readonly string[], configured: number): number {
  let raw: string | undefined;
  for (const [index, arg] of args.entries()) {
    if (arg === '--processes') raw = args[index + 1] ?? '';
    else if (arg.startsWith('--processes=')) raw = arg.slice('--processes='.length);
  }
  if (raw === undefined) return configured;
  if (!/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > MAX_PROCESSES) {
    throw new UsageError(`--processes must be a whole number from 1 to ${MAX_PROCESSES}`);
  }
  return Number(raw);
}

/** True in a serving process forked by the supervisor other than the first (it runs no worker). */
export function isSecondaryServer(): boolean {
  return cluster.isWorker && cluster.worker?.id !== 1;
}

/** The number of this serving process among the supervisor's (1 for the first), or undefined alone. */
export function serverNumber(): number | undefined {
  return cluster.isWorker ? cluster.worker?.id : undefined;
}

/**
 * Resolves when the supervisor asks this serving process to stop (STOP_MESSAGE), or when it is gone
 * (the IPC channel closed). Never resolves in a process the supervisor did not fork.
 */
export function untilSupervisorStops(): Promise<string> {
  if (!cluster.isWorker) return new Promise(() => undefined);
  return new Promise((resolve) => {
    process.on('message', (message) => {
      if (message === STOP_MESSAGE) resolve('supervisor');
    });
    process.once('disconnect', () => resolve('supervisor gone'));
  });
}

/** Lets a forked serving process end once its work is done (closes its channel to the supervisor). */
export function releaseSupervisor(): void {
  // The cluster module's own disconnect: a channel closed otherwise makes it exit the process at once.
  if (cluster.isWorker && process.connected) cluster.worker?.disconnect();
}

function exitOf(worker: Worker): Promise<{ code: number | null; signal: string | null }> {
  if (worker.process.exitCode !== null || worker.process.signalCode !== null) {
    return Promise.resolve({ code: worker.process.exitCode, signal: worker.process.signalCode });
  }
  return new Promise((resolve) => worker.once('exit', (code, signal) => resolve({ code, signal })));
}

/**
 * The supervisor: applies pending migrations and makes sure the server key exists (once, before
 * any serving process could race for them), forks `processes` serving processes with this
 * process's arguments, and waits. On `stop` (the first SIGTERM or SIGINT) it asks each to stop
 * gracefully and waits for all of them; one that stops cleanly by itself (a signal sent to it
 * directly) stops the set the same way. A serving process that fails is a failure of the set: the
 * others are stopped and this throws, so the service's supervisor (systemd, a container runtime)
 * restarts the whole set; a lone restarted process would reset the live statuses of the others.
 * Resolves once every serving process has exited 0; throws otherwise.
 */
export async function supervise(
  config: Config,
  processes: number,
  stop: Promise<NodeJS.Signals>,
  logger: Logger,
): Promise<void> {
  const database = openDatabase(config.database);
  try {
    const applied = await migrateToLatest(database);
    if (applied.length > 0) logger.info({ migrations: applied }, 'migrations applied');
  } finally {
    await database.destroy();
  }
  loadServerKeys(config.serverSecret, config.dataDir);

  const workers: Worker[] = [];
  /** Serving processes listening, so listening for STOP_MESSAGE too (sent earlier, it would be lost). */
  const listening = new Set<Worker>();
  let stopping = false;
  let failure: string | undefined;
  const stopAll = () => {
    stopping = true;
    for (const worker of workers) {
      if (worker.process.exitCode !== null || worker.process.signalCode !== null) continue;
      // Still starting: a signal ends it, gracefully once its handlers are in place.
      if (listening.has(worker) && worker.isConnected()) worker.send(STOP_MESSAGE);
      else worker.process.kill('SIGTERM');
    }
  };
  const exits = Array.from({ length: processes }, () => {
    const worker = cluster.fork();
    workers.push(worker);
    worker.once('listening', () => listening.add(worker));
    return exitOf(worker).then(({ code, signal }) => {
      // Stopped cleanly by a signal sent to it directly (a terminal's Ctrl-C reaches every process
      // of the group): the set stops with it. While stopping, one still starting may die of the
      // signal it was sent.
      if (code === 0 || (stopping && signal !== null)) {
        if (!stopping) stopAll();
        return;
      }
      failure ??= `serving process ${worker.id} exited with ${signal ?? code}`;
      if (!stopping) {
        logger.error({ process: worker.id, code, signal }, 'a serving process ended; stopping the others');
        stopAll();
      }
    });
  });
  logger.info({ processes, pid: process.pid }, 'invigil supervising serving processes');
  void stop.then((signal) => {
    if (stopping) return;
    logger.info({ signal }, 'stopping the serving processes');
    stopAll();
  });
  await Promise.all(exits);
  if (failure !== undefined) throw new Error(failure);
  logger.info('all serving processes stopped');
}
