import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { sql } from 'kysely';
import { type Database } from '../../src/db/database.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';
import { writeGeneration } from '../../src/db/write-generation.ts';
import { createMomentCache, MOMENT_MS } from '../../src/domain/room/moment-cache.ts';
import { oldInstitute } from './old-rows.ts';
import { createTestDatabase, DIALECTS, type TestDatabase, openTestDatabase } from '../helpers/server.ts';

for (const dialect of DIALECTS) {
  describe(`the write generation and the room's moment cache [${dialect}]`, () => {
    let target: TestDatabase;
    let database: Database;
    let instituteId: number;

    before(async () => {
      target = await createTestDatabase(dialect);
      database = openTestDatabase(target);
      await migrateToLatest(database);
      instituteId = (await oldInstitute(database.db)).id;
    });
    after(async () => {
      await database.destroy();
      await target.drop();
    });

    const generation = (): number => {
      const value = writeGeneration(database.db);
      assert.ok(value !== undefined, 'the database is built with the plugin');
      return value;
    };

    it('moves on for writes to a watched table, in a transaction too, and not for reads or other tables', async () => {
      const { db } = database;
      const start = generation();
      await db.selectFrom('institutes').selectAll().execute();
      await db.updateTable('users').set({ updated_at: 1 }).where('id', '=', -1).execute();
      await db.insertInto('room_rate_limits').values({ key: 'k', window_start: 0, hits: 1 }).execute();
      assert.equal(generation(), start, 'reads and unwatched tables leave it');

      await db.updateTable('institutes').set({ updated_at: 2 }).where('id', '=', instituteId).execute();
      const afterUpdate = generation();
      assert.ok(afterUpdate > start);

      await db.transaction().execute(async (trx) => {
        await trx.deleteFrom('message_overrides').where('institute_id', '=', instituteId).execute();
      });
      const afterTransaction = generation();
      assert.ok(afterTransaction > afterUpdate);

      // Raw statements: a write naming a watched table counts, a read or another table does not.
      await sql`select count(*) from exams`.execute(db);
      await sql`update users set updated_at = 3 where id = -1`.execute(db);
      assert.equal(generation(), afterTransaction);
      await sql`update exams set updated_at = 3 where id = -1`.execute(db);
      assert.ok(generation() > afterTransaction);
    });

    it('answers from what it kept until a watched write or the end of the moment', async () => {
      const cache = createMomentCache(database.db);
      let loads = 0;
      const load = () => {
        loads += 1;
        return Promise.resolve(loads);
      };
      assert.equal(await cache.get('k', load), 1);
      assert.equal(await cache.get('k', load), 1, 'kept');
      assert.equal(await cache.get('other', load), 2, 'another key loads');

      await database.db.updateTable('exams').set({ updated_at: 4 }).where('id', '=', -1).execute();
      assert.equal(await cache.get('k', load), 3, 'read again after a write to a watched table');
      assert.equal(await cache.get('k', load), 3);

      await delay(MOMENT_MS + 50);
      assert.equal(await cache.get('k', load), 4, 'read again once the moment is over');
    });

    it('never keeps a failed read', async () => {
      const cache = createMomentCache(database.db);
      await assert.rejects(
        cache.get('k', () => Promise.reject(new Error('down'))),
        /down/,
      );
      await delay(0);
      assert.equal(await cache.get('k', () => Promise.resolve('up')), 'up');
    });
  });
}
