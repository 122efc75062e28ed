import type { Logger } from 'pino';
import type { Config } from '../config/config.ts';
import type { Db } from '../db/database.ts';
import type { Clock } from '../domain/clock.ts';
import type { Services } from '../services.ts';

/**
 * What a job handler may use; app.ts passes it once. A module of its own so that each job file and
 * the list of them (handlers.ts) both depend on it, not on each other.
 */
export interface JobHandlerDeps {
  readonly config: Config;
  readonly logger: Logger;
  readonly db: Db;
  readonly clock: Clock;
  readonly services: Services;
}
