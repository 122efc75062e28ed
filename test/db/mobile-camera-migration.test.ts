import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { migrateToLatest } from '../../src/db/migrate.ts';
import { DIALECTS } from '../helpers/server.ts';
import { atMigration } from './migration-support.ts';
import { oldOwnedExam, oldSession } from './old-rows.ts';

describe('migration 0018_mobile_camera', () => {
  for (const dialect of DIALECTS) {
    it(`gives existing sessions an unpaired phone and keeps pairing tokens unique on ${dialect}`, async () => {
      await atMigration(dialect, '0017_automated_flags', async (database) => {
        const { db } = database;
        const { exam } = await oldOwnedExam(db, {
          name: 'Before 0018',
          type: 'record_review',
          mobile_cam: true,
        });
        const session = (token: string) =>
          oldSession(db, exam.id, { email: `${token.slice(0, 4)}@example.org`, status: 'in_setup', token });
        const first = await session('a'.repeat(32));
        const second = await session('b'.repeat(32));

        assert.ok((await migrateToLatest(database)).includes('0018_mobile_camera'));

        const row = await db
          .selectFrom('student_sessions')
          .select(['mobile_token', 'mobile_status', 'mobile_seen_at', 'mobile_device'])
          .where('id', '=', first.id)
          .executeTakeFirstOrThrow();
        assert.deepEqual(
          { ...row },
          { mobile_token: null, mobile_status: 'not_paired', mobile_seen_at: null, mobile_device: null },
        );
        // Many sessions without a token; a token names one session only.
        const pair = (id: number, token: string) =>
          db.updateTable('student_sessions').set({ mobile_token: token }).where('id', '=', id).execute();
        await pair(first.id, 'f'.repeat(32));
        await assert.rejects(pair(second.id, 'f'.repeat(32)));
        await pair(second.id, 'e'.repeat(32));
        const kept = await db
          .selectFrom('session_files')
          .select('id')
          .where('kind', '=', 'mobile_recording')
          .execute();
        assert.deepEqual(kept, []);
      });
    });
  }
});
