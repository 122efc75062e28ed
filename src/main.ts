import type { Core } from './app.ts';
import { createApp, createCore, createLogger } from './app.ts';
import { runCommand, USAGE } from './cli/commands.ts';
import { UsageError } from './cli/usage.ts';
import { type Config, ConfigError, loadConfig } from './config/config.ts';
import { DomainError } from './domain/errors.ts';
import { purgeExpiredNonces } from './http/auth/nonce-store.ts';

/** How often expired nonces are swept. */
const MAINTENANCE_INTERVAL_MS = 10 * 60 * 1000;

/** Periodic housekeeping shared by serve and worker. Returns a function that stops it. */
function startMaintenance(core: Core): () => void {
  const sweep = async () => {
    try {
      const removed = await purgeExpiredNonces(core.database.db, core.clock.now());
      if (removed > 0) core.logger.debug({ removed }, 'expired nonces purged');
    } catch (error) {
      core.logger.error({ err: error }, 'nonce purge failed');
    }
  };
  void sweep();
  const timer = setInterval(() => void sweep(), MAINTENANCE_INTERVAL_MS);
  timer.unref();
  return () => clearInterval(timer);
}

/** Resolves on the first SIGTERM or SIGINT. */
function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    process.once('SIGTERM', () => resolve('SIGTERM'));
    process.once('SIGINT', () => resolve('SIGINT'));
  });
}

async function serve(config: Config, args: string[]): Promise<void> {
  const withWorker = !args.includes('--no-worker');
  const app = await createApp(config);
  const stopMaintenance = withWorker ? startMaintenance(app) : () => {};
  const signal = untilSignal();
  await app.server.listen({ port: config.port, host: config.host });
  app.logger.info({ publicUrl: config.publicUrl, worker: withWorker }, 'invigil serving');
  const received = await signal;
  app.logger.info({ signal: received }, 'shutting down');
  stopMaintenance();
  await app.close();
}

async function worker(config: Config): Promise<void> {
  const core = await createCore(config);
  const stopMaintenance = startMaintenance(core);
  core.logger.info('invigil worker running');
  const received = await untilSignal();
  core.logger.info({ signal: received }, 'shutting down');
  stopMaintenance();
  await core.close();
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
    process.stderr.write(`${USAGE}\n`);
    return command === undefined ? 2 : 0;
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
