import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { migrateToLatest, migrateUpTo } from '../../src/db/migrate.ts';
import { createTestDatabase, DIALECTS, openTestDatabase } from '../helpers/server.ts';
import { oldExam, oldInstitute, oldSession, oldUser } from './old-rows.ts';

describe('migration 0018_mobile_camera', () => {
  for (const dialect of DIALECTS) {
    it(`gives existing sessions an unpaired phone and keeps pairing tokens unique on ${dialect}`, async () => {
      const target = await createTestDatabase(dialect);
      const database = openTestDatabase(target);
      try {
        await migrateUpTo(database, '0017_automated_flags');
        const { db } = database;
        const institute = await oldInstitute(db);
        const owner = await oldUser(db, institute.id, 'owner@example.org', 'teacher');
        const exam = await oldExam(db, {
          institute_id: institute.id,
          user_id: owner.id,
          name: 'Before 0018',
          type: 'record_review',
          status: 'open',
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
      } finally {
        await database.destroy();
        await target.drop();
      }
    });
  }
});
