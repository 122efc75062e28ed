import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { migrateToLatest } from '../../src/db/migrate.ts';
import { DIALECTS } from '../helpers/server.ts';
import { atMigration } from './migration-support.ts';
import { oldOwnedExam } from './old-rows.ts';

const MIGRATION = '0026_recording_quality';

describe(`migration ${MIGRATION}`, () => {
  for (const dialect of DIALECTS) {
    it(`gives existing exams the standard recording quality, on ${dialect}`, async () => {
      await atMigration(dialect, '0025_accommodations', async (database) => {
        const { db } = database;
        const { exam } = await oldOwnedExam(db, { name: 'Before 0026', type: 'record_review' });

        assert.ok((await migrateToLatest(database)).includes(MIGRATION));

        const row = await db
          .selectFrom('exams')
          .select('recording_quality')
          .where('id', '=', exam.id)
          .executeTakeFirstOrThrow();
        assert.equal(row.recording_quality, 'standard');
      });
    });
  }
});
