import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { describe, it } from 'node:test';
import { Kysely, sql } from 'kysely';

import { startCheckpointer } from '../../src/db/sqlite-checkpointer.ts';
import { createSqliteDialect } from '../../src/db/sqlite-dialect.ts';

/** Waits until `check` holds, asking every 100 ms for at most `limitMs`. Returns whether it held. */
async function eventually(check: () => boolean, limitMs: number): Promise<boolean> {
  const until = Date.now() + limitMs;
  while (Date.now() < until) {
    if (check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return check();
}

describe('SQLite checkpoints on a thread of their own', () => {
  it('turns the connection’s own checkpoints off', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'invigil-checkpoint-'));
    const db = new Kysely<Record<string, never>>({
      dialect: createSqliteDialect(path.join(dir, 'db.sqlite')),
    });
    try {
      const { rows } = await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(db);
      assert.deepEqual(
        rows.map((row) => ({ ...row })),
        [{ wal_autocheckpoint: 0 }],
      );
    } finally {
      await db.destroy();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('copies the log into the database file while the writer never checkpoints', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'invigil-checkpoint-'));
    const file = path.join(dir, 'db.sqlite');
    const writer = new DatabaseSync(file);
    writer.exec('PRAGMA journal_mode = WAL');
    writer.exec('PRAGMA wal_autocheckpoint = 0');
    writer.exec('CREATE TABLE rows (id INTEGER PRIMARY KEY, body TEXT)');
    const checkpointer = startCheckpointer(file, 100);
    try {
      const before = fs.statSync(file).size;
      const insert = writer.prepare('INSERT INTO rows (body) VALUES (?)');
      writer.exec('BEGIN');
      for (let row = 0; row < 2000; row += 1) insert.run('x'.repeat(500));
      writer.exec('COMMIT');
      // Only the checkpointer copies pages from the log into the file.
      assert.ok(
        await eventually(() => fs.statSync(file).size > before + 500_000, 10_000),
        'the database file grew from the log',
      );
    } finally {
      checkpointer.stop();
      writer.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
