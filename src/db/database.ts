import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import type { DatabaseConfig } from '../config/config.ts';
import { createSqliteDialect } from './sqlite-dialect.ts';
import type { Db, DialectName } from './db.ts';
import type { Tables } from './tables.ts';
import { writeGenerationPlugin } from './write-generation.ts';

export type { Db, DialectName } from './db.ts';

export interface Database {
  readonly db: Db;
  readonly dialect: DialectName;
  /** Answers true when a trivial query succeeds (used by /healthz). */
  ping(): Promise<boolean>;
  destroy(): Promise<void>;
}

const PG_INT8 = 20;
const PG_NUMERIC = 1700;

/** pg returns 64-bit integers as strings; every bigint column here (times in ms, sizes) fits a double. */
const pgTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === PG_INT8 || oid === PG_NUMERIC) return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format) as (value: string) => unknown;
  },
};

/** The pool behind each PostgreSQL Kysely instance, found from its adapter (shared by its transactions). */
const postgresPools = new WeakMap<object, pg.Pool>();

/**
 * The connection pool of `db` when it is on PostgreSQL, for a hot path that runs its own statements
 * (db/prepared.ts: named statements, parsed and planned once per connection). Undefined on SQLite.
 */
export function postgresPool(db: Db): pg.Pool | undefined {
  return postgresPools.get(db.getExecutor().adapter);
}

/** How long a PostgreSQL connect attempt, or a wait for a free pooled client, may take. */
export const CONNECT_TIMEOUT_MS = 5000;

/**
 * Opens the configured database (creating the SQLite file's folder when needed). A PostgreSQL
 * server that goes away never ends the process: queries fail (see db/unavailable.ts) until it is
 * back, and new connections are made then. Returns the Kysely instance with its dialect name;
 * throws nothing itself (an unreachable server fails the first query).
 */
export function openDatabase(config: DatabaseConfig): Database {
  if (config.kind === 'sqlite') {
    if (config.path !== ':memory:') fs.mkdirSync(path.dirname(config.path), { recursive: true });
    const generations = writeGenerationPlugin();
    const db = new Kysely<Tables>({
      dialect: createSqliteDialect(config.path),
      plugins: [generations.plugin],
    });
    generations.track(db);
    return wrap(db, 'sqlite');
  }
  // Like libpq, an address without a user name connects as the operating-system user.
  const url = new URL(config.url);
  if (url.username === '') url.username = os.userInfo().username;
  const pool = new pg.Pool({
    connectionString: url.toString(),
    max: 10,
    types: pgTypes,
    // While the server is away a request must fail (503) rather than wait: a connect attempt, or a
    // wait for a free client, gives up after this long.
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    // A connection whose peer vanished without a word (host gone, network cut) is found by TCP
    // keep-alive instead of hanging its next query forever.
    keepAlive: true,
  });
  // An EventEmitter's 'error' with no listener throws, which ends the process. pg-pool listens on
  // idle clients only (and then emits on the pool); a client checked out by Kysely has no listener
  // at all, and the server going away while it is checked out (between two statements of a
  // transaction, or under a running query) emits 'error' on it. Every client therefore gets a
  // permanent listener when it is created, and the pool one too. Nothing is lost by ignoring the
  // event: the failure reaches the caller as the rejected query (answered 503, or retried by the
  // worker), and the client, no longer queryable, is discarded by pg-pool on release.
  const ignore = () => {};
  pool.on('error', ignore);
  pool.on('connect', (client) => client.on('error', ignore));
  const generations = writeGenerationPlugin();
  const db = new Kysely<Tables>({ dialect: new PostgresDialect({ pool }), plugins: [generations.plugin] });
  generations.track(db);
  postgresPools.set(db.getExecutor().adapter, pool);
  return wrap(db, 'postgres');
}

function wrap(db: Db, dialect: DialectName): Database {
  return {
    db,
    dialect,
    async ping() {
      try {
        await sql`select 1`.execute(db);
        return true;
      } catch {
        return false;
      }
    },
    destroy: () => db.destroy(),
  };
}
