import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { migrateToLatest } from '../../src/db/migrate.ts';
import { DIALECTS } from '../helpers/server.ts';
import { atMigration } from './migration-support.ts';
import { oldExam, oldInstitute, oldSession, oldUser } from './old-rows.ts';

describe('migration 0015_live_proctoring', () => {
  for (const dialect of DIALECTS) {
    it(`gives existing sessions a running clock and an offline candidate, existing exams no ID check, and keeps a session's messages with it on ${dialect}`, async () => {
      await atMigration(dialect, '0014_session_retention', async (database) => {
        const { db } = database;
        const institute = await oldInstitute(db);
        const user = (email: string, role: string) => oldUser(db, institute.id, email, role);
        const owner = await user('owner@example.org', 'teacher');
        const proctor = await user('proctor@example.org', 'proctor');
        const exam = await oldExam(db, {
          institute_id: institute.id,
          user_id: owner.id,
          name: 'Before 0015',
          type: 'live_proctoring',
          status: 'open',
        });
        const session = await oldSession(db, exam.id, { status: 'exam_started', token: 'b'.repeat(32) });

        assert.ok((await migrateToLatest(database)).includes('0015_live_proctoring'));
        const row = await db
          .selectFrom('student_sessions')
          .select(['live_status', 'clock_paused_at', 'clock_paused_ms'])
          .where('id', '=', session.id)
          .executeTakeFirstOrThrow();
        assert.deepEqual({ ...row }, { live_status: 'offline', clock_paused_at: null, clock_paused_ms: 0 });
        const examRow = await db
          .selectFrom('exams')
          .select('live_id_check')
          .where('id', '=', exam.id)
          .executeTakeFirstOrThrow();
        assert.equal(Boolean(examRow.live_id_check), false);

        // Times in milliseconds past 2^31 round-trip on both databases.
        await db
          .updateTable('student_sessions')
          .set({ clock_paused_at: 1795226927619, clock_paused_ms: 3_000_000_000 })
          .where('id', '=', session.id)
          .execute();
        const paused = await db
          .selectFrom('student_sessions')
          .select(['clock_paused_at', 'clock_paused_ms'])
          .where('id', '=', session.id)
          .executeTakeFirstOrThrow();
        assert.deepEqual({ ...paused }, { clock_paused_at: 1795226927619, clock_paused_ms: 3_000_000_000 });

        const message = (sender: string, userId: number | null, body: string) =>
          db
            .insertInto('live_messages')
            .values({ student_session_id: session.id, sender, user_id: userId, body, created_at: 2 })
            .returning('id')
            .executeTakeFirstOrThrow();
        await message('proctor', proctor.id, 'Please show your ID card.');
        await message('candidate', null, 'Here it is.');
        // A proctor's account may go; the conversation stays, no longer naming it.
        await db.deleteFrom('users').where('id', '=', proctor.id).execute();
        const kept = await db
          .selectFrom('live_messages')
          .select(['sender', 'user_id', 'body'])
          .orderBy('id')
          .execute();
        assert.deepEqual(
          kept.map((entry) => ({ ...entry })),
          [
            { sender: 'proctor', user_id: null, body: 'Please show your ID card.' },
            { sender: 'candidate', user_id: null, body: 'Here it is.' },
          ],
        );
        // The session's deletion takes its messages with it.
        await db.deleteFrom('student_sessions').where('id', '=', session.id).execute();
        assert.deepEqual(await db.selectFrom('live_messages').select('id').execute(), []);
      });
    });
  }
});
