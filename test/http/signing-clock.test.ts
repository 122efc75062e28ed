/**
 * The test clients sign with the clock of the server they call, whatever today's date is: a suite
 * on a fixed date (here two years back) still gets its signed requests through, and a client made
 * to sign with another clock fails at once with a clear error instead of an unexplained 403 some
 * day after the fixed date. Run once with the date moved a year ahead (docs/performance.md, "The
 * suite's own time") to see the same.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ApiClient, signingTime } from '../helpers/client.ts';
import { DIALECTS, startTestServer, TestClock, type TestServer } from '../helpers/server.ts';

const TWO_YEARS_MS = 2 * 365 * 86_400_000;

for (const dialect of DIALECTS) {
  describe(`test clients sign with the server's clock [${dialect}]`, () => {
    let server: TestServer;
    let clock: TestClock;
    let credentials: ApiClient['credentials'];

    before(async () => {
      clock = new TestClock(Date.now() - TWO_YEARS_MS);
      server = await startTestServer(dialect, { clock });
      const institute = await server.institute();
      credentials = (await server.user(institute, 'teacher')).credentials;
    });

    after(async () => {
      await server?.close();
    });

    it('signs a new client with the server clock, two years from the real date', async () => {
      assert.equal(signingTime(server.baseUrl), clock.now());
      const client = new ApiClient(server.baseUrl, credentials);
      const answer = await client.v3('GET', '/exams');
      assert.equal(answer.status, 200, answer.text);
    });

    it('refuses to sign with a clock outside the server window', async () => {
      const client = new ApiClient(server.baseUrl, credentials, Date.now);
      await assert.rejects(() => client.v3('GET', '/exams'), /outside the window of the server/);
    });

    it('still sends a stale timestamp a test asks for, which the server refuses', async () => {
      const client = new ApiClient(server.baseUrl, credentials);
      const answer = await client.v3('GET', '/exams', {}, { timestamp: clock.now() - 2 * 86_400_000 });
      assert.equal(answer.status, 403);
    });
  });
}
