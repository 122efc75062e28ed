import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { migrateToLatest } from '../../src/db/migrate.ts';
import { DIALECTS } from '../helpers/server.ts';
import { atMigration } from './migration-support.ts';

const INSTITUTE = {
  short_name: 'OLD',
  check_requirements_emails_enabled: true,
  reminder_emails_enabled: true,
  exam_link_emails_enabled: true,
  exam_changed_emails_enabled: true,
  exam_finalized_emails_enabled: true,
  default_language: 'en',
  created_at: 1,
  updated_at: 1,
};

describe('migration 0009_outbox_institute', () => {
  for (const dialect of DIALECTS) {
    it(`gives existing outbox rows their institute (from the session's exam, or the staff user) on ${dialect}`, async () => {
      await atMigration(dialect, '0007_audit_events', async (database) => {
        const { db } = database;
        const institute = async (name: string) =>
          (
            await db
              .insertInto('institutes')
              .values({ ...INSTITUTE, name })
              .returning('id')
              .executeTakeFirstOrThrow()
          ).id;
        const a = await institute('A');
        const b = await institute('B');
        const user = async (instituteId: number, email: string) =>
          (
            await db
              .insertInto('users')
              .values({
                institute_id: instituteId,
                email,
                name: email,
                role: 'teacher',
                api_token_hash: `h-${email}`,
                secret_key_encrypted: 's',
                active: true,
                created_at: 1,
                updated_at: 1,
              })
              .returning('id')
              .executeTakeFirstOrThrow()
          ).id;
        const teacherB = await user(b, 'Teacher.B@Example.org');
        await user(a, 'admin.a@example.org');
        const exam = await db
          .insertInto('exams')
          .values({
            institute_id: b,
            user_id: teacherB,
            name: 'Old exam',
            type: 'classroom',
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
            status: 'email_sent',
            token: 'a'.repeat(32),
            pin_code: 123456,
            created_at: 1,
            updated_at: 1,
          } as never)
          .returning('id')
          .executeTakeFirstOrThrow();
        const mail = async (kind: string, to: string, studentSessionId: number | null) =>
          (
            await db
              .insertInto('outbox')
              .values({
                kind,
                to_address: to,
                subject: 's',
                text_body: 't',
                html_body: 'h',
                status: 'held',
                attempts: 0,
                next_attempt_at: 1,
                student_session_id: studentSessionId,
                created_at: 1,
              } as never)
              .returning('id')
              .executeTakeFirstOrThrow()
          ).id;
        const examLink = await mail('exam_link', 'student@example.org', session.id);
        // The address in another case than the user's: emails are one address regardless of case.
        const invitation = await mail('staff_invitation', 'teacher.b@example.org', null);
        const reset = await mail('password_reset', 'ADMIN.A@example.org', null);
        const stranger = await mail('password_reset', 'nobody@example.org', null);
        // An exam email whose session is gone names nobody: it stays in no institute.
        const orphan = await mail('exam_link', 'admin.a@example.org', null);

        assert.ok((await migrateToLatest(database)).includes('0009_outbox_institute'));
        const rows = await db.selectFrom('outbox').select(['id', 'institute_id']).orderBy('id').execute();
        const byId = new Map(rows.map((row) => [row.id, row.institute_id]));
        assert.equal(byId.get(examLink), b);
        assert.equal(byId.get(invitation), b);
        assert.equal(byId.get(reset), a);
        assert.equal(byId.get(stranger), null);
        assert.equal(byId.get(orphan), null);

        // The institute's deletion takes its mail with it.
        await db.deleteFrom('exams').where('institute_id', '=', b).execute();
        await db.deleteFrom('institutes').where('id', '=', b).execute();
        const left = await db.selectFrom('outbox').select('id').orderBy('id').execute();
        assert.deepEqual(
          left.map((row) => row.id),
          [reset, stranger, orphan],
        );
      });
    });
  }
});
