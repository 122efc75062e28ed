import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decryptSecret, loadServerKeys } from '../../../src/security/keys.ts';
import type { CallOptions } from '../../helpers/client.ts';
import type { HttpAnswer } from '../../helpers/http.ts';
import { DIALECTS, startTestServer, TestClock, type TestServer } from '../../helpers/server.ts';
import type { Scalar } from '../../helpers/signing.ts';
import { object } from '../../helpers/json.ts';
import { article, invalid, missing, NOT_AUTHORIZED, notFound } from '../../helpers/answers.ts';

type Json = Record<string, unknown>;
type TestUser = Awaited<ReturnType<TestServer['user']>>;

const DEPENDENT = { error: 'Cannot delete record because dependent lti resources exist' };
const ISO_MILLIS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Every field of the V3 tool_provider record, in order (contract §6 plus has_shared_secret). */
const TOOL_PROVIDER_FIELDS = [
  'id',
  'institute_id',
  'name',
  'lti_version',
  'consumer_key',
  'has_shared_secret',
  'issuer',
  'client_id',
  'deployment_id',
  'auth_login_url',
  'auth_token_url',
  'jwks_url',
  'created_at',
  'updated_at',
];

const LTI13_FIELDS = ['issuer', 'client_id', 'deployment_id', 'auth_login_url', 'auth_token_url', 'jwks_url'];

function providerIn(answer: HttpAnswer): Json {
  const body = object(answer.json, 'body');
  assert.deepEqual(Object.keys(body), ['tool_provider'], answer.text);
  return object(body.tool_provider, 'tool_provider');
}

function providersIn(answer: HttpAnswer): Json[] {
  assert.equal(answer.status, 200, answer.text);
  const body = object(answer.json, 'body');
  assert.deepEqual(Object.keys(body), ['tool_providers']);
  const list = body.tool_providers;
  assert.ok(Array.isArray(list), 'tool_providers is an array');
  return list.map((item) => object(item, 'tool_provider'));
}

let sequence = 0;
/** A fresh secret per call, so a leak is traced to the call that sent it. */
function newSecret(): string {
  sequence += 1;
  return `s3cr3t-${sequence}-${Math.random().toString(36).slice(2)}`;
}

function lti11(extra: Record<string, Scalar> = {}): Record<string, Scalar> {
  sequence += 1;
  return {
    name: `Moodle ${sequence}`,
    lti_version: '1.1',
    consumer_key: `key-${sequence}-${Math.random().toString(36).slice(2)}`,
    shared_secret: newSecret(),
    ...extra,
  };
}

function lti13(extra: Record<string, Scalar> = {}): Record<string, Scalar> {
  sequence += 1;
  return {
    name: `Canvas ${sequence}`,
    lti_version: '1.3',
    issuer: 'https://canvas.example.org',
    client_id: `client-${sequence}-${Math.random().toString(36).slice(2)}`,
    deployment_id: `deployment-${sequence}`,
    auth_login_url: 'https://canvas.example.org/api/lti/authorize_redirect',
    auth_token_url: 'https://canvas.example.org/login/oauth2/token',
    jwks_url: 'https://canvas.example.org/api/lti/security/jwks',
    ...extra,
  };
}

