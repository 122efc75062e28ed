import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { migrateToLatest } from '../../src/db/migrate.ts';
import { DIALECTS } from '../helpers/server.ts';
import { atMigration } from './migration-support.ts';
import { oldOwnedExam, oldSession } from './old-rows.ts';

const MIGRATION = '0022_candidate_languages';

describe(`migration ${MIGRATION}`, () => {
  for (const dialect of DIALECTS) {
    it(`leaves existing sessions and exams without a language and stores one on ${dialect}`, async () => {
      await atMigration(dialect, '0021_outbox_session_index', async (database) => {
        const { db } = database;
        const { exam } = await oldOwnedExam(db, { name: 'Before 0022', type: 'record_review' });
        const session = await oldSession(db, exam.id, { status: 'exam_not_started', token: 'd'.repeat(32) });

        assert.ok((await migrateToLatest(database)).includes(MIGRATION));

        const readSession = () =>
          db
            .selectFrom('student_sessions')
            .select(['language', 'chosen_language', 'status'])
            .where('id', '=', session.id)
            .executeTakeFirstOrThrow();
        const readExam = () =>
          db
            .selectFrom('exams')
            .select(['candidate_languages', 'name'])
            .where('id', '=', exam.id)
            .executeTakeFirstOrThrow();
        assert.deepEqual(
          { ...(await readSession()) },
          {
            language: null,
            chosen_language: null,
            status: 'exam_not_started',
          },
        );
        assert.deepEqual({ ...(await readExam()) }, { candidate_languages: null, name: 'Before 0022' });

        await db
          .updateTable('student_sessions')
          .set({ language: 'de-CH', chosen_language: 'ar' })
          .where('id', '=', session.id)
          .execute();
        await db
          .updateTable('exams')
          .set({ candidate_languages: '["en","nl"]' })
          .where('id', '=', exam.id)
          .execute();
        assert.deepEqual(
          { ...(await readSession()) },
          {
            language: 'de-CH',
            chosen_language: 'ar',
            status: 'exam_not_started',
          },
        );
        assert.deepEqual(
          { ...(await readExam()) },
          { candidate_languages: '["en","nl"]', name: 'Before 0022' },
        );
      });
    });
  }
});
