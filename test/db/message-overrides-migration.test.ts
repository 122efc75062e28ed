import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { migrateToLatest } from '../../src/db/migrate.ts';
import { DIALECTS } from '../helpers/server.ts';
import { atMigration } from './migration-support.ts';
import { oldOwnedExam } from './old-rows.ts';

const MIGRATION = '0023_message_overrides';

describe(`migration ${MIGRATION}`, () => {
  for (const dialect of DIALECTS) {
    it(`keeps one wording per institute, locale and key, removed with the institute, on ${dialect}`, async () => {
      await atMigration(dialect, '0022_candidate_languages', async (database) => {
        const { db } = database;
        const { institute, owner } = await oldOwnedExam(db, { name: 'Before 0023', type: 'classroom' });

        assert.ok((await migrateToLatest(database)).includes(MIGRATION));

        const row = (message: string) => ({
          institute_id: institute.id,
          locale: 'nl',
          key: 'room.setup.heading',
          message,
          updated_at: 1_800_000_000_123,
          updated_by: owner.id,
        });
        await db.insertInto('message_overrides').values(row('Voorbereiding')).execute();
        await assert.rejects(db.insertInto('message_overrides').values(row('Tweede')).execute());
        const stored = await db.selectFrom('message_overrides').selectAll().executeTakeFirstOrThrow();
        assert.deepEqual(
          { message: stored.message, at: Number(stored.updated_at), by: stored.updated_by },
          { message: 'Voorbereiding', at: 1_800_000_000_123, by: owner.id },
        );
        await db.deleteFrom('exams').execute();
        await db.deleteFrom('institutes').where('id', '=', institute.id).execute();
        assert.equal((await db.selectFrom('message_overrides').selectAll().execute()).length, 0);
      });
    });
  }
});
