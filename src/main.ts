import cluster from 'node:cluster';
import type { App, Core } from './app.ts';
import { createApp, createCore, createLogger } from './app.ts';
import { runCommand, USAGE } from './cli/commands.ts';
import { UsageError } from './cli/usage.ts';
import { listeningUrl, welcomeText } from './cli/welcome.ts';
import { type Config, ConfigError, loadConfig } from './config/config.ts';
import { DomainError } from './domain/errors.ts';
import { purgeExpiredNonces } from './http/auth/nonce-store.ts';
import { purgeFinishedHistory } from './jobs/retention.ts';
import { purgeSignInHistory } from './jobs/sign-in-retention.ts';
import { SESSION_RETENTION_DEDUPE_KEY, SESSION_RETENTION_JOB } from './domain/retention/retention.ts';
import { startTimeUpSweep } from './jobs/time-up.ts';
import { createWorker } from './jobs/worker.ts';
import { logUnhandledRejections } from './process-guards.ts';
import {
  isSecondaryServer,
  releaseSupervisor,
  serveProcessCount,
  serverNumber,
  supervise,
  untilSupervisorStops,
} from './serve-processes.ts';

/** How often the maintenance sweep (expired nonces, history past retention, sign-in leftovers) runs. */
const MAINTENANCE_INTERVAL_MS = 10 * 60 * 1000;

/** While the HTTP server drains, how often keep-alive connections that went idle are closed. */
const IDLE_SWEEP_MS = 100;

/**
 * Periodic housekeeping of the worker role: purges expired nonces, then the jobs and sent mail past
 * RETENTION_DAYS, then audit events past AUDIT_RETENTION_DAYS with ended staff sessions, spent
 * one-time links and stale sign-in throttles, and abandoned practice runs. Runs at once, then every MAINTENANCE_INTERVAL_MS; a sweep still running when the
 * next is due makes that one skip. Returns a function that stops it and resolves once a sweep in
 * progress has finished (its retention stops after the batch it is in), so the database can be
 * closed after it.
 */
function startMaintenance(core: Core): () => Promise<void> {
  const stopping = new AbortController();
  let current: Promise<void> | undefined;
  const sweep = async () => {
    const now = core.clock.now();
    try {
      const removed = await purgeExpiredNonces(core.database.db, now);
      if (removed > 0) core.logger.debug({ removed }, 'expired nonces purged');
    } catch (error) {
      core.logger.error({ err: error }, 'nonce purge failed');
    }
    try {
      const removed = await purgeFinishedHistory(core.database.db, core.database.dialect, {
        now,
        retentionDays: core.config.retentionDays,
        signal: stopping.signal,
      });
      if (removed.jobs > 0 || removed.mail > 0) {
        core.logger.info(
          { jobs: removed.jobs, mail: removed.mail, retentionDays: core.config.retentionDays },
          'finished jobs and sent mail past retention removed',
        );
      }
    } catch (error) {
      core.logger.error({ err: error }, 'retention sweep failed');
    }
    try {
      const removed = await purgeSignInHistory(core.database.db, core.database.dialect, {
        now,
        auditRetentionDays: core.config.auditRetentionDays,
        signal: stopping.signal,
      });
      if (Object.values(removed).some((count) => count > 0)) {
        core.logger.info(
          { ...removed, auditRetentionDays: core.config.auditRetentionDays },
          'old audit events, ended sessions, spent links and stale throttles removed',
        );
      }
    } catch (error) {
      core.logger.error({ err: error }, 'sign-in retention sweep failed');
    }
    try {
      // Session media past retention: a durable job (docs/retention.md), one at a time across workers.
      await core.services.jobs.enqueue(core.database.db, {
        kind: SESSION_RETENTION_JOB,
        payload: {},
        dedupeKey: SESSION_RETENTION_DEDUPE_KEY,
      });
    } catch (error) {
      core.logger.error({ err: error }, 'session retention sweep not queued');
    }
    try {
      // Practice runs abandoned mid-way and demo visitors past their time (docs/practice.md).
      const removed = await core.services.practice.sweep();
      if (removed.runs > 0 || removed.visitors > 0) core.logger.info(removed, 'stale practice runs cleared');
    } catch (error) {
      core.logger.error({ err: error }, 'practice sweep failed');
    }
  };
  const start = () => {
    if (current !== undefined) return;
    current = sweep().finally(() => {
      current = undefined;
    });
  };
  start();
  const timer = setInterval(start, MAINTENANCE_INTERVAL_MS);
  timer.unref();
  return async () => {
    clearInterval(timer);
    stopping.abort();
    await current;
  };
}

/**
 * The background role: the job worker over the core's handlers, plus maintenance and the time-up
 * sweep. Returns a stop that resolves once the running job step has finished and its outcome is
 * written.
 */
