import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { migrateToLatest, migrateUpTo } from '../../src/db/migrate.ts';
import { createTestDatabase, DIALECTS, openTestDatabase } from '../helpers/server.ts';

describe('migration 0015_live_proctoring', () => {
  for (const dialect of DIALECTS) {
    it(`gives existing sessions a running clock and an offline candidate, existing exams no ID check, and keeps a session's messages with it on ${dialect}`, async () => {
      const target = await createTestDatabase(dialect);
      const database = openTestDatabase(target);
      try {
        await migrateUpTo(database, '0014_session_retention');
        const { db } = database;
        const institute = await db
          .insertInto('institutes')
          .values({
            name: 'Old',
            short_name: 'OLD',
            check_requirements_emails_enabled: true,
            reminder_emails_enabled: true,
            exam_link_emails_enabled: true,
            exam_changed_emails_enabled: true,
            exam_finalized_emails_enabled: true,
            default_language: 'en',
            created_at: 1,
            updated_at: 1,
          })
          .returning('id')
          .executeTakeFirstOrThrow();
        const user = (email: string, role: string) =>
          db
            .insertInto('users')
            .values({
              institute_id: institute.id,
              email,
              name: email,
              role,
              api_token_hash: `h-${email}`,
              secret_key_encrypted: 's',
              active: true,
              created_at: 1,
              updated_at: 1,
            })
            .returning('id')
            .executeTakeFirstOrThrow();
        const owner = await user('owner@example.org', 'teacher');
        const proctor = await user('proctor@example.org', 'proctor');
        const exam = await db
          .insertInto('exams')
          .values({
            institute_id: institute.id,
            user_id: owner.id,
            name: 'Before 0015',
            type: 'live_proctoring',
            status: 'open',
            created_at: 1,
            updated_at: 1,
          } as never)
          .returning('id')
          .executeTakeFirstOrThrow();
        const session = await db
          .insertInto('student_sessions')
          .values({
            exam_id: exam.id,
            name: 'Student',
            email: 'student@example.org',
            status: 'exam_started',
            token: 'b'.repeat(32),
            pin_code: 123456,
            created_at: 1,
            updated_at: 1,
          } as never)
          .returning('id')
          .executeTakeFirstOrThrow();

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
      } finally {
        await database.destroy();
        await target.drop();
      }
    });
  }
});
