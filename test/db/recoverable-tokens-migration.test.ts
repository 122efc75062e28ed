import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, it } from 'node:test';
import { sql } from 'kysely';

import { migrateToLatest } from '../../src/db/migrate.ts';
import { DIALECTS } from '../helpers/server.ts';
import { atMigration } from './migration-support.ts';
import { oldInstitute, oldOwnedExam, oldSession, oldUser } from './old-rows.ts';

const MIGRATION = '0020_recoverable_tokens_and_deadlines';

/** The migration applied just before this one (whichever number it has). */
const PREVIOUS = fs
  .readdirSync(new URL('../../src/db/migrations/', import.meta.url))
  .map((file) => file.replace(/\.ts$/, ''))
  .filter((name) => name < MIGRATION)
  .sort()
  .at(-1);

describe(`migration ${MIGRATION}`, () => {
  for (const dialect of DIALECTS) {
    it(`leaves existing users without a recoverable token and stores new ones on ${dialect}`, async () => {
      assert.ok(PREVIOUS !== undefined);
      await atMigration(dialect, PREVIOUS, async (database) => {
        const { db } = database;
        const institute = await oldInstitute(db);
        const before = await oldUser(db, institute.id, 'before@example.org', 'teacher');

        assert.ok((await migrateToLatest(database)).includes(MIGRATION));

        const row = await db
          .selectFrom('users')
          .select(['api_token_hash', 'api_token_encrypted', 'secret_key_encrypted'])
          .where('id', '=', before.id)
          .executeTakeFirstOrThrow();
        assert.deepEqual(
          { ...row },
          { api_token_hash: 'h-before@example.org', api_token_encrypted: null, secret_key_encrypted: 's' },
        );
        await db
          .updateTable('users')
          .set({ api_token_encrypted: 'ciphertext' })
          .where('id', '=', before.id)
          .execute();
        const written = await db
          .selectFrom('users')
          .select('api_token_encrypted')
          .where('id', '=', before.id)
          .executeTakeFirstOrThrow();
        assert.equal(written.api_token_encrypted, 'ciphertext');
      });
    });

    it(`indexes the started sessions for the time-up sweep on ${dialect}`, async () => {
      assert.ok(PREVIOUS !== undefined);
      await atMigration(dialect, PREVIOUS, async (database) => {
        const { db } = database;
        const { exam } = await oldOwnedExam(db, {
          name: 'Before 0020',
          type: 'record_review',
        });
        await oldSession(db, exam.id, { status: 'exam_started', token: 'a'.repeat(32), start_time: 5 });
        await oldSession(db, exam.id, {
          email: 'other@example.org',
          status: 'exam_finished',
          token: 'b'.repeat(32),
          start_time: 5,
        });

        await migrateToLatest(database);

        const indexes =
          dialect === 'sqlite'
            ? await sql<{ name: string }>`select name from sqlite_master where type = 'index'`.execute(db)
            : await sql<{ name: string }>`select indexname as name from pg_indexes
                where schemaname = current_schema()`.execute(db);
        assert.ok(indexes.rows.some((row) => row.name === 'student_sessions_started'));
        const started = await db
          .selectFrom('student_sessions')
          .select('token')
          .where('status', '=', 'exam_started')
          .execute();
        assert.deepEqual(
          started.map((row) => row.token),
          ['a'.repeat(32)],
        );
      });
    });
  }
});
