import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { openDatabase } from '../../src/db/database.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';
import { createTestDatabase, DIALECTS } from '../helpers/server.ts';

const MIGRATIONS = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
  'src',
  'db',
  'migrations',
);

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
      const database = openDatabase(
        dialect === 'sqlite'
          ? { kind: 'sqlite', path: target.url.slice('sqlite:'.length) }
          : { kind: 'postgres', url: target.url },
      );
      try {
        assert.deepEqual(await migrateToLatest(database), ['0001_initial']);
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
      } finally {
        await database.destroy();
        await target.drop();
      }
    });
  }
});
