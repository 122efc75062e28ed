import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'kysely';

import { migrateToLatest } from '../../src/db/migrate.ts';
import { DIALECTS } from '../helpers/server.ts';
import { atMigration } from './migration-support.ts';
import { oldOwnedExam, oldSession } from './old-rows.ts';

const MIGRATION = '0021_outbox_session_index';

describe(`migration ${MIGRATION}`, () => {
  for (const dialect of DIALECTS) {
    it(`indexes the outbox by student session and keeps its rows on ${dialect}`, async () => {
      await atMigration(dialect, '0020_recoverable_tokens_and_deadlines', async (database) => {
        const { db } = database;
        const { exam, institute } = await oldOwnedExam(db, { name: 'Before 0021', type: 'record_review' });
        const session = await oldSession(db, exam.id, { status: 'exam_not_started', token: 'c'.repeat(32) });
        const email = (studentSessionId: number | null, subject: string) =>
          db
            .insertInto('outbox')
            .values({
              kind: 'exam_link',
              to_address: 'student@example.org',
              subject,
              text_body: 'text',
              html_body: '<p>text</p>',
              status: 'queued',
              attempts: 0,
              next_attempt_at: 1,
              student_session_id: studentSessionId,
              institute_id: institute.id,
              created_at: 1,
            })
            .execute();
        await email(session.id, 'First link');
        await email(session.id, 'Second link');
        await email(null, 'A staff email');

        assert.ok((await migrateToLatest(database)).includes(MIGRATION));

        const indexes =
          dialect === 'sqlite'
            ? await sql<{ name: string }>`select name from sqlite_master where type = 'index'`.execute(db)
            : await sql<{ name: string }>`select indexname as name from pg_indexes
                where schemaname = current_schema()`.execute(db);
        assert.ok(indexes.rows.some((row) => row.name === 'outbox_session'));
        const rows = await db
          .selectFrom('outbox')
          .select('subject')
          .where('student_session_id', '=', session.id)
          .orderBy('id')
          .execute();
        assert.deepEqual(
          rows.map((row) => row.subject),
          ['First link', 'Second link'],
        );
      });
    });
  }
});
