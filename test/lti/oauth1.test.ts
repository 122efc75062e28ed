/**
 * LTI 1.1 launch verification (src/lti/oauth1.ts): RFC 5849's own examples for the base string and
 * the signature, and launches signed by an independent OAuth 1.0a implementation (`oauth-sign`), on
 * both databases.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { hmacsign, hmacsign256 } from 'oauth-sign';
import type { Database } from '../../src/db/database.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';
import { LaunchRefused } from '../../src/domain/lti/launch.ts';
import {
  lti11Roles,
  oauthSignature,
  percentEncode,
  signatureBaseString,
  verifyLti11Launch,
} from '../../src/lti/oauth1.ts';
import { encryptSecret } from '../../src/security/keys.ts';
import {
  createTestDatabase,
  DIALECTS,
  openTestDatabase,
  TestClock,
  type TestDatabase,
} from '../helpers/server.ts';

describe('RFC 5849 examples', () => {
  it('reproduces the signature base string of section 3.4.1.1', () => {
    // POST /request?b5=%3D%253D&a3=a&c%40=&a2=r%20b with body c2&a3=2+q, decoded (section 3.4.1.3.1).
    const params: [string, string][] = [
      ['b5', '=%3D'],
      ['a3', 'a'],
      ['c@', ''],
      ['a2', 'r b'],
      ['oauth_consumer_key', '9djdj82h48djs9d2'],
      ['oauth_token', 'kkk9d7dh3k39sjv7'],
      ['oauth_signature_method', 'HMAC-SHA1'],
      ['oauth_timestamp', '137131201'],
      ['oauth_nonce', '7d8f3e4a'],
      ['c2', ''],
      ['a3', '2 q'],
    ];
    const expected =
      'POST&http%3A%2F%2Fexample.com%2Frequest&a2%3Dr%2520b%26a3%3D2%2520q' +
      '%26a3%3Da%26b5%3D%253D%25253D%26c%2540%3D%26c2%3D%26oauth_consumer_' +
      'key%3D9djdj82h48djs9d2%26oauth_nonce%3D7d8f3e4a%26oauth_signature_m' +
      'ethod%3DHMAC-SHA1%26oauth_timestamp%3D137131201%26oauth_token%3Dkkk' +
      '9d7dh3k39sjv7';
    assert.equal(signatureBaseString('post', 'http://EXAMPLE.COM:80/request?ignored=1', params), expected);
  });

  it('reproduces the signed request of section 1.2 (base string and HMAC-SHA1 signature)', () => {
    const params: [string, string][] = [
      ['file', 'vacation.jpg'],
      ['size', 'original'],
      ['oauth_consumer_key', 'dpf43f3p2l4k3l03'],
      ['oauth_token', 'nnch734d00sl2jdk'],
      ['oauth_signature_method', 'HMAC-SHA1'],
      ['oauth_timestamp', '137131202'],
      ['oauth_nonce', 'chapoH'],
    ];
    const base = signatureBaseString('GET', 'http://photos.example.net/photos', params);
    assert.equal(
      base,
      'GET&http%3A%2F%2Fphotos.example.net%2Fphotos&file%3Dvacation.jpg%26oauth_consumer_key%3Ddpf43f3p2l4k3l03' +
        '%26oauth_nonce%3DchapoH%26oauth_signature_method%3DHMAC-SHA1%26oauth_timestamp%3D137131202' +
        '%26oauth_token%3Dnnch734d00sl2jdk%26size%3Doriginal',
    );
    assert.equal(
      oauthSignature(base, 'kd94hf93k423kf44', 'pfkkdhi9sl3r4s00'),
      'MdpQcU8iPSUjWoN/UDMsK2sui9I=',
    );
  });

  it('percent-encodes everything but the unreserved characters, in upper-case hex (section 3.6)', () => {
    assert.equal(percentEncode("Ladies + Gentlemen!*'()~._-"), 'Ladies%20%2B%20Gentlemen%21%2A%27%28%29~._-');
    assert.equal(percentEncode('é☃'), '%C3%A9%E2%98%83');
  });
});

describe('lti11Roles', () => {
  it('maps short names and URNs to learner, instructor and administrator', () => {
    assert.deepEqual(lti11Roles('Learner'), ['learner']);
    assert.deepEqual(lti11Roles('urn:lti:role:ims/lis/Learner/NonCreditLearner'), ['learner']);
    assert.deepEqual(lti11Roles('Instructor,urn:lti:role:ims/lis/ContentDeveloper'), ['instructor']);
    assert.deepEqual(lti11Roles('urn:lti:role:ims/lis/TeachingAssistant'), ['instructor']);
    assert.deepEqual(lti11Roles('urn:lti:instrole:ims/lis/Administrator, Instructor').sort(), [
      'administrator',
      'instructor',
    ]);
    assert.deepEqual(lti11Roles('urn:lti:sysrole:ims/lis/SysAdmin'), ['administrator']);
    assert.deepEqual(lti11Roles('Mentor,urn:lti:role:ims/lis/Member,'), []);
    assert.deepEqual(lti11Roles(undefined), []);
  });
});

const PUBLIC_URL = 'https://invigil.example.edu';
const LAUNCH_URL = `${PUBLIC_URL}/lti/launch`;

for (const dialect of DIALECTS) {
  describe(`verifyLti11Launch [${dialect}]`, () => {
    const clock = new TestClock(Math.floor(Date.now() / 1000) * 1000);
    const serverKey = crypto.randomBytes(32);
    let target: TestDatabase;
    let database: Database;
    let providerId: number;
    let instituteId: number;
    const consumerKey = `moodle-${crypto.randomBytes(4).toString('hex')}`;
    const secret = 'sEcret with spaces & symbols=+/';
    const lti13Key = `lti13-${crypto.randomBytes(4).toString('hex')}`;

    before(async () => {
      target = await createTestDatabase(dialect);
      database = openTestDatabase(target);
      await migrateToLatest(database);
      const now = clock.now();
      const institute = await database.db
        .insertInto('institutes')
        .values({
          name: `OAuth ${crypto.randomBytes(3).toString('hex')}`,
          short_name: 'OA',
          callback_url: null,
          check_requirements_emails_enabled: true,
          reminder_emails_enabled: true,
          exam_link_emails_enabled: true,
          exam_changed_emails_enabled: true,
          exam_finalized_emails_enabled: true,
          session_retention_period: null,
          default_language: 'en',
          created_at: now,
          updated_at: now,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      instituteId = institute.id;
      const provider = (version: string, key: string) => ({
        institute_id: instituteId,
        name: `Moodle ${version}`,
        lti_version: version,
        consumer_key: key,
        shared_secret_encrypted: encryptSecret(serverKey, secret),
        issuer: null,
        client_id: null,
        deployment_id: null,
        auth_login_url: null,
        auth_token_url: null,
        jwks_url: null,
        created_at: now,
        updated_at: now,
      });
      const row = await database.db
        .insertInto('tool_providers')
        .values(provider('1.1', consumerKey))
        .returning('id')
        .executeTakeFirstOrThrow();
      providerId = row.id;
      // A 1.3 registration never keeps a consumer key through the API; a row written otherwise must still be refused.
      await database.db.insertInto('tool_providers').values(provider('1.3', lti13Key)).execute();
    });

    after(async () => {
      await database?.destroy();
      await target?.drop();
    });

    const deps = () => ({ db: database.db, clock, serverKey, publicUrl: PUBLIC_URL });

    /** A learner launch as Moodle sends it, signed by oauth-sign (HMAC-SHA1 unless told). */
    function launch(
      overrides: Record<string, string> = {},
      options: {
        secret?: string;
        url?: string;
        method?: 'HMAC-SHA1' | 'HMAC-SHA256';
        omit?: readonly string[];
      } = {},
    ): Record<string, string> {
      const params: Record<string, string> = {
        lti_message_type: 'basic-lti-launch-request',
        lti_version: 'LTI-1p0',
        resource_link_id: 'rl-17',
        resource_link_title: 'Final exam (proctored)',
        context_id: 'course-4',
        context_title: 'Chemistry 101',
        user_id: 'u-1001',
        roles: 'Learner',
        lis_person_name_full: 'Ada Lovelace',
        lis_person_contact_email_primary: 'Ada@Example.edu',
        launch_presentation_return_url: 'https://lms.example.edu/course/view.php?id=4',
        custom_invigil_exam_id: '12',
        oauth_callback: 'about:blank',
        oauth_consumer_key: consumerKey,
        oauth_nonce: crypto.randomBytes(16).toString('hex'),
        oauth_signature_method: options.method ?? 'HMAC-SHA1',
        oauth_timestamp: String(Math.floor(clock.now() / 1000)),
        oauth_version: '1.0',
        ...overrides,
      };
      for (const name of options.omit ?? []) delete params[name];
      const sign = params.oauth_signature_method === 'HMAC-SHA256' ? hmacsign256 : hmacsign;
      params.oauth_signature = sign('POST', options.url ?? LAUNCH_URL, params, options.secret ?? secret);
      return params;
    }

    async function refusal(params: Record<string, string>): Promise<LaunchRefused> {
      try {
        await verifyLti11Launch(deps(), { method: 'POST', params });
      } catch (error) {
        assert.ok(error instanceof LaunchRefused, String(error));
        return error;
      }
      assert.fail('the launch was accepted');
    }

    it('accepts a launch signed by oauth-sign and reads it', async () => {
      const verified = await verifyLti11Launch(deps(), { method: 'POST', params: launch() });
      assert.deepEqual(verified, {
        version: '1.1',
        toolProvider: { id: providerId, instituteId, name: 'Moodle 1.1' },
        messageKind: 'resource_link',
        deploymentId: null,
        platformUserId: 'u-1001',
        platformIssuer: consumerKey,
        name: 'Ada Lovelace',
        email: 'Ada@Example.edu',
        locale: null,
        roles: ['learner'],
        resourceLink: { id: 'rl-17', title: 'Final exam (proctored)' },
        context: { id: 'course-4', title: 'Chemistry 101' },
        custom: { invigil_exam_id: '12' },
        returnUrl: 'https://lms.example.edu/course/view.php?id=4',
        proctoring: null,
        deepLinking: null,
      });
    });

    it('accepts values that need encoding, and HMAC-SHA256', async () => {
      const tricky = launch({
        lis_person_name_full: "Zoë O'Brien-Ümit (Ph.D.) ~ 100% *sure* + more",
        resource_link_title: 'a&b=c?d/e',
        lis_person_name_given: '',
      });
      const verified = await verifyLti11Launch(deps(), { method: 'POST', params: tricky });
      assert.equal(verified.name, "Zoë O'Brien-Ümit (Ph.D.) ~ 100% *sure* + more");
      const sha256 = launch({}, { method: 'HMAC-SHA256' });
      assert.equal(
        (await verifyLti11Launch(deps(), { method: 'POST', params: sha256 })).platformUserId,
        'u-1001',
      );
    });

    it('reads an instructor without email or name', async () => {
      const signed = launch(
        { roles: 'urn:lti:role:ims/lis/Instructor' },
        { omit: ['lis_person_name_full', 'lis_person_contact_email_primary'] },
      );
      const verified = await verifyLti11Launch(deps(), { method: 'POST', params: signed });
      assert.deepEqual(verified.roles, ['instructor']);
      assert.equal(verified.email, null);
      assert.equal(verified.name, null);
    });

    it('refuses a replayed nonce', async () => {
      const params = launch();
      await verifyLti11Launch(deps(), { method: 'POST', params });
      const replay = await refusal(params);
      assert.equal(replay.code, 'replayed_nonce');
      assert.equal(replay.status, 401);
      assert.match(replay.message, /already used/);
    });

    it('refuses a stale or future timestamp, without spending the nonce', async () => {
      const now = Math.floor(clock.now() / 1000);
      const nonce = crypto.randomBytes(8).toString('hex');
      const stale = await refusal(launch({ oauth_timestamp: String(now - 301), oauth_nonce: nonce }));
      assert.equal(stale.code, 'stale_timestamp');
      assert.equal(stale.status, 401);
      assert.equal((await refusal(launch({ oauth_timestamp: String(now + 301) }))).code, 'stale_timestamp');
      // Within five minutes either way is fine, and the nonce of the refused launch is still unused.
      await verifyLti11Launch(deps(), {
        method: 'POST',
        params: launch({ oauth_timestamp: String(now - 299), oauth_nonce: nonce }),
      });
    });

    it('sweeps nonces once their timestamp can no longer be accepted', async () => {
      const params = launch();
      await verifyLti11Launch(deps(), { method: 'POST', params });
      const saved = clock.current;
      try {
        clock.current += 301_000;
        await verifyLti11Launch(deps(), { method: 'POST', params: launch() });
        const left = await database.db
          .selectFrom('lti_oauth_nonces')
          .select('nonce')
          .where('nonce', '=', params.oauth_nonce ?? '')
          .execute();
        assert.deepEqual(left, []);
      } finally {
        clock.current = saved;
      }
    });

    it('refuses a wrong secret, a changed parameter, and another launch URL', async () => {
      const wrong = await refusal(launch({}, { secret: 'not the secret' }));
      assert.equal(wrong.code, 'bad_signature');
      assert.equal(wrong.status, 401);
      assert.match(wrong.message, /could not be verified/);
      const changed = launch();
      changed.roles = 'Instructor';
      assert.equal((await refusal(changed)).code, 'bad_signature');
      assert.equal(
        (await refusal(launch({}, { url: 'https://elsewhere.example.edu/lti/launch' }))).code,
        'bad_signature',
      );
    });

    it('refuses an unknown consumer key and the key of a 1.3 registration', async () => {
      const unknown = await refusal(launch({ oauth_consumer_key: 'nobody' }));
      assert.equal(unknown.code, 'unknown_consumer_key');
      assert.equal(unknown.status, 401);
      assert.equal((await refusal(launch({ oauth_consumer_key: lti13Key }))).code, 'not_lti11_provider');
    });

    it('refuses another message type, signature method or version, and a launch without user or link', async () => {
      assert.equal(
        (await refusal(launch({ lti_message_type: 'ContentItemSelectionRequest' }))).code,
        'unsupported_message_type',
      );
      assert.equal((await refusal(launch({ lti_version: 'LTI-2p0' }))).code, 'unsupported_lti_version');
      assert.equal(
        (await refusal(launch({ oauth_signature_method: 'PLAINTEXT' }))).code,
        'unsupported_signature_method',
      );
      assert.equal((await refusal(launch({ user_id: '' }))).code, 'missing_user');
      assert.equal((await refusal(launch({ resource_link_id: '' }))).code, 'missing_resource_link');
    });
  });
}
