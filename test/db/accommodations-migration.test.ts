import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { migrateToLatest } from '../../src/db/migrate.ts';
import { DIALECTS } from '../helpers/server.ts';
import { atMigration } from './migration-support.ts';
import { oldOwnedExam, oldSession } from './old-rows.ts';

const MIGRATION = '0025_accommodations';

describe(`migration ${MIGRATION}`, () => {
  for (const dialect of DIALECTS) {
    it(`gives existing rows no accommodations, no breaks, no practice and both exam settings on, on ${dialect}`, async () => {
      await atMigration(dialect, '0024_user_language', async (database) => {
        const { db } = database;
        const { exam } = await oldOwnedExam(db, { name: 'Before 0025', type: 'classroom' });
        const session = await oldSession(db, exam.id, { status: 'exam_started', token: 'a'.repeat(32) });
        const incident = await db
          .insertInto('incidents')
          .values({
            student_session_id: session.id,
            comment: 'Looked away',
            created_at: 1,
            updated_at: 1,
          } as never)
          .returning('id')
          .executeTakeFirstOrThrow();

        assert.ok((await migrateToLatest(database)).includes(MIGRATION));

        const row = await db
          .selectFrom('student_sessions')
          .select([
            'accommodations',
            'break_started_at',
            'break_ms',
            'breaks_taken',
            'practice_status',
            'practice_failed_check',
            'practice_at',
            'practice_reminded_at',
          ])
          .where('id', '=', session.id)
          .executeTakeFirstOrThrow();
        assert.deepEqual(
          { ...row, break_ms: Number(row.break_ms), breaks_taken: Number(row.breaks_taken) },
          {
            accommodations: null,
            break_started_at: null,
            break_ms: 0,
            breaks_taken: 0,
            practice_status: 'not_tried',
            practice_failed_check: null,
            practice_at: null,
            practice_reminded_at: null,
          },
        );
        const examRow = await db
          .selectFrom('exams')
          .select(['record_during_breaks', 'extra_time_beyond_end'])
          .where('id', '=', exam.id)
          .executeTakeFirstOrThrow();
        assert.equal(Boolean(examRow.record_during_breaks), true);
        assert.equal(Boolean(examRow.extra_time_beyond_end), true);
        const incidentRow = await db
          .selectFrom('incidents')
          .select('informational')
          .where('id', '=', incident.id)
          .executeTakeFirstOrThrow();
        assert.equal(Boolean(incidentRow.informational), false);

        // A practice run goes with its session.
        await db
          .insertInto('practice_runs')
          .values({
            student_session_id: session.id,
            status: 'passed',
            started_at: 2,
            created_at: 2,
            updated_at: 2,
          })
          .execute();
        await db.deleteFrom('student_sessions').where('id', '=', session.id).execute();
        const runs = await db.selectFrom('practice_runs').select('id').execute();
        assert.deepEqual(runs, []);
      });
    });
  }
});
