/**
 * Which failures count as "the database is away" (src/db/unavailable.ts), with the errors the real
 * drivers throw where they can be made here, and the shapes of the others as pg reports them.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { describe, it } from 'node:test';
import pg from 'pg';
import { isDatabaseUnavailable } from '../../src/db/unavailable.ts';
import { freePort } from '../helpers/processes.ts';

/** An error shaped as node-postgres reports a server's ErrorResponse. */
function pgError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code, severity: 'FATAL' });
}

describe('isDatabaseUnavailable', () => {
  it('recognises a refused connection as pg reports it', async () => {
    const port = await freePort();
    const client = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${port}/none` });
    const error = await client.connect().then(
      () => undefined,
      (failure: unknown) => failure,
    );
    assert.ok(error !== undefined);
    assert.equal(isDatabaseUnavailable(error), true);
  });

  it('recognises a pool that gives up connecting, or waiting for a client, after its timeout', async () => {
    // A server that accepts connections and never says a word, like one stuck in start-up.
    const silent = net.createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const address = silent.address();
    assert.ok(address !== null && typeof address !== 'string');
    const pool = new pg.Pool({
      connectionString: `postgres://postgres@127.0.0.1:${address.port}/none`,
      connectionTimeoutMillis: 200,
      max: 1,
    });
    pool.on('error', () => {});
    try {
      // The first query opens the one connection; the second waits for it.
      const failures = await Promise.all(
        [pool.query('select 1'), pool.query('select 1')].map((query) =>
          query.then(
            () => new Error('no failure'),
            (failure: unknown) => failure,
          ),
        ),
      );
      const messages = failures.map((failure) =>
        failure instanceof Error ? failure.message : String(failure),
      );
      assert.deepEqual(messages.sort(), [
        'Connection terminated due to connection timeout',
        'timeout exceeded when trying to connect',
      ]);
      for (const failure of failures) assert.equal(isDatabaseUnavailable(failure), true);
    } finally {
      await pool.end();
      silent.close();
    }
  });

  it('recognises server shutdown, start-up and connection-class SQLSTATEs', () => {
    assert.equal(
      isDatabaseUnavailable(pgError('57P01', 'terminating connection due to administrator command')),
      true,
    );
    assert.equal(isDatabaseUnavailable(pgError('57P03', 'the database system is starting up')), true);
    assert.equal(isDatabaseUnavailable(pgError('57P02', 'terminating connection because of crash')), true);
    assert.equal(isDatabaseUnavailable(pgError('08006', 'connection failure')), true);
    assert.equal(isDatabaseUnavailable(pgError('53300', 'sorry, too many clients already')), true);
  });

  it("recognises pg's and pg-pool's code-less messages, a cause chain and an AggregateError", () => {
    assert.equal(isDatabaseUnavailable(new Error('Connection terminated unexpectedly')), true);
    assert.equal(isDatabaseUnavailable(new Error('timeout exceeded when trying to connect')), true);
    assert.equal(
      isDatabaseUnavailable(new Error('Client has encountered a connection error and is not queryable')),
      true,
    );
    const reset = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
    assert.equal(isDatabaseUnavailable(new Error('wrapped', { cause: reset })), true);
    const refused = Object.assign(new Error('connect ECONNREFUSED ::1:5432'), { code: 'ECONNREFUSED' });
    assert.equal(isDatabaseUnavailable(new AggregateError([refused], 'connect failed')), true);
  });

  it('recognises SQLite busy past its timeout', () => {
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'invigil-busy-'));
    const file = path.join(folder, 'busy.sqlite');
    const holder = new DatabaseSync(file);
    const waiter = new DatabaseSync(file, { timeout: 1 });
    try {
      holder.exec('create table t (x integer)');
      holder.exec('begin immediate');
      holder.exec('insert into t values (1)');
      assert.throws(
        () => waiter.exec('insert into t values (2)'),
        (error: unknown) => isDatabaseUnavailable(error),
      );
    } finally {
      holder.close();
      waiter.close();
      fs.rmSync(folder, { recursive: true, force: true });
    }
  });

  it('leaves query errors, constraint violations and programming errors alone', () => {
    assert.equal(
      isDatabaseUnavailable(pgError('23505', 'duplicate key value violates unique constraint')),
      false,
    );
    assert.equal(isDatabaseUnavailable(pgError('42P01', 'relation "nope" does not exist')), false);
    assert.equal(
      isDatabaseUnavailable(pgError('57014', 'canceling statement due to statement timeout')),
      false,
    );
    assert.equal(
      isDatabaseUnavailable(new TypeError("Cannot read properties of undefined (reading 'id')")),
      false,
    );
    assert.equal(isDatabaseUnavailable(new Error('UNIQUE constraint failed: users.email')), false);
    assert.equal(isDatabaseUnavailable(undefined), false);
    assert.equal(isDatabaseUnavailable('ECONNREFUSED'), false);
    const cycle: { cause?: unknown } = new Error('loops');
    cycle.cause = cycle;
    assert.equal(isDatabaseUnavailable(cycle), false);
  });
});
