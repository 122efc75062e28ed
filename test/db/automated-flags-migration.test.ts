import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { migrateToLatest } from '../../src/db/migrate.ts';
import { DIALECTS } from '../helpers/server.ts';
import { atMigration } from './migration-support.ts';
import { oldExam, oldInstitute, oldSession, oldUser } from './old-rows.ts';

describe('migration 0017_automated_flags', () => {
  for (const dialect of DIALECTS) {
    it(`gives existing exams no automated flags, existing incidents no flag fields, and keeps one incident per episode on ${dialect}`, async () => {
      await atMigration(dialect, '0016_lti_launch', async (database) => {
        const { db } = database;
        const institute = await oldInstitute(db);
        const user = (email: string, role: string) => oldUser(db, institute.id, email, role);
        const owner = await user('owner@example.org', 'teacher');
        const reviewer = await user('reviewer@example.org', 'reviewer');
        const exam = await oldExam(db, {
          institute_id: institute.id,
          user_id: owner.id,
          name: 'Before 0017',
          type: 'record_review',
          status: 'open',
        });
        const session = await oldSession(db, exam.id, { status: 'exam_finished', token: 'c'.repeat(32) });
        const incident = await db
          .insertInto('incidents')
          .values({
            student_session_id: session.id,
            comment: 'The exam window lost focus',
            offset_time: 12,
            kind: 'focus_lost',
            created_at: 1,
            updated_at: 1,
          } as never)
          .returning('id')
          .executeTakeFirstOrThrow();

        assert.ok((await migrateToLatest(database)).includes('0017_automated_flags'));

        const examRow = await db
          .selectFrom('exams')
          .select(['automated_flags', 'flag_settings'])
          .where('id', '=', exam.id)
          .executeTakeFirstOrThrow();
        assert.deepEqual(
          { automated_flags: Boolean(examRow.automated_flags), flag_settings: examRow.flag_settings },
          {
            automated_flags: false,
            flag_settings: null,
          },
        );
        const sessionRow = await db
          .selectFrom('student_sessions')
          .select('flags_rate_hz')
          .where('id', '=', session.id)
          .executeTakeFirstOrThrow();
        assert.equal(sessionRow.flags_rate_hz, null);
        const incidentRow = await db
          .selectFrom('incidents')
          .select([
            'comment',
            'kind',
            'type',
            'source',
            'confidence',
            'end_offset_time',
            'episode_key',
            'dismissed_at',
            'dismissed_by',
          ])
          .where('id', '=', incident.id)
          .executeTakeFirstOrThrow();
        assert.deepEqual(
          { ...incidentRow },
          {
            comment: 'The exam window lost focus',
            kind: 'focus_lost',
            type: null,
            source: null,
            confidence: null,
            end_offset_time: null,
            episode_key: null,
            dismissed_at: null,
            dismissed_by: null,
          },
        );

        // One incident per episode: a second row with the same key in the same session is refused,
        // while incidents without a key (every older one) may be many.
        const flag = (key: string | null) =>
          db
            .insertInto('incidents')
            .values({
              student_session_id: session.id,
              comment: 'Automatic flag',
              offset_time: 20,
              kind: 'flag',
              source: 'automatic',
              type: 'no_face',
              confidence: 0.75,
              episode_key: key,
              dismissed_at: 1795226927619,
              dismissed_by: reviewer.id,
              created_at: 2,
              updated_at: 2,
            })
            .execute();
        await flag('episode-1');
        await assert.rejects(flag('episode-1'));
        await flag(null);
        await flag(null);
        const stored = await db
          .selectFrom('incidents')
          .select(['confidence', 'dismissed_at', 'dismissed_by'])
          .where('episode_key', '=', 'episode-1')
          .executeTakeFirstOrThrow();
        assert.deepEqual(
          {
            confidence: Number(stored.confidence),
            dismissed_at: Number(stored.dismissed_at),
            by: stored.dismissed_by,
          },
          { confidence: 0.75, dismissed_at: 1795226927619, by: reviewer.id },
        );
        // A reviewer's account may go; the flag stays dismissed, no longer naming who did it.
        await db.deleteFrom('users').where('id', '=', reviewer.id).execute();
        const orphan = await db
          .selectFrom('incidents')
          .select('dismissed_by')
          .where('episode_key', '=', 'episode-1')
          .executeTakeFirstOrThrow();
        assert.equal(orphan.dismissed_by, null);
      });
    });
  }
});
