import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { migrateToLatest } from '../../src/db/migrate.ts';
import { DIALECTS } from '../helpers/server.ts';
import { atMigration } from './migration-support.ts';
import { oldOwnedExam, oldSession } from './old-rows.ts';

const MIGRATION = '0031_retention_per_kind';

describe(`migration ${MIGRATION}`, () => {
  for (const dialect of DIALECTS) {
    it(`marks the media of sessions purged before it, and nothing of the others, on ${dialect}`, async () => {
      await atMigration(dialect, '0030_appeals', async (database) => {
        const { db } = database;
        const { exam } = await oldOwnedExam(db, { name: 'Before 0031', type: 'classroom' });
        const purgedAt = Date.parse('2026-01-05T10:00:00.000Z');
        const purged = await oldSession(db, exam.id, {
          status: 'exam_finished',
          token: 'p'.repeat(32),
          media_purged_at: purgedAt,
        });
        const kept = await oldSession(db, exam.id, {
          status: 'exam_finished',
          token: 'k'.repeat(32),
          email: 'other@example.org',
        });

        assert.ok((await migrateToLatest(database)).includes(MIGRATION));

        const marks = await db
          .selectFrom('session_kind_purges')
          .select(['student_session_id', 'kind', 'rule', 'purged_at', 'id_checked'])
          .orderBy('kind')
          .execute();
        assert.deepEqual(
          marks.map((mark) => [mark.student_session_id, mark.kind, mark.rule, Number(mark.purged_at)]),
          ['face_photo', 'id_photo', 'recording', 'upload'].map((kind) => [
            purged.id,
            kind,
            'period',
            purgedAt,
          ]),
        );
        assert.ok(marks.every((mark) => !mark.id_checked));
        assert.ok(marks.every((mark) => mark.student_session_id !== kept.id));
        const policies = await db.selectFrom('retention_policies').selectAll().execute();
        assert.deepEqual(policies, [], 'every institute starts with the defaults');
      });
    });
  }
});
