import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { migrateToLatest } from '../../src/db/migrate.ts';
import { DIALECTS } from '../helpers/server.ts';
import { atMigration } from './migration-support.ts';
import { oldOwnedExam } from './old-rows.ts';

const MIGRATION = '0024_user_language';

describe(`migration ${MIGRATION}`, () => {
  for (const dialect of DIALECTS) {
    it(`gives existing users no console language, and keeps one set later, on ${dialect}`, async () => {
      await atMigration(dialect, '0023_message_overrides', async (database) => {
        const { db } = database;
        const { owner } = await oldOwnedExam(db, { name: 'Before 0024', type: 'classroom' });

        assert.ok((await migrateToLatest(database)).includes(MIGRATION));

        const before = await db
          .selectFrom('users')
          .select('language')
          .where('id', '=', owner.id)
          .executeTakeFirstOrThrow();
        assert.equal(before.language, null);
        await db.updateTable('users').set({ language: 'fr' }).where('id', '=', owner.id).execute();
        const after = await db
          .selectFrom('users')
          .select('language')
          .where('id', '=', owner.id)
          .executeTakeFirstOrThrow();
        assert.equal(after.language, 'fr');
      });
    });
  }
});