function startBackground(core: Core): () => Promise<void> {
  const worker = createWorker({
    db: core.database.db,
    dialect: core.database.dialect,
    clock: core.clock,
    logger: core.logger,
    handlers: core.jobHandlers,
    leaseMs: core.config.jobLeaseMs,
  });
  worker.start();
  const stopMaintenance = startMaintenance(core);
  // Sessions past their deadline that no request reopens are finished here (docs/jobs.md).
  const stopTimeUp = startTimeUpSweep({ room: core.services.room, logger: core.logger });
  core.logger.info(
    {
      worker: worker.id,
      kinds: core.jobHandlers.map((handler) => handler.kind),
      leaseMs: core.config.jobLeaseMs,
    },
    'job worker started',
  );
  return async () => {
    await Promise.all([worker.stop(), stopMaintenance(), stopTimeUp()]);
  };
}

/**
 * Resolves on the first SIGTERM or SIGINT. Both handlers are then removed, so a second signal during
 * a slow shutdown ends the process the default way.
 */
function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const onSignal = (signal: NodeJS.Signals) => {
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
      resolve(signal);
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
}

/**
 * Prints one human line with the address beside the JSON log (on standard output, which the log
 * does not use), and on a new installation the commands that create the first user. Never throws:
 * the greeting is a courtesy, so a failing look at the users is only logged.
 */
async function greet(app: App): Promise<void> {
  const address = app.server.server.address();
  if (address === null || typeof address === 'string') return;
  let hasUsers = true;
  try {
    hasUsers = await app.services.users.anyExists();
  } catch (error) {
    app.logger.warn({ err: error }, 'could not tell whether any user exists');
  }
  process.stdout.write(welcomeText(listeningUrl(address), hasUsers));
}

async function serve(config: Config, args: string[]): Promise<void> {
  const processes = serveProcessCount(args, config.processes);
  if (processes > 1 && cluster.isPrimary) {
    await supervise(config, processes, untilSignal(), createLogger(config));
    return;
  }
  try {
    await serveHere(config, args);
  } finally {
    // A serving process forked by the supervisor ends once served, or failed to.
    releaseSupervisor();
  }
}

/** Serves HTTP (and the worker, unless `--no-worker` or a secondary serving process) in this process. */
async function serveHere(config: Config, args: string[]): Promise<void> {
  // Forked by the supervisor (`--processes`): the first serving process alone runs the worker.
  const withWorker = !args.includes('--no-worker') && !isSecondaryServer();
  const app = await createApp(config);
  logUnhandledRejections(app.logger);
  const signal = Promise.race([untilSignal(), untilSupervisorStops()]);
  try {
    await app.server.listen({ port: config.port, host: config.host });
  } catch (error) {
    await app.close();
    throw error;
  }
  const stopBackground = withWorker ? startBackground(app) : () => Promise.resolve();
  const number = serverNumber();
  app.logger.info(
    { publicUrl: config.publicUrl, worker: withWorker, ...(number === undefined ? {} : { process: number }) },
    'invigil serving',
  );
  if (!isSecondaryServer()) await greet(app);
  const received = await signal;
  app.logger.info({ signal: received }, 'shutting down');
  // Stop accepting; requests in flight finish while the worker finishes its running job step.
  // A keep-alive connection is closed as soon as it is idle instead of lingering to its timeout.
  const httpClosed = app.server.close();
  const idleSweep = setInterval(() => app.server.server.closeIdleConnections(), IDLE_SWEEP_MS);
  try {
    await Promise.all([httpClosed, stopBackground()]);
  } finally {
    clearInterval(idleSweep);
  }
  await app.close();
  app.logger.info('stopped');
}

async function worker(config: Config): Promise<void> {
  const core = await createCore(config);
  const signal = untilSignal();
  const stopBackground = startBackground(core);
  core.logger.info('invigil worker running');
  const received = await signal;
  core.logger.info({ signal: received }, 'shutting down');
  await stopBackground();
  await core.close();
  core.logger.info('stopped');
}

/** The arguments that ask for the usage text, as the command or anywhere after it. */
const HELP_ARGUMENTS = new Set(['help', '--help', '-h']);

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined) {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  // Help asked for is the answer, not an error: printed to standard output before any
  // configuration is read (`invigil user create --help` needs no database).
  if (HELP_ARGUMENTS.has(command) || rest.some((arg) => arg === '--help' || arg === '-h')) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`invigil: invalid configuration: ${error.message}\n`);
      return 78;
    }
    throw error;
  }
  try {
    if (command === 'serve') await serve(config, rest);
    else if (command === 'worker') await worker(config);
    else await runCommand(config, argv);
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`invigil: ${error.message}\n\n${USAGE}\n`);
      return 2;
    }
    if (error instanceof ConfigError) {
      process.stderr.write(`invigil: invalid configuration: ${error.message}\n`);
      return 78;
    }
    if (error instanceof DomainError) {
      process.stderr.write(`invigil: ${error.message}\n`);
      return 1;
    }
    const logger = createLogger(config);
    logger.fatal({ err: error }, 'invigil failed');
    logger.flush();
    return 1;
  }
}

process.exitCode = await main(process.argv.slice(2));
