import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import pino from 'pino';
import { type App, createApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config/config.ts';
import { type Database, openDatabase } from '../../src/db/database.ts';
import type { Role } from '../../src/domain/access.ts';
import type { Clock } from '../../src/domain/clock.ts';
import type { LiveEngine } from '../../src/live/engine.ts';
import { type LocalS3, S3RVER_CREDENTIALS, startLocalS3 } from '../storage/s3rver.ts';
import { ApiClient, type Credentials, registerServerClock } from './client.ts';

export type DialectName = 'sqlite' | 'postgres';

/**
 * Both databases run in every suite; PostgreSQL must be reachable (the suite fails, never skips).
 * `npm run test:s3` sets TEST_DIALECTS=sqlite: it repeats the HTTP suites for the storage, which
 * does not depend on the database, and `npm test` has already run them on both.
 */
export const DIALECTS: readonly DialectName[] =
  process.env.TEST_DIALECTS === 'sqlite' ? ['sqlite'] : ['sqlite', 'postgres'];

/**
 * The databases a browser suite runs on. The HTTP, domain and job suites run on both databases, so
 * a browser suite, which exercises the pages over those same routes, runs on one: about half the
 * suites on each, each suite always on the same one (picked from its file name), which halves the
 * browser tests' share of the suite's time while both databases still serve every page.
 * TEST_BROWSER_DIALECTS=all runs every browser suite on both (TEST_DIALECTS=sqlite still narrows).
 */
export function browserDialects(suiteUrl: string): readonly DialectName[] {
  if (process.env.TEST_BROWSER_DIALECTS === 'all' || DIALECTS.length === 1) return DIALECTS;
  const name = suiteUrl.slice(suiteUrl.lastIndexOf('/') + 1);
  // FNV-1a over the file name: stable across machines and runs.
  let hash = 0x811c9dc5;
  for (let index = 0; index < name.length; index += 1) {
    hash = Math.imul(hash ^ name.charCodeAt(index), 0x01000193) >>> 0;
  }
  return [hash % 2 === 0 ? 'sqlite' : 'postgres'];
}

export const POSTGRES_URL = 'postgres://127.0.0.1:5432/test';

/** A settable clock for tests that move time. */
export class TestClock implements Clock {
  current: number;
  constructor(start = Date.now()) {
    this.current = start;
  }
  now(): number {
    return this.current;
  }
}

export interface TestDatabase {
  readonly url: string;
  readonly dataDir: string;
  drop(): Promise<void>;
}

async function postgresAdmin<T>(run: (client: pg.Client) => Promise<T>): Promise<T> {
  const url = new URL(POSTGRES_URL);
  url.username = os.userInfo().username;
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

/**
 * A private database for one test file: a temporary SQLite file, or a fresh schema in the
 * PostgreSQL `test` database (selected through search_path). Returns its DATABASE_URL and a drop.
 */
export async function createTestDatabase(dialect: DialectName): Promise<TestDatabase> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'invigil-test-'));
  if (dialect === 'sqlite') {
    return {
      url: `sqlite:${path.join(dataDir, 'test.sqlite')}`,
      dataDir,
      // Retried: a file the closing database removes (its -wal, -shm) can vanish or appear while the
      // folder is read for removal, which fails it once with ENOTEMPTY.
      drop: () =>
        Promise.resolve(fs.rmSync(dataDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 })),
    };
  }
  const schema = `t_${crypto.randomBytes(6).toString('hex')}`;
  await postgresAdmin((client) => client.query(`create schema ${schema}`));
  return {
    url: `${POSTGRES_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`,
    dataDir,
    drop: async () => {
      await postgresAdmin((client) => client.query(`drop schema ${schema} cascade`));
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Opens a test database directly (no server), for a test that reads or writes rows itself. Returns
 * the open database; the caller destroys it. Throws what openDatabase throws.
 */
export function openTestDatabase(target: TestDatabase): Database {
  return openDatabase(
    target.url.startsWith('sqlite:')
      ? { kind: 'sqlite', path: target.url.slice('sqlite:'.length) }
      : { kind: 'postgres', url: target.url },
  );
}

export interface TestServer {
  readonly app: App;
  readonly baseUrl: string;
  readonly database: TestDatabase;
  /** Creates an institute and returns its id. */
  institute(name?: string): Promise<number>;
  /** Creates a user with fresh credentials and returns a signed client for it. */
  user(
    instituteId: number,
    role: Role,
    email?: string,
  ): Promise<{ id: number; client: ApiClient; credentials: Credentials }>;
  close(): Promise<void>;
}

let sequence = 0;

/** With TEST_STORAGE=s3: the in-process S3 server every test server of this process stores files in. */
let sharedS3: Promise<LocalS3> | undefined;

/**
 * The environment that selects file storage: none (local disk under DATA_DIR), or with
 * `TEST_STORAGE=s3` a STORAGE_URL naming one s3rver shared by the test process, started on first
 * use, plus the AWS credentials it accepts in process.env (where the AWS SDK reads them).
 */
async function storageEnv(): Promise<Record<string, string>> {
  if (process.env.TEST_STORAGE !== 's3') return {};
  sharedS3 ??= startLocalS3({ detached: true });
  const s3 = await sharedS3;
  process.env.AWS_ACCESS_KEY_ID = S3RVER_CREDENTIALS.accessKeyId;
  process.env.AWS_SECRET_ACCESS_KEY = S3RVER_CREDENTIALS.secretAccessKey;
  return { STORAGE_URL: s3.storageUrl };
}

/**
 * Starts the real service on a random loopback port over a private database. `env` adds or
 * overrides environment variables (NONCE_POLICY, SIGNATURE_WINDOW_SECONDS, ...); `port` fixes the port
 * (for a PUBLIC_URL that must name the server itself). Files go to local
 * disk, or to S3 when TEST_STORAGE=s3 (see storageEnv).
 */
export async function startTestServer(
  dialect: DialectName,
  options: {
    env?: Record<string, string>;
    clock?: Clock;
    port?: number;
    /** Runs on the built app before it listens (hooks can still be added then). */
    beforeListen?: (app: App) => void;
    /** The live media engine (test/live/fake-engine.ts); by default the configured one. */
    liveEngine?: LiveEngine;
  } = {},
): Promise<TestServer> {
  const database = await createTestDatabase(dialect);
  const config = loadConfig({
    DATABASE_URL: database.url,
    DATA_DIR: database.dataDir,
    LOG_LEVEL: 'silent',
    PORT: '0',
    ...(await storageEnv()),
    ...options.env,
  });
  const app = await createApp(config, {
    logger: pino({ level: 'silent' }),
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.liveEngine ? { liveEngine: options.liveEngine } : {}),
  });
  options.beforeListen?.(app);
  await app.server.listen({ port: options.port ?? 0, host: '127.0.0.1' });
  const address = app.server.server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  const baseUrl = `http://127.0.0.1:${address.port}`;
  const unregister = registerServerClock(baseUrl, () => app.clock.now(), config.signatureWindowSeconds);
  return {
    app,
    baseUrl,
    database,
    async institute(name) {
      sequence += 1;
      const institute = await app.services.institutes.create({
        name: name ?? `Institute ${sequence} ${crypto.randomBytes(3).toString('hex')}`,
        short_name: `I${sequence}`,
      });
      return institute.id;
    },
    async user(instituteId, role, email) {
      sequence += 1;
      const { user, credentials } = await app.services.users.create(instituteId, {
        email: email ?? `user${sequence}-${crypto.randomBytes(3).toString('hex')}@example.org`,
        name: `User ${sequence}`,
        role,
      });
      // The client signs with the server's own clock (registered above), so a test on a fixed date
      // stays within the signature window whatever the real date.
      return { id: user.id, credentials, client: new ApiClient(baseUrl, credentials) };
    },
    async close() {
      unregister();
      await app.close();
      await database.drop();
    },
  };
}
