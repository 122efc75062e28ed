import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { migrateToLatest } from '../../src/db/migrate.ts';
import { DIALECTS } from '../helpers/server.ts';
import { atMigration } from './migration-support.ts';
import { oldOwnedExam, oldSession } from './old-rows.ts';

describe('migration 0019_terms_acceptance', () => {
  for (const dialect of DIALECTS) {
    it(`leaves existing sessions without an acceptance and stores one on ${dialect}`, async () => {
      await atMigration(dialect, '0018_mobile_camera', async (database) => {
        const { db } = database;
        const { exam } = await oldOwnedExam(db, {
          name: 'Before 0019',
          type: 'record_review',
          terms: 'I work alone.',
        });
        const started = await oldSession(db, exam.id, {
          status: 'exam_started',
          token: 'a'.repeat(32),
          start_time: 1_700_000_000_000,
        });

        assert.ok((await migrateToLatest(database)).includes('0019_terms_acceptance'));

        const read = () =>
          db
            .selectFrom('student_sessions')
            .select(['terms_accepted_at', 'terms_sha256', 'start_time'])
            .where('id', '=', started.id)
            .executeTakeFirstOrThrow();
        const before = await read();
        assert.deepEqual(
          { at: before.terms_accepted_at, sha256: before.terms_sha256, start: Number(before.start_time) },
          { at: null, sha256: null, start: 1_700_000_000_000 },
        );
        // A time past 2^31 (epoch ms) and a 64-character hex digest fit the new columns.
        const sha256 = 'c'.repeat(64);
        await db
          .updateTable('student_sessions')
          .set({ terms_accepted_at: 1_800_000_000_123, terms_sha256: sha256 })
          .where('id', '=', started.id)
          .execute();
        const after = await read();
        assert.deepEqual(
          { at: Number(after.terms_accepted_at), sha256: after.terms_sha256 },
          { at: 1_800_000_000_123, sha256 },
        );
      });
    });
  }
});
