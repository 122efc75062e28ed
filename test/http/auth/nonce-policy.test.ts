import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ApiClient } from '../../helpers/client.ts';
import { httpRequest } from '../../helpers/http.ts';
import { DIALECTS, startTestServer, TestClock, type TestServer } from '../../helpers/server.ts';
import { assertRefused, formEncode, signatureOf, v3Headers } from './support.ts';

/**
 * NONCE_POLICY=signature, the default: a signature is accepted once per user within the window.
 * The official Ruby helper derives the nonce from the current second and the timestamp from the
 * current millisecond, so threads it starts together send different requests with one nonce and one
 * timestamp; each of those must pass, while any exact copy of an accepted request must not.
 */
for (const dialect of DIALECTS) {
  describe(`NONCE_POLICY=signature (the default): each signature is used once per user [${dialect}]`, () => {
    const clock = new TestClock();
    let server: TestServer;
    let client: ApiClient;
    let instituteId: number;

    before(async () => {
      // No NONCE_POLICY in the environment: the default is under test.
      server = await startTestServer(dialect, { clock });
      instituteId = await server.institute();
      client = (await server.user(instituteId, 'teacher')).client;
    });
    after(async () => server.close());

    /**
     * What a Ruby thread pool started within one second sends: a seconds nonce, one timestamp. The
     * held clock moves one second per burst, as the real one would between the tests.
     */
    const rubyBurst = () => {
      clock.current += 1000;
      return { nonce: String(Math.floor(clock.now() / 1000)), timestamp: clock.now() };
    };

    const examsNamed = async (name: string) =>
      server.app.database.db.selectFrom('exams').select('id').where('name', '=', name).execute();

    it('V3: accepts ten different exams created at once with one nonce and one timestamp', async () => {
      const burst = rubyBurst();
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_unused, index) =>
          client.v3(
            'POST',
            '/exams',
            { name: `Burst v3 ${burst.nonce} #${index}`, type: 'record_review', duration_minutes: 30 },
            burst,
          ),
        ),
      );
      assert.deepEqual(
        answers.map((answer) => answer.status),
        Array.from({ length: 10 }, () => 201),
        answers.map((answer) => answer.text).join('\n'),
      );
      for (let index = 0; index < 10; index += 1) {
        assert.equal((await examsNamed(`Burst v3 ${burst.nonce} #${index}`)).length, 1, `exam #${index}`);
      }
    });

    it('V2: accepts ten different exams created at once with one nonce and one timestamp', async () => {
      const burst = rubyBurst();
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_unused, index) =>
          client.v2(
            'POST',
            '/exams',
            { name: `Burst v2 ${burst.nonce} #${index}`, type: 'record_review', duration: 30 },
            burst,
          ),
        ),
      );
      assert.deepEqual(
        answers.map((answer) => answer.status),
        Array.from({ length: 10 }, () => 201),
        answers.map((answer) => answer.text).join('\n'),
      );
    });

    it('V3: accepts ten different reads (other pages) with one nonce and one timestamp', async () => {
      const burst = rubyBurst();
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_unused, index) =>
          client.v3('GET', '/exams', { page: index + 1, limit: 1 }, burst),
        ),
      );
      assert.deepEqual(
        answers.map((answer) => answer.status),
        Array.from({ length: 10 }, () => 200),
      );
    });

    for (const version of ['v3', 'v2'] as const) {
      it(`${version}: accepts exactly one of ten copies of one create sent at once`, async () => {
        const burst = rubyBurst();
        const name = `Copies ${version} ${burst.nonce}`;
        const params: Record<string, string | number> =
          version === 'v3'
            ? { name, type: 'classroom', duration_minutes: 30 }
            : { name, type: 'classroom', duration: 30 };
        const answers = await Promise.all(
          Array.from({ length: 10 }, () =>
            version === 'v3'
              ? client.v3('POST', '/exams', params, burst)
              : client.v2('POST', '/exams', params, burst),
          ),
        );
        const statuses = answers.map((answer) => answer.status).sort();
        assert.deepEqual(statuses, [201, 403, 403, 403, 403, 403, 403, 403, 403, 403]);
        for (const answer of answers.filter((candidate) => candidate.status === 403)) assertRefused(answer);
        assert.equal((await examsNamed(name)).length, 1, 'one exam was created');
      });

      it(`${version}: accepts exactly one of ten copies of one read sent at once`, async () => {
        const burst = rubyBurst();
        const answers = await Promise.all(
          Array.from({ length: 10 }, () =>
            version === 'v3' ? client.v3('GET', '/exams', {}, burst) : client.v2('GET', '/exams', {}, burst),
          ),
        );
        const statuses = answers.map((answer) => answer.status).sort();
        assert.deepEqual(statuses, [200, 403, 403, 403, 403, 403, 403, 403, 403, 403]);
      });
    }

    it('refuses a replay sent later, and a replay with the signature in upper case', async () => {
      const burst = rubyBurst();
      const sent = client.sign({}, {}, 'v3', burst);
      const signature = String(sent.signature);
      const url = (text: string) =>
        `${server.baseUrl}/api/v3/exams?${formEncode({ timestamp: String(sent.timestamp), nonce: String(sent.nonce), signature: text })}`;
      const headers = v3Headers(client.credentials.apiToken);
      assert.equal((await httpRequest({ url: url(signature), headers })).status, 200, 'the first use');
      assertRefused(await httpRequest({ url: url(signature), headers }), 'the same request again');
      assertRefused(await httpRequest({ url: url(signature.toUpperCase()), headers }), 'upper-case copy');
    });

    it('keeps signatures per user: another user may send a request with the same nonce and timestamp', async () => {
      const other = (await server.user(instituteId, 'teacher')).client;
      const burst = rubyBurst();
      assert.equal((await client.v3('GET', '/exams', {}, burst)).status, 200, 'first user');
      assert.equal((await other.v3('GET', '/exams', {}, burst)).status, 200, 'second user');
    });

    it('remembers the signature, lower-cased, with the nonce and the expiry of its window', async () => {
      const burst = rubyBurst();
      const signature = signatureOf(client.credentials.secretKey, {
        timestamp: String(burst.timestamp),
        nonce: burst.nonce,
        page: '3',
      });
      const answer = await client.v3(
        'GET',
        '/exams',
        { page: 3 },
        { ...burst, signature: signature.toUpperCase() },
      );
      assert.equal(answer.status, 200, answer.text);
      const rows = await server.app.database.db
        .selectFrom('nonces')
        .select(['nonce', 'scope', 'expires_at'])
        .where('scope', '=', signature)
        .execute();
      assert.deepEqual(
        rows.map((row) => ({ ...row, expires_at: Number(row.expires_at) })),
        [{ nonce: burst.nonce, scope: signature, expires_at: burst.timestamp + 86_400_000 }],
      );
    });
  });
}