for (const dialect of DIALECTS) {
  describe(`V3 tool providers [${dialect}]`, () => {
    const clock = new TestClock(Math.floor(Date.now() / 1000) * 1000);
    let server: TestServer;
    let home: number;
    let elsewhere: number;
    let admin: TestUser;
    let teacher: TestUser;
    let auditor: TestUser;
    let proctor: TestUser;
    let reviewer: TestUser;
    let superuser: TestUser;
    let otherAdmin: TestUser;
    /** Every answer of this suite and every secret it sent: no answer may carry a secret. */
    const answers: HttpAnswer[] = [];
    const secrets: string[] = [];

    /** A signed V3 call that records its answer and the secret it sent, if any. */
    async function call(
      user: TestUser,
      method: string,
      template: string,
      params: Record<string, Scalar> = {},
      options: CallOptions = {},
    ): Promise<HttpAnswer> {
      if (typeof params.shared_secret === 'string' && params.shared_secret !== '')
        secrets.push(params.shared_secret);
      const answer = await user.client.v3(method, template, params, options);
      answers.push(answer);
      return answer;
    }

    async function create(user: TestUser, params: Record<string, Scalar>): Promise<Json> {
      const answer = await call(user, 'POST', '/tool_providers', params);
      assert.equal(answer.status, 201, answer.text);
      return providerIn(answer);
    }

    async function storedRow(id: Scalar) {
      return server.app.database.db
        .selectFrom('tool_providers')
        .selectAll()
        .where('id', '=', Number(id))
        .executeTakeFirstOrThrow();
    }

    function decrypt(stored: string): string {
      const keys = loadServerKeys(server.app.config.serverSecret, server.app.config.dataDir);
      return decryptSecret(keys.encryption, stored);
    }

    async function createExam(user: TestUser, name: string): Promise<Json> {
      const answer = await call(user, 'POST', '/exams', { name, type: 'classroom', duration_minutes: 60 });
      assert.equal(answer.status, 201, answer.text);
      return object(object(answer.json, 'body').exam, 'exam');
    }

    async function createResource(user: TestUser, params: Record<string, Scalar>): Promise<Json> {
      sequence += 1;
      const answer = await call(user, 'POST', '/lti_resources', {
        resource_link_id: `link-${sequence}`,
        ...params,
      });
      assert.equal(answer.status, 201, answer.text);
      return object(object(answer.json, 'body').lti_resource, 'lti_resource');
    }

    before(async () => {
      server = await startTestServer(dialect, { clock });
      home = await server.institute();
      elsewhere = await server.institute();
      admin = await server.user(home, 'administrator');
      teacher = await server.user(home, 'teacher');
      auditor = await server.user(home, 'auditor');
      proctor = await server.user(home, 'proctor');
      reviewer = await server.user(home, 'reviewer');
      superuser = await server.user(home, 'superuser');
      otherAdmin = await server.user(elsewhere, 'administrator');
    });

    after(async () => {
      await server.close();
    });

    describe('POST /api/v3/tool_providers', () => {
      it('answers 201 with the full LTI 1.1 record, the shared secret left out', async () => {
        const params = lti11({ name: 'Moodle' });
        const answer = await call(admin, 'POST', '/tool_providers', params);
        assert.equal(answer.status, 201, answer.text);
        const provider = providerIn(answer);
        assert.deepEqual(Object.keys(provider), TOOL_PROVIDER_FIELDS);
        assert.ok(Number.isInteger(provider.id) && (provider.id as number) > 0);
        assert.equal(provider.institute_id, home);
        assert.equal(provider.name, 'Moodle');
        assert.equal(provider.lti_version, '1.1');
        assert.equal(provider.consumer_key, params.consumer_key);
        assert.equal(provider.has_shared_secret, true);
        for (const field of LTI13_FIELDS) assert.equal(provider[field], null, `${field} is null for 1.1`);
        assert.match(String(provider.created_at), ISO_MILLIS);
        assert.equal(provider.created_at, new Date(clock.now()).toISOString());
        assert.equal(provider.updated_at, provider.created_at);
        assert.ok(!answer.text.includes(String(params.shared_secret)), 'the secret is not answered');
      });

      it('stores the shared secret encrypted, never as the plain text', async () => {
        const params = lti11();
        const provider = await create(admin, params);
        const row = await storedRow(provider.id as number);
        const stored = String(row.shared_secret_encrypted);
        assert.ok(!stored.includes(String(params.shared_secret)), 'the column does not hold the plain text');
        assert.match(stored, /^v1:/);
        assert.equal(decrypt(stored), params.shared_secret, 'it decrypts with the server key');
      });

      it('answers 201 with the full LTI 1.3 record', async () => {
        const params = lti13();
        const answer = await call(admin, 'POST', '/tool_providers', params);
        assert.equal(answer.status, 201, answer.text);
        const provider = providerIn(answer);
        assert.deepEqual(Object.keys(provider), TOOL_PROVIDER_FIELDS);
        assert.equal(provider.lti_version, '1.3');
        for (const field of LTI13_FIELDS) assert.equal(provider[field], params[field], field);
        assert.equal(provider.consumer_key, null);
        assert.equal(provider.has_shared_secret, false);
      });

      it('accepts a 1.3 provider without a deployment_id', async () => {
        const provider = await create(admin, lti13({ deployment_id: null }));
        assert.equal(provider.deployment_id, null);
      });

      it('ignores the settings of the other LTI version', async () => {
        const provider = await create(admin, lti13({ consumer_key: 'stray', shared_secret: newSecret() }));
        assert.equal(provider.consumer_key, null);
        assert.equal(provider.has_shared_secret, false);
        assert.equal((await storedRow(provider.id as number)).shared_secret_encrypted, null);
      });

      it('accepts lti_version as a JSON number and a form body', async () => {
        const numeric = await create(admin, lti13({ lti_version: 1.3 }));
        assert.equal(numeric.lti_version, '1.3');
        const answer = await call(admin, 'POST', '/tool_providers', lti11(), { as: 'form' });
        assert.equal(answer.status, 201, answer.text);
        assert.equal(providerIn(answer).lti_version, '1.1');
      });

      it('answers 422 naming a missing name', async () => {
        const { name: _name, ...params } = lti11();
        const answer = await call(admin, 'POST', '/tool_providers', params);
        assert.equal(answer.status, 422, answer.text);
        assert.deepEqual(answer.json, missing('name'));
      });

      it('answers 422 naming a missing lti_version', async () => {
        const { lti_version: _version, ...params } = lti11();
        const answer = await call(admin, 'POST', '/tool_providers', params);
        assert.equal(answer.status, 422, answer.text);
        assert.deepEqual(answer.json, missing('lti_version'));
      });

      for (const version of ['1.2', '2.0', 'one', 1]) {
        it(`answers 422 for the lti_version ${JSON.stringify(version)}, outside the list`, async () => {
          const answer = await call(admin, 'POST', '/tool_providers', lti11({ lti_version: version }));
          assert.equal(answer.status, 422, answer.text);
          assert.deepEqual(answer.json, invalid('lti_version', 'is not included in the list'));
        });
      }

      for (const field of ['consumer_key', 'shared_secret']) {
        it(`answers 422 naming ${field}, which LTI 1.1 requires`, async () => {
          const params = lti11();
          delete params[field];
          const answer = await call(admin, 'POST', '/tool_providers', params);
          assert.equal(answer.status, 422, answer.text);
          assert.deepEqual(answer.json, missing(field));
        });
      }

      for (const field of ['issuer', 'client_id', 'auth_login_url', 'auth_token_url', 'jwks_url']) {
        it(`answers 422 naming ${field}, which LTI 1.3 requires`, async () => {
          const answer = await call(admin, 'POST', '/tool_providers', lti13({ [field]: '' }));
          assert.equal(answer.status, 422, answer.text);
          assert.deepEqual(answer.json, missing(field));
        });
      }

      for (const url of ['ftp://canvas.example.org/jwks', 'canvas.example.org/jwks', 'javascript:alert(1)']) {
        it(`answers 422 for the jwks_url ${url}, which is not http(s)`, async () => {
          const answer = await call(admin, 'POST', '/tool_providers', lti13({ jwks_url: url }));
          assert.equal(answer.status, 422, answer.text);
          assert.deepEqual(answer.json, invalid('jwks_url', 'must be an http(s) URL'));
        });
      }

      it('answers 422 for a consumer_key another provider has, in any institute', async () => {
        const first = lti11();
        await create(otherAdmin, first);
        const answer = await call(
          admin,
          'POST',
          '/tool_providers',
          lti11({ consumer_key: first.consumer_key ?? '' }),
        );
        assert.equal(answer.status, 422, answer.text);
        assert.deepEqual(answer.json, invalid('consumer_key', 'has already been taken'));
      });

      it('answers 422 for an LTI 1.3 registration that exists (issuer, client_id, deployment_id)', async () => {
        const first = lti13();
        await create(admin, first);
        const again = await call(
          admin,
          'POST',
          '/tool_providers',
          lti13({ client_id: first.client_id ?? '', deployment_id: first.deployment_id ?? '' }),
        );
        assert.equal(again.status, 422, again.text);
        assert.deepEqual(again.json, invalid('client_id', 'has already been taken'));
        const otherDeployment = await create(
          admin,
          lti13({ client_id: first.client_id ?? '', deployment_id: 'another deployment' }),
        );
        assert.equal(otherDeployment.client_id, first.client_id);
      });

      it("creates in the caller's institute, whatever institute_id an administrator sends of its own", async () => {
        const provider = await create(admin, lti11({ institute_id: home }));
        assert.equal(provider.institute_id, home);
      });

      it('answers 404 Institute to an administrator naming another institute', async () => {
        const answer = await call(admin, 'POST', '/tool_providers', lti11({ institute_id: elsewhere }));
        assert.equal(answer.status, 404, answer.text);
        assert.deepEqual(answer.json, { error: `Couldn't find Institute with 'id'=${elsewhere}` });
      });

      it('lets a superuser create in the institute it names, and answers 404 for an unknown one', async () => {
        const provider = await create(superuser, lti11({ institute_id: elsewhere }));
        assert.equal(provider.institute_id, elsewhere);
        const own = await create(superuser, lti11());
        assert.equal(own.institute_id, home);
        const unknown = await call(superuser, 'POST', '/tool_providers', lti11({ institute_id: 999999 }));
        assert.equal(unknown.status, 404, unknown.text);
        assert.deepEqual(unknown.json, { error: "Couldn't find Institute with 'id'=999999" });
      });

      for (const role of ['teacher', 'auditor', 'proctor', 'reviewer'] as const) {
        it(`answers 403 to ${article(role)}, before reading the parameters`, async () => {
          const user = { teacher, auditor, proctor, reviewer }[role];
          const answer = await call(user, 'POST', '/tool_providers', lti11());
          assert.equal(answer.status, 403, answer.text);
          assert.deepEqual(answer.json, NOT_AUTHORIZED);
          const empty = await call(user, 'POST', '/tool_providers', {});
          assert.deepEqual(empty.json, NOT_AUTHORIZED);
        });
      }
    });

    describe('GET /api/v3/tool_providers/:id and the singular /tool_provider/:id', () => {
      let provider: Json;
      let foreign: Json;

      before(async () => {
        provider = await create(admin, lti13({ name: 'Shown' }));
        foreign = await create(otherAdmin, lti11({ name: 'Foreign' }));
      });

      it('answers the same record at the plural and the singular path', async () => {
        const plural = await call(admin, 'GET', '/tool_providers/:id', { id: provider.id as number });
        assert.equal(plural.status, 200, plural.text);
        assert.deepEqual(providerIn(plural), provider);
        const singular = await call(admin, 'GET', '/tool_provider/:id', { id: provider.id as number });
        assert.equal(singular.status, 200, singular.text);
        assert.deepEqual(providerIn(singular), provider);
      });

      for (const path of ['/tool_providers/:id', '/tool_provider/:id']) {
        it(`answers 404 quoting an unknown id at ${path}`, async () => {
          for (const id of [999999, 'abc', 99999999999]) {
            const answer = await call(admin, 'GET', path, { id });
            assert.equal(answer.status, 404, answer.text);
            assert.deepEqual(answer.json, notFound('Tool Provider', id));
          }
        });

        it(`answers 404, the body of a missing one, for another institute's provider at ${path}`, async () => {
          const answer = await call(admin, 'GET', path, { id: foreign.id as number });
          assert.equal(answer.status, 404, answer.text);
          assert.deepEqual(answer.json, notFound('Tool Provider', foreign.id as number));
        });
      }

      for (const role of ['teacher', 'auditor'] as const) {
        it(`lets a ${role} read it`, async () => {
          const user = role === 'teacher' ? teacher : auditor;
          const answer = await call(user, 'GET', '/tool_provider/:id', { id: provider.id as number });
          assert.equal(answer.status, 200, answer.text);
          assert.deepEqual(providerIn(answer), provider);
        });
      }

      for (const role of ['proctor', 'reviewer'] as const) {
        it(`answers 403 to ${article(role)}`, async () => {
          const user = role === 'proctor' ? proctor : reviewer;
          const answer = await call(user, 'GET', '/tool_providers/:id', { id: provider.id as number });
          assert.equal(answer.status, 403, answer.text);
          assert.deepEqual(answer.json, NOT_AUTHORIZED);
        });
      }

      it("lets a superuser read any institute's provider", async () => {
        const answer = await call(superuser, 'GET', '/tool_provider/:id', { id: foreign.id as number });
        assert.equal(answer.status, 200, answer.text);
        assert.deepEqual(providerIn(answer), foreign);
      });
    });

    describe('GET /api/v3/tool_providers', () => {
      let ids: number[];
      let foreign: Json;
      let listAdmin: TestUser;
      let listTeacher: TestUser;
      let listProctor: TestUser;

      before(async () => {
        // A fresh pair of institutes, so the listing knows exactly what it holds.
        const listed = await server.institute();
        const lister = await server.user(listed, 'administrator');
        const names = ['charlie', 'alpha', 'bravo'];
        ids = [];
        for (const name of names) {
          ids.push((await create(lister, name === 'bravo' ? lti13({ name }) : lti11({ name }))).id as number);
        }
        foreign = await create(otherAdmin, lti11({ name: 'Foreign listed' }));
        listAdmin = lister;
        listTeacher = await server.user(listed, 'teacher');
        listProctor = await server.user(listed, 'proctor');
      });

      it("lists the institute's providers by id, with the pagination headers", async () => {
        const answer = await call(listAdmin, 'GET', '/tool_providers');
        assert.deepEqual(
          providersIn(answer).map((item) => item.id),
          ids,
        );
        assert.equal(answer.headers['x-pagination-item-count'], '3');
        assert.equal(answer.headers['x-pagination-page-count'], '1');
        assert.equal(answer.headers['x-pagination-page'], '1');
        assert.equal(answer.headers['x-pagination-limit'], '300');
      });

      it('lists full records, equal to the shown ones', async () => {
        const [first] = providersIn(await call(listTeacher, 'GET', '/tool_providers'));
        assert.deepEqual(Object.keys(first ?? {}), TOOL_PROVIDER_FIELDS);
        const shown = await call(listTeacher, 'GET', '/tool_providers/:id', { id: ids[0] ?? 0 });
        assert.deepEqual(providerIn(shown), first);
      });

      it('pages, filters and sorts', async () => {
        const paged = await call(listAdmin, 'GET', '/tool_providers', { limit: 2, page: 2 });
        assert.deepEqual(
          providersIn(paged).map((item) => item.id),
          [ids[2]],
        );
        assert.equal(paged.headers['x-pagination-page-count'], '2');
        const filtered = await call(listAdmin, 'GET', '/tool_providers', {
          filter: JSON.stringify({ lti_version: { eq: '1.3' } }),
        });
        assert.deepEqual(
          providersIn(filtered).map((item) => item.name),
          ['bravo'],
        );
        const liked = await call(listAdmin, 'GET', '/tool_providers', {
          filter: JSON.stringify({ name: { like: 'A' } }),
          sort: JSON.stringify([{ name: 'desc' }]),
        });
        assert.deepEqual(
          providersIn(liked).map((item) => item.name),
          ['charlie', 'bravo', 'alpha'],
        );
      });

      it('answers 422 naming an unknown filter field', async () => {
        const answer = await call(listAdmin, 'GET', '/tool_providers', {
          filter: JSON.stringify({ shared_secret: { eq: 'x' } }),
        });
        assert.equal(answer.status, 422, answer.text);
        assert.deepEqual(answer.json, invalid('filter', 'has an unknown field: shared_secret'));
      });

      it('answers 403 to a proctor', async () => {
        const answer = await call(listProctor, 'GET', '/tool_providers');
        assert.equal(answer.status, 403, answer.text);
        assert.deepEqual(answer.json, NOT_AUTHORIZED);
      });

      it("lists every institute's providers to a superuser", async () => {
        const answer = await call(superuser, 'GET', '/tool_providers', {
          filter: JSON.stringify({ id: { in: [...ids, foreign.id as number] } }),
        });
        assert.deepEqual(
          providersIn(answer).map((item) => item.id),
          [...ids, foreign.id],
        );
      });
    });

    describe('PATCH and PUT /api/v3/tool_providers/:id', () => {
      it('renames a 1.1 provider and keeps its stored secret', async () => {
        const provider = await create(admin, lti11());
        const before = (await storedRow(provider.id as number)).shared_secret_encrypted;
        clock.current += 1000;
        const answer = await call(admin, 'PATCH', '/tool_providers/:id', {
          id: provider.id as number,
          name: 'Renamed',
        });
        assert.equal(answer.status, 200, answer.text);
        const saved = providerIn(answer);
        assert.equal(saved.name, 'Renamed');
        assert.equal(saved.has_shared_secret, true);
        assert.equal(saved.created_at, provider.created_at);
        assert.equal(saved.updated_at, new Date(clock.now()).toISOString());
        assert.equal((await storedRow(provider.id as number)).shared_secret_encrypted, before);
      });

      it('replaces the secret when a new one is sent (PUT), stored encrypted', async () => {
        const provider = await create(admin, lti11());
        const secret = newSecret();
        const answer = await call(admin, 'PUT', '/tool_providers/:id', {
          id: provider.id as number,
          shared_secret: secret,
        });
        assert.equal(answer.status, 200, answer.text);
        const stored = String((await storedRow(provider.id as number)).shared_secret_encrypted);
        assert.ok(!stored.includes(secret));
        assert.equal(decrypt(stored), secret);
      });

      it('answers 422 naming the secret when it is sent empty', async () => {
        const provider = await create(admin, lti11());
        const answer = await call(admin, 'PATCH', '/tool_providers/:id', {
          id: provider.id as number,
          shared_secret: '',
        });
        assert.equal(answer.status, 422, answer.text);
        assert.deepEqual(answer.json, missing('shared_secret'));
      });

      it('moves a provider from 1.1 to 1.3, requiring the 1.3 settings and clearing the 1.1 ones', async () => {
        const provider = await create(admin, lti11());
        const incomplete = await call(admin, 'PATCH', '/tool_providers/:id', {
          id: provider.id as number,
          lti_version: '1.3',
        });
        assert.equal(incomplete.status, 422, incomplete.text);
        assert.deepEqual(incomplete.json, missing('issuer'));
        const { name: _name, ...settings } = lti13();
        const answer = await call(admin, 'PATCH', '/tool_providers/:id', {
          id: provider.id as number,
          ...settings,
        });
        assert.equal(answer.status, 200, answer.text);
        const saved = providerIn(answer);
        assert.equal(saved.lti_version, '1.3');
        assert.equal(saved.consumer_key, null);
        assert.equal(saved.has_shared_secret, false);
        assert.equal(saved.jwks_url, settings.jwks_url);
        const row = await storedRow(provider.id as number);
        assert.equal(row.shared_secret_encrypted, null);
        assert.equal(row.consumer_key, null);
      });

      it('moves a provider from 1.3 to 1.1 only with a consumer key and a secret', async () => {
        const provider = await create(admin, lti13());
        const noSecret = await call(admin, 'PATCH', '/tool_providers/:id', {
          id: provider.id as number,
          lti_version: '1.1',
          consumer_key: `moved-${Date.now()}`,
        });
        assert.equal(noSecret.status, 422, noSecret.text);
        assert.deepEqual(noSecret.json, missing('shared_secret'));
        const answer = await call(admin, 'PATCH', '/tool_providers/:id', {
          id: provider.id as number,
          lti_version: '1.1',
          consumer_key: `moved-${Date.now()}`,
          shared_secret: newSecret(),
        });
        assert.equal(answer.status, 200, answer.text);
        const saved = providerIn(answer);
        for (const field of LTI13_FIELDS) assert.equal(saved[field], null, field);
        assert.equal(saved.has_shared_secret, true);
      });

      it('answers 422 naming a blank name and a URL that is not http(s)', async () => {
        const provider = await create(admin, lti13());
        const blank = await call(admin, 'PATCH', '/tool_providers/:id', {
          id: provider.id as number,
          name: '  ',
        });
        assert.deepEqual(blank.json, missing('name'));
        const url = await call(admin, 'PATCH', '/tool_providers/:id', {
          id: provider.id as number,
          auth_token_url: 'mailto:x@example.org',
        });
        assert.equal(url.status, 422, url.text);
        assert.deepEqual(url.json, invalid('auth_token_url', 'must be an http(s) URL'));
      });

      for (const role of ['teacher', 'auditor', 'proctor', 'reviewer'] as const) {
        it(`answers 403 to ${article(role)}`, async () => {
          const provider = await create(admin, lti11());
          const user = { teacher, auditor, proctor, reviewer }[role];
          const answer = await call(user, 'PATCH', '/tool_providers/:id', {
            id: provider.id as number,
            name: 'No',
          });
          assert.equal(answer.status, 403, answer.text);
          assert.deepEqual(answer.json, NOT_AUTHORIZED);
        });
      }

      it("answers 404, the body of a missing one, for another institute's provider and an unknown id", async () => {
        const foreign = await create(otherAdmin, lti11());
        const answer = await call(admin, 'PATCH', '/tool_providers/:id', {
          id: foreign.id as number,
          name: 'Mine',
        });
        assert.equal(answer.status, 404, answer.text);
        assert.deepEqual(answer.json, notFound('Tool Provider', foreign.id as number));
        const unknown = await call(admin, 'PUT', '/tool_providers/:id', { id: 999999, name: 'Mine' });
        assert.deepEqual(unknown.json, notFound('Tool Provider', 999999));
      });
    });

    describe('DELETE /api/v3/tool_providers/:id', () => {
      it('answers 422 with the exact body while one of its LTI resources is linked to an exam', async () => {
        const provider = await create(admin, lti11());
        const exam = await createExam(admin, 'Linked exam');
        const linked = await createResource(admin, {
          tool_provider_id: provider.id as number,
          exam_id: exam.id as number,
        });
        await createResource(admin, { tool_provider_id: provider.id as number });
        const answer = await call(admin, 'DELETE', '/tool_providers/:id', { id: provider.id as number });
        assert.equal(answer.status, 422, answer.text);
        assert.deepEqual(answer.json, DEPENDENT);
        const still = await call(admin, 'GET', '/tool_providers/:id', { id: provider.id as number });
        assert.equal(still.status, 200, still.text);
        const resource = await call(admin, 'GET', '/lti_resources/:id', { id: linked.id as number });
        assert.equal(resource.status, 200, resource.text);
      });

      it('deletes a provider whose resources no exam uses, and the resources with it', async () => {
        const provider = await create(admin, lti11());
        const unlinked = await createResource(admin, { tool_provider_id: provider.id as number });
        const answer = await call(admin, 'DELETE', '/tool_providers/:id', { id: provider.id as number });
        assert.equal(answer.status, 200, answer.text);
        assert.deepEqual(answer.json, {});
        const gone = await call(admin, 'GET', '/tool_provider/:id', { id: provider.id as number });
        assert.deepEqual(gone.json, notFound('Tool Provider', provider.id as number));
        const resource = await call(admin, 'GET', '/lti_resources/:id', { id: unlinked.id as number });
        assert.equal(resource.status, 404, resource.text);
        assert.deepEqual(resource.json, {
          error: `Couldn't find Lti Resource with 'id'=${String(unlinked.id)}`,
        });
      });

      it('goes through once the linked resource is unlinked from its exam', async () => {
        const provider = await create(admin, lti13());
        const exam = await createExam(admin, 'Unlinked later');
        const linked = await createResource(admin, {
          tool_provider_id: provider.id as number,
          exam_id: exam.id as number,
        });
        const refused = await call(admin, 'DELETE', '/tool_providers/:id', { id: provider.id as number });
        assert.deepEqual(refused.json, DEPENDENT);
        const unlink = await call(admin, 'PATCH', '/lti_resources/:id', {
          id: linked.id as number,
          exam_id: null,
        });
        assert.equal(unlink.status, 200, unlink.text);
        const answer = await call(admin, 'DELETE', '/tool_providers/:id', { id: provider.id as number });
        assert.equal(answer.status, 200, answer.text);
      });

      it('does not count a resource whose exam was destroyed', async () => {
        const provider = await create(admin, lti11());
        const exam = await createExam(admin, 'Destroyed exam');
        await createResource(admin, { tool_provider_id: provider.id as number, exam_id: exam.id as number });
        const destroyed = await call(admin, 'DELETE', '/exams/:id', { id: exam.id as number });
        assert.equal(destroyed.status, 200, destroyed.text);
        const answer = await call(admin, 'DELETE', '/tool_providers/:id', { id: provider.id as number });
        assert.equal(answer.status, 200, answer.text);
      });

      for (const role of ['teacher', 'auditor', 'proctor', 'reviewer'] as const) {
        it(`answers 403 to ${article(role)} and keeps the provider`, async () => {
          const provider = await create(admin, lti11());
          const user = { teacher, auditor, proctor, reviewer }[role];
          const answer = await call(user, 'DELETE', '/tool_providers/:id', { id: provider.id as number });
          assert.equal(answer.status, 403, answer.text);
          assert.deepEqual(answer.json, NOT_AUTHORIZED);
          const still = await call(admin, 'GET', '/tool_providers/:id', { id: provider.id as number });
          assert.equal(still.status, 200);
        });
      }

      it("answers 404 for another institute's provider and an unknown id", async () => {
        const foreign = await create(otherAdmin, lti11());
        const answer = await call(admin, 'DELETE', '/tool_providers/:id', { id: foreign.id as number });
        assert.equal(answer.status, 404, answer.text);
        assert.deepEqual(answer.json, notFound('Tool Provider', foreign.id as number));
        const unknown = await call(admin, 'DELETE', '/tool_providers/:id', { id: 999999 });
        assert.deepEqual(unknown.json, notFound('Tool Provider', 999999));
      });

      it("lets a superuser delete another institute's provider", async () => {
        const foreign = await create(otherAdmin, lti11());
        const answer = await call(superuser, 'DELETE', '/tool_providers/:id', { id: foreign.id as number });
        assert.equal(answer.status, 200, answer.text);
      });
    });

    describe('shared secrets are write-only', () => {
      it('never answered a shared secret in any call of this suite', () => {
        assert.ok(secrets.length >= 10, `${secrets.length} secrets were sent`);
        assert.ok(answers.length >= 50, `${answers.length} answers were recorded`);
        for (const answer of answers) {
          for (const secret of secrets)
            assert.ok(!answer.text.includes(secret), `an answer carries ${secret}: ${answer.text}`);
        }
      });
    });
  });
}
