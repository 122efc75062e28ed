import type { Logger } from 'pino';
import type { Config } from '../config/config.ts';
import type { Database } from '../db/database.ts';
import type { Clock } from '../domain/clock.ts';
import type { LiveHub } from '../live/hub.ts';
import type { Services } from '../services.ts';

/**
 * What every route module is given: the process's config, database, services, logger, clock and the
 * live sockets' hub. It has a module of its own so route files depend on it, not on server.ts, which
 * imports them all (docs/architecture.md, "Layers as rules").
 */
export interface RouteDeps {
  readonly config: Config;
  readonly database: Database;
  readonly services: Services;
  readonly logger: Logger;
  readonly clock: Clock;
  /** The live-proctoring sockets' hub (src/live/hub.ts). */
  readonly hub: LiveHub;
}
