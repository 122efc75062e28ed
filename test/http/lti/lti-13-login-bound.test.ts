/**
 * LTI 1.3 login initiation is bounded (docs/security.md, "LTI 1.3 login initiation is bounded"):
 * pending logins are counted per client address and per platform in windows of LTI_LOGIN_MS, the
 * one past a cap answers 429 with Retry-After and writes no row, and expired rows go.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { LTI_LOGIN_MS, LTI_LOGINS_PER_ADDRESS, LTI_LOGINS_PER_PLATFORM } from '../../../src/lti/login.ts';
import { httpRequest } from '../../helpers/http.ts';
import { DIALECTS, TestClock } from '../../helpers/server.ts';
import { loginParams, type LtiWorld, startLtiWorld } from './lti-13.support.ts';

for (const dialect of DIALECTS) {
  describe(`LTI 1.3 login initiation bounds [${dialect}]`, () => {
    const clock = new TestClock(Date.UTC(2026, 10, 23, 9, 0, 0));
    let world: LtiWorld;

    before(async () => {
      world = await startLtiWorld(dialect, { clock });
    });
    after(() => world.close());
    beforeEach(async () => {
      await world.app.database.db.deleteFrom('sign_in_throttles').execute();
      await world.app.database.db.deleteFrom('lti_logins').execute();
    });

    const login = (hint = 'learner') =>
      httpRequest({ url: `${world.baseUrl}/lti/login?${loginParams(world, hint).toString()}` });
    const pendingLogins = async () =>
      Number(
        (
          await world.app.database.db
            .selectFrom('lti_logins')
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
    /** Records `count` logins already started in this window under `key`, as the counter would. */
    const counted = (key: string, count: number) =>
      world.app.database.db
        .insertInto('sign_in_throttles')
        .values({ key, failures: count, last_failure_at: clock.now(), blocked_until: clock.now() })
        .execute();

    it(`lets ${LTI_LOGINS_PER_ADDRESS} logins start from one address, then answers 429 with Retry-After and writes nothing`, async () => {
      await counted('lti_login:127.0.0.1', LTI_LOGINS_PER_ADDRESS - 10);
      const statuses = (await Promise.all(Array.from({ length: 40 }, () => login()))).map((a) => a.status);
      assert.equal(statuses.filter((status) => status === 302).length, 10);
      assert.equal(statuses.filter((status) => status === 429).length, 30);
      assert.equal(await pendingLogins(), 10);
      const refused = await login();
      assert.equal(refused.status, 429);
      assert.equal(refused.headers['retry-after'], String(LTI_LOGIN_MS / 1000));
      assert.match(refused.text, /Too many launches were started from your network/);
      assert.equal(await pendingLogins(), 10);
      // The window ends: logins start again, and the expired pending logins are removed.
      clock.current += LTI_LOGIN_MS + 1;
      try {
        assert.equal((await login()).status, 302);
        assert.equal(await pendingLogins(), 1);
      } finally {
        clock.current -= LTI_LOGIN_MS + 1;
      }
    });

    it(`caps the logins of one platform at ${LTI_LOGINS_PER_PLATFORM} in the window, whatever the addresses`, async () => {
      await counted(`lti_login_platform:${world.toolProviderId}`, LTI_LOGINS_PER_PLATFORM - 1);
      assert.equal((await login()).status, 302);
      const refused = await login();
      assert.equal(refused.status, 429);
      assert.ok(Number(refused.headers['retry-after']) >= 1);
      assert.match(refused.text, /Too many launches were started for your learning platform/);
      assert.equal(await pendingLogins(), 1);
    });

    it('counts nothing for a login that names no registered platform', async () => {
      const answer = await httpRequest({
        url: `${world.baseUrl}/lti/login?${loginParams(world, 'x', { iss: 'https://elsewhere.example' }).toString()}`,
      });
      assert.equal(answer.status, 404);
      const rows = await world.app.database.db.selectFrom('sign_in_throttles').select('key').execute();
      assert.deepEqual(rows, []);
    });
  });
}
