import crypto from 'node:crypto';
import os from 'node:os';
import pg from 'pg';

/** The PostgreSQL database the benchmarks use (`BENCH_POSTGRES_URL`, default the test database). */
export const POSTGRES_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://127.0.0.1:5432/test';

/** `base` with the operating-system user filled in when it names none, as libpq does. */
function postgresAddress(base: string): string {
  const url = new URL(base);
  if (url.username === '') url.username = os.userInfo().username;
  return url.toString();
}

/** A fresh schema of its own in the benchmark database, with a client connected to it. */
export interface PrivateSchema {
  /** The DATABASE_URL that selects the schema (through search_path), for `invigil serve`. */
  readonly url: string;
  /** A connected client whose search_path is the schema. */
  readonly client: pg.Client;
  /** Drops the schema with everything in it and ends the client. */
  readonly drop: () => Promise<void>;
}

/**
 * Creates a randomly named schema in POSTGRES_URL's database and connects a client to it, so a run
 * leaves the database as it found it. Returns the schema's address, client and drop; throws what
 * pg throws when the server cannot be reached.
 */
export async function createPrivateSchema(): Promise<PrivateSchema> {
  const schema = `bench_${crypto.randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: postgresAddress(POSTGRES_URL) });
  await admin.connect();
  try {
    await admin.query(`create schema ${schema}`);
  } finally {
    await admin.end();
  }
  const url = `${POSTGRES_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
  const client = new pg.Client({ connectionString: postgresAddress(url) });
  await client.connect();
  return {
    url,
    client,
    drop: async () => {
      try {
        await client.query(`drop schema ${schema} cascade`);
      } finally {
        await client.end();
      }
    },
  };
}
