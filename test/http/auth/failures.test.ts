import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { purgeExpiredNonces } from '../../../src/http/auth/nonce-store.ts';
import type { Credentials } from '../../helpers/client.ts';
import { type HttpAnswer, httpRequest } from '../../helpers/http.ts';
import {
  DIALECTS,
  type DialectName,
  startTestServer,
  TestClock,
  type TestServer,
} from '../../helpers/server.ts';
import {
  assertRefused,
  formEncode,
  freshNonce,
  setUserActive,
  signatureOf,
  startLoggedServer,
  v3Headers,
} from './support.ts';

type Version = 'v3' | 'v2';
const VERSIONS: readonly Version[] = ['v3', 'v2'];

/** Which signed parameter a call leaves out, or changes after signing. */
interface CallShape {
  /** Omit from the request entirely (signed without it too). */
  readonly omit?: readonly ('timestamp' | 'nonce' | 'signature' | 'token')[];
  readonly timestamp?: number;
  readonly nonce?: string;
  /** The token sent (V3 header / V2 api_token); defaults to the credentials' token. */
  readonly token?: string;
  readonly signature?: string;
  /** Parameters signed... */
  readonly params?: Readonly<Record<string, string>>;
  /** ...and, when given, what is sent instead of them. */
  readonly sentParams?: Readonly<Record<string, string>>;
}

/**
 * A signed list call (`GET /api/v3/exams` or `GET /api/exams`) shaped by `shape`, sent as a query
 * string. V3 carries the token in the header, V2 as the signed `api_token` parameter.
 */
function listCall(
  baseUrl: string,
  version: Version,
  credentials: Credentials,
  clockNow: number,
  shape: CallShape = {},
) {
  const omit = new Set(shape.omit ?? []);
  const token = shape.token ?? credentials.apiToken;
  const signed: Record<string, string> = { ...shape.params };
  if (version === 'v2' && !omit.has('token')) signed.api_token = token;
  if (!omit.has('timestamp')) signed.timestamp = String(shape.timestamp ?? clockNow);
  if (!omit.has('nonce')) signed.nonce = shape.nonce ?? freshNonce();
  const sent: Record<string, string> = { ...signed, ...shape.sentParams };
  if (!omit.has('signature')) sent.signature = shape.signature ?? signatureOf(credentials.secretKey, signed);
  const headers: Record<string, string> =
    version === 'v3' ? v3Headers(token) : { accept: 'application/json' };
  if (version === 'v3' && omit.has('token')) delete headers.authorization;
  const path = version === 'v3' ? '/api/v3/exams' : '/api/exams';
  return httpRequest({ url: `${baseUrl}${path}?${formEncode(sent)}`, headers });
}

function assertListed(answer: HttpAnswer, what = 'the request'): void {
  assert.equal(answer.status, 200, `${what}: ${answer.text}`);
}

const WINDOW_SECONDS = 60;

