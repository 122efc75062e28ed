import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Database } from '../../src/db/database.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';
import { prepared } from '../../src/db/prepared.ts';
import { createNonceStore } from '../../src/http/auth/nonce-store.ts';
import { createTestDatabase, DIALECTS, type TestDatabase, openTestDatabase } from '../helpers/server.ts';

for (const dialect of DIALECTS) {
  describe(`prepared queries and the grouped nonce store [${dialect}]`, () => {
    let target: TestDatabase;
    let database: Database;
    let userId: number;

    before(async () => {
      target = await createTestDatabase(dialect);
      database = openTestDatabase(target);
      await migrateToLatest(database);
      const institute = await database.db
        .insertInto('institutes')
        .values({
          name: 'Prepared',
          short_name: 'P',
          check_requirements_emails_enabled: true,
          reminder_emails_enabled: true,
          exam_link_emails_enabled: true,
          exam_changed_emails_enabled: true,
          exam_finalized_emails_enabled: true,
          default_language: 'en',
          created_at: 0,
          updated_at: 0,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      const user = await database.db
        .insertInto('users')
        .values({
          institute_id: institute.id,
          email: 'p@example.org',
          name: 'P',
          role: 'teacher',
          api_token_hash: 'h',
          secret_key_encrypted: 's',
          active: true,
          created_at: 0,
          updated_at: 0,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      userId = user.id;
    });
    after(async () => {
      await database.destroy();
      await target.drop();
    });

    it('runs a compiled query with each call’s own values', async () => {
      const byEmail = prepared(['x'] as [string], (db, email) =>
        db.selectFrom('users').select('id').where('email', '=', email),
      );
      const ids = async (email: string) => (await byEmail(database.db, [email])).map((row) => row.id);
      assert.deepEqual(await ids('p@example.org'), [userId]);
      assert.deepEqual(await ids('nobody@example.org'), []);
    });

    it('refuses a query that does not bind its placeholders in the declared order', async () => {
      const swapped = prepared([1, 'x'] as [number, string], (db, id, email) =>
        db.selectFrom('users').select('id').where('email', '=', email).where('id', '=', id),
      );
      await assert.rejects(swapped(database.db, [userId, 'p@example.org']), /not its placeholders/);
    });

    it('accepts each nonce once when many uses arrive together, duplicates included', async () => {
      const store = createNonceStore(database.db, 'request');
      const use = (nonce: string) => ({
        userId,
        nonce,
        timestamp: '1000',
        signature: 'ab'.repeat(32),
        expiresAt: 10_000,
        now: 1000,
      });
      const answers = await Promise.all([
        store.remember(use('1')),
        store.remember(use('2')),
        store.remember(use('1')),
        store.remember(use('3')),
        store.remember(use('2')),
      ]);
      assert.deepEqual(answers, [true, true, false, true, false]);
      assert.equal(await store.remember(use('3')), false);
      assert.equal(await store.remember({ ...use('3'), now: 20_000, expiresAt: 30_000 }), true);
    });

    it('under the signature policy, accepts requests sharing nonce and timestamp in one group once each', async () => {
      const store = createNonceStore(database.db, 'signature');
      const use = (signature: string) => ({
        userId,
        nonce: '1795226927',
        timestamp: '1795226927619',
        signature,
        expiresAt: 10_000,
        now: 1000,
      });
      const [first, second] = ['c0'.repeat(32), 'd1'.repeat(32)];
      const answers = await Promise.all([
        store.remember(use(first)),
        store.remember(use(second)),
        store.remember(use(first.toUpperCase())),
        store.remember(use(second)),
      ]);
      assert.deepEqual(answers, [true, true, false, false]);
    });
  });
}
