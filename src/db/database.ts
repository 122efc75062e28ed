import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import type { DatabaseConfig } from '../config/config.ts';
import { createSqliteDialect } from './sqlite-dialect.ts';
import type { Tables } from './tables.ts';

export type Db = Kysely<Tables>;
export type DialectName = 'sqlite' | 'postgres';

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

/**
 * Opens the configured database (creating the SQLite file's folder when needed).
 * Returns the Kysely instance with its dialect name; throws when PostgreSQL cannot be reached on first use.
 */
export function openDatabase(config: DatabaseConfig): Database {
  if (config.kind === 'sqlite') {
    if (config.path !== ':memory:') fs.mkdirSync(path.dirname(config.path), { recursive: true });
    const db = new Kysely<Tables>({ dialect: createSqliteDialect(config.path) });
    return wrap(db, 'sqlite');
  }
  // Like libpq, an address without a user name connects as the operating-system user.
  const url = new URL(config.url);
  if (url.username === '') url.username = os.userInfo().username;
  const pool = new pg.Pool({ connectionString: url.toString(), max: 10, types: pgTypes });
  // An idle client losing its connection must not crash the process; the pool replaces it.
  pool.on('error', () => {});
  const db = new Kysely<Tables>({ dialect: new PostgresDialect({ pool }) });
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