for (const dialect of DIALECTS) {
  describe(`every authentication failure answers 403 with the one message [${dialect}]`, () => {
    const clock = new TestClock();
    let server: TestServer;
    let credentials: Credentials;
    let instituteId: number;

    before(async () => {
      server = await startTestServer(dialect, {
        clock,
        env: { SIGNATURE_WINDOW_SECONDS: String(WINDOW_SECONDS) },
      });
      instituteId = await server.institute();
      const user = await server.user(instituteId, 'teacher');
      credentials = user.credentials;
    });
    after(async () => server.close());

    const call = (version: Version, shape?: CallShape) =>
      listCall(server.baseUrl, version, credentials, clock.now(), shape);

    for (const version of VERSIONS) {
      describe(`${version.toUpperCase()}`, () => {
        it('accepts a correctly signed request (the baseline every refusal below differs from)', async () => {
          assertListed(await call(version));
        });

        it(
          version === 'v3'
            ? 'refuses a request without the token header'
            : 'refuses a request without api_token',
          async () => {
            assertRefused(await call(version, { omit: ['token'] }));
          },
        );

        it('refuses an unknown token', async () => {
          assertRefused(await call(version, { token: crypto.randomBytes(16).toString('hex') }));
        });

        it('refuses an empty token', async () => {
          assertRefused(await call(version, { token: '' }));
        });

        if (version === 'v3') {
          it('refuses a token header of another scheme (Bearer)', async () => {
            const signed = { timestamp: String(clock.now()), nonce: freshNonce() };
            const answer = await httpRequest({
              url: `${server.baseUrl}/api/v3/exams?${formEncode({ ...signed, signature: signatureOf(credentials.secretKey, signed) })}`,
              headers: v3Headers(credentials.apiToken, { authorization: `Bearer ${credentials.apiToken}` }),
            });
            assertRefused(answer);
          });
        }

        it('refuses a request without timestamp', async () => {
          assertRefused(await call(version, { omit: ['timestamp'] }));
        });

        it('refuses a request without nonce', async () => {
          assertRefused(await call(version, { omit: ['nonce'] }));
        });

        it('refuses a request without signature', async () => {
          assertRefused(await call(version, { omit: ['signature'] }));
        });

        it('refuses a request with none of the signed parameters', async () => {
          assertRefused(await call(version, { omit: ['timestamp', 'nonce', 'signature'] }));
        });

        it('refuses a wrong signature (signed with another key)', async () => {
          const other = crypto.randomBytes(24).toString('hex');
          const signed = { timestamp: String(clock.now()), nonce: freshNonce() };
          const signature = signatureOf(
            other,
            version === 'v2' ? { ...signed, api_token: credentials.apiToken } : signed,
          );
          assertRefused(await call(version, { timestamp: clock.now(), nonce: signed.nonce, signature }));
        });

        it('refuses a signature that is not 64 hex digits', async () => {
          assertRefused(await call(version, { signature: 'zz'.repeat(32) }));
          assertRefused(await call(version, { signature: 'ab'.repeat(31) }));
        });

        it('refuses a parameter changed after signing', async () => {
          const filter = JSON.stringify({ name: { eq: 'signed' } });
          const tampered = JSON.stringify({ name: { eq: 'tampered' } });
          assertRefused(await call(version, { params: { filter }, sentParams: { filter: tampered } }));
        });

        it('refuses a parameter added after signing', async () => {
          assertRefused(await call(version, { params: {}, sentParams: { page: '2' } }));
        });

        it('refuses the timestamp changed after signing', async () => {
          const signed = { timestamp: String(clock.now()), nonce: freshNonce() };
          const signature = signatureOf(
            credentials.secretKey,
            version === 'v2' ? { ...signed, api_token: credentials.apiToken } : signed,
          );
          assertRefused(await call(version, { timestamp: clock.now() + 1, nonce: signed.nonce, signature }));
        });

        it('refuses a replayed request: the identical request a second time', async () => {
          const shape = { timestamp: clock.now(), nonce: freshNonce() };
          assertListed(await call(version, shape), 'the first request');
          assertRefused(await call(version, shape), 'the replay');
        });

        it(`refuses a timestamp older than SIGNATURE_WINDOW_SECONDS (${WINDOW_SECONDS}s)`, async () => {
          assertRefused(await call(version, { timestamp: clock.now() - (WINDOW_SECONDS + 1) * 1000 }));
        });

        it(`refuses a timestamp newer than SIGNATURE_WINDOW_SECONDS (${WINDOW_SECONDS}s)`, async () => {
          assertRefused(await call(version, { timestamp: clock.now() + (WINDOW_SECONDS + 1) * 1000 }));
        });

        it('accepts timestamps just inside the window on either side', async () => {
          assertListed(
            await call(version, { timestamp: clock.now() - (WINDOW_SECONDS - 1) * 1000 }),
            'older',
          );
          assertListed(
            await call(version, { timestamp: clock.now() + (WINDOW_SECONDS - 1) * 1000 }),
            'newer',
          );
        });

        it('refuses a timestamp in seconds instead of milliseconds', async () => {
          assertRefused(await call(version, { timestamp: Math.floor(clock.now() / 1000) }));
        });

        it('refuses a deactivated user, and accepts it again once reactivated', async () => {
          const user = await server.user(instituteId, 'teacher');
          const shape = () => listCall(server.baseUrl, version, user.credentials, clock.now());
          assertListed(await shape(), 'while active');
          await setUserActive(server, user.id, false);
          assertRefused(await shape(), 'while deactivated');
          await setUserActive(server, user.id, true);
          assertListed(await shape(), 'reactivated');
        });

        it('refuses the old credentials after rotation and accepts the new ones', async () => {
          const user = await server.user(instituteId, 'teacher');
          assertListed(
            await listCall(server.baseUrl, version, user.credentials, clock.now()),
            'before rotation',
          );
          const rotated = await server.app.services.users.rotateCredentials(user.id);
          assertRefused(
            await listCall(server.baseUrl, version, user.credentials, clock.now()),
            'old token and secret',
          );
          const oldTokenNewSecret = {
            apiToken: user.credentials.apiToken,
            secretKey: rotated.credentials.secretKey,
          };
          assertRefused(
            await listCall(server.baseUrl, version, oldTokenNewSecret, clock.now()),
            'old token, new secret',
          );
          const newTokenOldSecret = {
            apiToken: rotated.credentials.apiToken,
            secretKey: user.credentials.secretKey,
          };
          assertRefused(
            await listCall(server.baseUrl, version, newTokenOldSecret, clock.now()),
            'new token, old secret',
          );
          assertListed(
            await listCall(server.baseUrl, version, rotated.credentials, clock.now()),
            'new credentials',
          );
        });

        it("refuses a request signed with another user's secret", async () => {
          const other = await server.user(instituteId, 'teacher');
          const mixed = { apiToken: credentials.apiToken, secretKey: other.credentials.secretKey };
          assertRefused(await listCall(server.baseUrl, version, mixed, clock.now()));
        });
      });
    }
  });

  describe(`NONCE_POLICY=request: a (nonce, timestamp) pair is used once per user [${dialect}]`, () => {
    const clock = new TestClock();
    let server: TestServer;
    let credentials: Credentials;
    let instituteId: number;

    before(async () => {
      server = await startTestServer(dialect, { clock, env: { NONCE_POLICY: 'request' } });
      instituteId = await server.institute();
      credentials = (await server.user(instituteId, 'teacher')).credentials;
    });
    after(async () => server.close());

    for (const version of VERSIONS) {
      it(`${version}: accepts the same nonce with a different timestamp`, async () => {
        const nonce = freshNonce();
        assertListed(await listCall(server.baseUrl, version, credentials, clock.now(), { nonce }), 'first');
        const later = { nonce, timestamp: clock.now() + 1 };
        assertListed(
          await listCall(server.baseUrl, version, credentials, clock.now(), later),
          'same nonce, next ms',
        );
      });

      it(`${version}: refuses the same (nonce, timestamp) pair, even with other parameters`, async () => {
        const pair = { nonce: freshNonce(), timestamp: clock.now() };
        assertListed(await listCall(server.baseUrl, version, credentials, clock.now(), pair), 'first');
        const other = { ...pair, params: { page: '1' } };
        assertRefused(await listCall(server.baseUrl, version, credentials, clock.now(), other), 'same pair');
      });
    }

    it('accepts exactly one of ten identical requests sent at once', async () => {
      for (const version of VERSIONS) {
        const pair = { nonce: freshNonce(), timestamp: clock.now() };
        const answers = await Promise.all(
          Array.from({ length: 10 }, () => listCall(server.baseUrl, version, credentials, clock.now(), pair)),
        );
        const statuses = answers.map((answer) => answer.status).sort();
        assert.deepEqual(statuses, [200, 403, 403, 403, 403, 403, 403, 403, 403, 403], version);
        for (const answer of answers.filter((candidate) => candidate.status === 403)) assertRefused(answer);
      }
    });

    it('keeps nonces per user: another user may use the same pair', async () => {
      const other = (await server.user(instituteId, 'teacher')).credentials;
      const pair = { nonce: freshNonce(), timestamp: clock.now() };
      assertListed(await listCall(server.baseUrl, 'v3', credentials, clock.now(), pair), 'first user');
      assertListed(await listCall(server.baseUrl, 'v3', other, clock.now(), pair), 'second user');
    });
  });

  describe(`NONCE_POLICY=strict: a nonce is used once per user within the window [${dialect}]`, () => {
    const clock = new TestClock();
    let server: TestServer;
    let credentials: Credentials;
    let userId: number;
    let instituteId: number;

    before(async () => {
      server = await startTestServer(dialect, {
        clock,
        env: { NONCE_POLICY: 'strict', SIGNATURE_WINDOW_SECONDS: String(WINDOW_SECONDS) },
      });
      instituteId = await server.institute();
      const user = await server.user(instituteId, 'teacher');
      credentials = user.credentials;
      userId = user.id;
    });
    after(async () => server.close());

    const nonceRows = () =>
      server.app.database.db
        .selectFrom('nonces')
        .select(['nonce', 'expires_at'])
        .where('user_id', '=', userId)
        .execute();

    for (const version of VERSIONS) {
      it(`${version}: refuses the same nonce with a different timestamp`, async () => {
        const nonce = freshNonce();
        assertListed(await listCall(server.baseUrl, version, credentials, clock.now(), { nonce }), 'first');
        const later = { nonce, timestamp: clock.now() + 1000 };
        assertRefused(await listCall(server.baseUrl, version, credentials, clock.now(), later), 'same nonce');
      });

      it(`${version}: refuses the identical request a second time`, async () => {
        const pair = { nonce: freshNonce(), timestamp: clock.now() };
        assertListed(await listCall(server.baseUrl, version, credentials, clock.now(), pair), 'first');
        assertRefused(await listCall(server.baseUrl, version, credentials, clock.now(), pair), 'replay');
      });
    }

    it('accepts exactly one of ten requests sent at once with one nonce and different timestamps', async () => {
      const nonce = freshNonce();
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_unused, index) =>
          listCall(server.baseUrl, 'v3', credentials, clock.now(), { nonce, timestamp: clock.now() - index }),
        ),
      );
      assert.equal(answers.filter((answer) => answer.status === 200).length, 1);
      for (const answer of answers.filter((candidate) => candidate.status !== 200)) assertRefused(answer);
    });

    it('keeps nonces per user: another user may use the same nonce', async () => {
      const other = (await server.user(instituteId, 'teacher')).credentials;
      const nonce = freshNonce();
      assertListed(await listCall(server.baseUrl, 'v3', credentials, clock.now(), { nonce }), 'first user');
      assertListed(await listCall(server.baseUrl, 'v3', other, clock.now(), { nonce }), 'second user');
    });

    it('accepts a nonce again once its window has passed', async () => {
      const nonce = freshNonce();
      assertListed(await listCall(server.baseUrl, 'v3', credentials, clock.now(), { nonce }), 'first use');
      clock.current += (WINDOW_SECONDS - 1) * 1000;
      assertRefused(
        await listCall(server.baseUrl, 'v3', credentials, clock.now(), { nonce }),
        'still inside the window',
      );
      clock.current += 2 * 1000 + 1;
      assertListed(
        await listCall(server.baseUrl, 'v3', credentials, clock.now(), { nonce }),
        'after the window',
      );
      assertRefused(await listCall(server.baseUrl, 'v3', credentials, clock.now(), { nonce }), 'used again');
    });

    it('purgeExpiredNonces removes exactly the nonces whose window has passed', async () => {
      const expiring = freshNonce();
      assertListed(await listCall(server.baseUrl, 'v3', credentials, clock.now(), { nonce: expiring }));
      const before = await nonceRows();
      assert.ok(
        before.some((row) => row.nonce === expiring),
        'the nonce is remembered',
      );
      clock.current += (WINDOW_SECONDS + 1) * 1000;
      const kept = freshNonce();
      assertListed(await listCall(server.baseUrl, 'v3', credentials, clock.now(), { nonce: kept }));
      const expired = before.filter((row) => Number(row.expires_at) < clock.now()).length;
      assert.ok(expired >= 1);
      const removed = await purgeExpiredNonces(server.app.database.db, clock.now());
      assert.ok(removed >= expired, `removed ${removed}, expected at least ${expired}`);
      const after = await nonceRows();
      assert.equal(
        after.some((row) => row.nonce === expiring),
        false,
        'the expired nonce is gone',
      );
      assert.ok(
        after.some((row) => row.nonce === kept),
        'the live nonce is kept',
      );
      assert.ok(after.every((row) => Number(row.expires_at) >= clock.now()));
      assert.equal(
        await purgeExpiredNonces(server.app.database.db, clock.now()),
        0,
        'a second purge finds nothing',
      );
    });
  });

  describeLogs(dialect);
}

