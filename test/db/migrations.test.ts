import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Migrator, sql } from 'kysely';
import { type Database } from '../../src/db/database.ts';
import * as m0001 from '../../src/db/migrations/0001_initial.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';
import { createTestDatabase, type DialectName, DIALECTS, openTestDatabase } from '../helpers/server.ts';

const MIGRATIONS = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
  'src',
  'db',
  'migrations',
);

/**
 * Runs `check` on a private database of `dialect` that has only the first migration applied, as an
 * installation of step 6 has it, so a test can write old rows and then migrate them. PostgreSQL:
 * the bookkeeping tables live in the test's own schema, where migrateToLatest looks for them.
 */
async function withInitialSchema(dialect: DialectName, check: (database: Database) => Promise<void>) {
  const target = await createTestDatabase(dialect);
  const database = openTestDatabase(target);
  try {
    const schema =
      database.dialect === 'postgres'
        ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(database.db)).rows[0]
            ?.schema
        : undefined;
    const first = new Migrator({
      db: database.db,
      provider: {
        getMigrations: () =>
          Promise.resolve({ '0001_initial': { up: (db) => m0001.up(db, database.dialect) } }),
      },
      ...(schema === undefined ? {} : { migrationTableSchema: schema }),
    });
    assert.equal((await first.migrateToLatest()).error, undefined);
    await check(database);
  } finally {
    await database.destroy();
    await target.drop();
  }
}

const TABLES = [
  'institutes',
  'identity_providers',
  'users',
  'exams',
  'exam_comanagers',
  'files',
  'documents',
  'attachments',
  'student_sessions',
  'incidents',
  'session_files',
  'tool_providers',
  'lti_resources',
  'nonces',
  'jobs',
  'outbox',
  'exam_zip_exports',
  'room_rate_limits',
  'staff_sessions',
  'one_time_links',
  'sign_in_throttles',
  'second_factors',
  'recovery_codes',
  'second_factor_challenges',
  'audit_events',
  'oidc_logins',
  'session_reviews',
  'recordings',
  'webhook_secrets',
  'session_purges',
  'live_messages',
];

