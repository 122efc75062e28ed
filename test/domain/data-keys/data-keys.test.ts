import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createDataKeysService } from '../../../src/domain/data-keys/data-keys.service.ts';
import { DataKeyUnavailable } from '../../../src/domain/errors.ts';
import { loadServerKeys } from '../../../src/security/keys.ts';
import { DIALECTS, startTestServer, type TestServer } from '../../helpers/server.ts';

const OLD = loadServerKeys('the former server secret, thirty-two characters or more', '.');
const NEW = loadServerKeys('the current server secret, thirty-two characters or more', '.');

for (const dialect of DIALECTS) {
  describe(`per-institute data keys [${dialect}]`, () => {
    let server: TestServer;
    let institute: number;

    before(async () => {
      server = await startTestServer(dialect);
      institute = await server.institute();
    });
    after(async () => {
      await server.close();
    });

    const service = (keys = OLD) =>
      createDataKeysService({ db: server.app.database.db, clock: server.app.clock, keys });

    it('makes version 1 once, however many writers ask at the same time, and keeps it in memory', async () => {
      const keys = service();
      const [first, ...rest] = await Promise.all(Array.from({ length: 20 }, () => keys.sealing(institute)));
      assert.equal(first?.version, 1);
      assert.equal(first?.key.length, 32);
      for (const other of rest) assert.ok(other.key.equals(first?.key ?? Buffer.alloc(0)));
      // Another process (another service object) reads the same key.
      assert.ok((await service().opening(institute, 1)).equals(first?.key ?? Buffer.alloc(0)));
      const rows = await server.app.database.db
        .selectFrom('data_keys')
        .selectAll()
        .where('institute_id', '=', institute)
        .execute();
      assert.equal(rows.length, 1);
      assert.ok(!rows[0]?.wrapped_key.includes(first?.key.toString('base64') ?? ''), 'stored wrapped');
    });

    it('rotates to a new version for new writes while the old one keeps opening', async () => {
      const keys = service();
      const before = await keys.sealing(institute);
      assert.deepEqual(await keys.rotate(institute), [{ institute, version: before.version + 1 }]);
      const after = await keys.sealing(institute);
      assert.equal(after.version, before.version + 1);
      assert.ok(!after.key.equals(before.key));
      assert.ok((await keys.opening(institute, before.version)).equals(before.key));
      const snapshot = await keys.snapshot(institute);
      assert.equal(snapshot.current, after.version);
      assert.deepEqual(Object.keys(snapshot.keys).sort(), ['1', '2']);
    });

    it('fails closed under another server key, and for a version that does not exist', async () => {
      await assert.rejects(service(NEW).opening(institute, 1), (error) => {
        assert.ok(error instanceof DataKeyUnavailable);
        assert.match(error.message, /does not open with this server key/);
        return true;
      });
      await assert.rejects(service(NEW).sealing(institute), DataKeyUnavailable);
      await assert.rejects(service().opening(institute, 99), /no such data key/);
    });

    it('re-wraps every key from the former server key to the current one, and reports what opens under neither', async () => {
      const other = await server.institute();
      const stranger = loadServerKeys('a third server secret nobody remembers anymore', '.');
      await createDataKeysService({
        db: server.app.database.db,
        clock: server.app.clock,
        keys: stranger,
      }).sealing(other);
      const before = await service().opening(institute, 1);
      const result = await service(NEW).rewrap(OLD);
      assert.equal(result.rewrapped, 2);
      assert.deepEqual(result.unreadable, [{ institute: other, version: 1 }]);
      assert.ok((await service(NEW).opening(institute, 1)).equals(before));
      await assert.rejects(service(OLD).opening(institute, 1), DataKeyUnavailable);
    });
  });
}