/** Secrets and signatures never reach the log, whatever the outcome of the request. */
function describeLogs(dialect: DialectName): void {
  describe(`the server log holds no secret, token or signature [${dialect}]`, () => {
    it('logs refusals with a reason but never the credentials or signatures of any request', async () => {
      const logged = await startLoggedServer(dialect);
      try {
        const instituteId = (
          await logged.server.app.services.institutes.create({
            name: `Logs ${freshNonce()}`,
            short_name: 'LOG',
          })
        ).id;
        const { credentials } = await logged.server.app.services.users.create(instituteId, {
          email: `logs-${freshNonce()}@example.org`,
          name: 'Logs',
          role: 'teacher',
        });
        const signatures: string[] = [];
        const send = async (version: Version, shape: CallShape = {}) => {
          const nonce = shape.nonce ?? freshNonce();
          const timestamp = shape.timestamp ?? Date.now();
          const signed: Record<string, string> = { timestamp: String(timestamp), nonce };
          if (version === 'v2') signed.api_token = credentials.apiToken;
          signatures.push(shape.signature ?? signatureOf(credentials.secretKey, signed));
          return listCall(logged.baseUrl, version, credentials, Date.now(), { ...shape, nonce, timestamp });
        };
        for (const version of VERSIONS) {
          const pair = { nonce: freshNonce(), timestamp: Date.now() };
          assertListed(await send(version, pair));
          assertRefused(await send(version, pair), 'replay');
          const wrong = crypto.randomBytes(32).toString('hex');
          assertRefused(await send(version, { signature: wrong }), 'wrong signature');
          assertRefused(await send(version, { timestamp: Date.now() - 2 * 86400 * 1000 }), 'stale');
        }
        const malformed = await httpRequest({
          url: `${logged.baseUrl}/api/v3/exams`,
          method: 'POST',
          headers: v3Headers(credentials.apiToken, { 'content-type': 'application/json' }),
          body: `{"signature":"${signatures[0]}",`,
        });
        assert.equal(malformed.status, 400);

        const log = logged.lines.join('');
        assert.match(log, /request refused/, 'refusals are logged (the capture works)');
        assert.match(log, /replayed nonce/, 'the log says which check failed');
        assert.equal(log.includes(credentials.secretKey), false, 'the secret key is in the log');
        assert.equal(log.includes(credentials.apiToken), false, 'the api token is in the log');
        for (const signature of signatures) {
          assert.equal(
            log.toLowerCase().includes(signature.toLowerCase()),
            false,
            `signature ${signature} is in the log`,
          );
        }
      } finally {
        await logged.close();
      }
    });
  });
}