describe('migrations', () => {
  it('are frozen in time: no migration imports anything from src/', () => {
    for (const file of fs.readdirSync(MIGRATIONS)) {
      const text = fs.readFileSync(path.join(MIGRATIONS, file), 'utf8');
      const imports = [...text.matchAll(/from\s+'([^']+)'/g)].map((match) => match[1]);
      assert.deepEqual(
        imports.filter((target) => target !== 'kysely'),
        [],
        `${file} imports more than kysely`,
      );
    }
  });

  for (const dialect of DIALECTS) {
    it(`create the whole data model on ${dialect}, once`, async () => {
      const target = await createTestDatabase(dialect);
      const database = openTestDatabase(target);
      try {
        const names = fs
          .readdirSync(MIGRATIONS)
          .map((file) => file.replace(/\.ts$/, ''))
          .sort();
        assert.deepEqual(await migrateToLatest(database), names);
        assert.deepEqual(await migrateToLatest(database), []);
        const tables = (await database.db.introspection.getTables()).map((table) => table.name);
        for (const table of TABLES) assert.ok(tables.includes(table), `${table} missing on ${dialect}`);
        // Booleans and times round-trip identically on both databases once a repository converts them.
        await database.db
          .insertInto('institutes')
          .values({
            name: 'Round trip',
            short_name: 'RT',
            check_requirements_emails_enabled: false,
            reminder_emails_enabled: true,
            exam_link_emails_enabled: true,
            exam_changed_emails_enabled: true,
            exam_finalized_emails_enabled: true,
            default_language: 'en',
            created_at: 1795226927619,
            updated_at: 1795226927619,
          })
          .execute();
        const row = await database.db.selectFrom('institutes').selectAll().executeTakeFirstOrThrow();
        assert.equal(Boolean(row.check_requirements_emails_enabled), false);
        assert.equal(Boolean(row.reminder_emails_enabled), true);
        assert.equal(row.created_at, 1795226927619);
        assert.equal(typeof row.id, 'number');
        // 0005: an API-only user has no password, so the hash column takes null.
        await database.db
          .insertInto('users')
          .values({
            institute_id: row.id,
            email: 'api-only@example.org',
            name: 'API only',
            role: 'teacher',
            api_token_hash: 'hash',
            secret_key_encrypted: 'secret',
            active: true,
            password_hash: null,
            created_at: 1795226927619,
            updated_at: 1795226927619,
          })
          .execute();
        const user = await database.db.selectFrom('users').select('password_hash').executeTakeFirstOrThrow();
        assert.equal(user.password_hash, null);
      } finally {
        await database.destroy();
        await target.drop();
      }
    });

    it(`0003_exam_client_fields gives existing exams their institute's language and the defaults on ${dialect}`, async () => {
      await withInitialSchema(dialect, async (database) => {
        const institute = await database.db
          .insertInto('institutes')
          .values({
            name: 'Alt',
            short_name: 'ALT',
            check_requirements_emails_enabled: true,
            reminder_emails_enabled: true,
            exam_link_emails_enabled: true,
            exam_changed_emails_enabled: true,
            exam_finalized_emails_enabled: true,
            default_language: 'de-CH',
            created_at: 1,
            updated_at: 1,
          })
          .returning('id')
          .executeTakeFirstOrThrow();
        const user = await database.db
          .insertInto('users')
          .values({
            institute_id: institute.id,
            email: 'old@example.org',
            name: 'Old',
            role: 'teacher',
            api_token_hash: 'h',
            secret_key_encrypted: 's',
            active: true,
            created_at: 1,
            updated_at: 1,
          })
          .returning('id')
          .executeTakeFirstOrThrow();
        await database.db
          .insertInto('exams')
          .values({
            institute_id: institute.id,
            user_id: user.id,
            name: 'Before 0003',
            type: 'classroom',
            status: 'open',
            created_at: 1,
            updated_at: 1,
          } as never)
          .execute();
        assert.ok((await migrateToLatest(database)).includes('0003_exam_client_fields'));
        const exam = await database.db.selectFrom('exams').selectAll().executeTakeFirstOrThrow();
        assert.deepEqual(
          {
            global_proctoring: Boolean(exam.global_proctoring),
            global_reviewing: Boolean(exam.global_reviewing),
            exam_language: exam.exam_language,
            timezone: exam.timezone,
            terms: exam.terms,
            archived: Boolean(exam.archived),
          },
          {
            global_proctoring: false,
            global_reviewing: false,
            exam_language: 'de-CH',
            timezone: 'UTC',
            terms: null,
            archived: false,
          },
        );
      });
    });

    it(`0002_user_email_case_insensitive renames later case duplicates and then refuses them on ${dialect}`, async () => {
      await withInitialSchema(dialect, async (database) => {
        const institute = await database.db
          .insertInto('institutes')
          .values({
            name: 'Dup',
            short_name: 'DUP',
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
        const ids: number[] = [];
        for (const email of ['admA@a.test', 'ADMA@a.test', 'other@a.test', 'adma@A.TEST']) {
          const row = await database.db
            .insertInto('users')
            .values({
              institute_id: institute.id,
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
            .executeTakeFirstOrThrow();
          ids.push(row.id);
        }
        await migrateToLatest(database);
        const rows = await database.db.selectFrom('users').select(['id', 'email']).orderBy('id').execute();
        assert.deepEqual(
          rows.map((row) => row.email),
          [
            'admA@a.test',
            `duplicate-${ids[1]}-of-ADMA@a.test`,
            'other@a.test',
            `duplicate-${ids[3]}-of-adma@A.TEST`,
          ],
        );
        await assert.rejects(
          database.db
            .insertInto('users')
            .values({
              institute_id: institute.id,
              email: 'OTHER@A.test',
              name: 'again',
              role: 'teacher',
              api_token_hash: 'h-again',
              secret_key_encrypted: 's',
              active: true,
              created_at: 1,
              updated_at: 1,
            })
            .execute(),
        );
      });
    });
  }
});
