import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { findIdentityProvider } from '../../../src/domain/identity-providers/identity-providers.repository.ts';
import type { HttpAnswer } from '../../helpers/http.ts';
import { DIALECTS, startTestServer, TestClock, type TestServer } from '../../helpers/server.ts';
import { object } from '../../helpers/json.ts';

type Json = Record<string, unknown>;
type TestUser = Awaited<ReturnType<TestServer['user']>>;

const IDENTITY_PROVIDER_FIELDS = ['id', 'name', 'protocol', 'institute_id', 'created_at'];
const ISO_MILLIS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

const SAML_METADATA =
  '<?xml version="1.0"?>\n<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" ' +
  'entityID="https://idp.example.org/saml"><md:IDPSSODescriptor/></md:EntityDescriptor>';
const OIDC_METADATA = JSON.stringify({
  issuer: 'https://login.example.org',
  authorization_endpoint: 'https://login.example.org/authorize',
});

function providersIn(answer: HttpAnswer): Json[] {
  assert.equal(answer.status, 200, answer.text);
  const body = object(answer.json, 'body');
  assert.deepEqual(Object.keys(body), ['identity_providers']);
  const list = body.identity_providers;
  assert.ok(Array.isArray(list), 'identity_providers is an array');
  return list.map((item) => object(item, 'identity_provider'));
}

for (const dialect of DIALECTS) {
  describe(`V3 identity providers [${dialect}]`, () => {
    const clock = new TestClock(Math.floor(Date.now() / 1000) * 1000);
    let server: TestServer;
    let home: number;
    let elsewhere: number;
    let ids: { own: number; global: number; foreign: number; ownOidc: number };

    async function add(name: string, protocol: 'saml' | 'oidc', instituteId: number | null): Promise<number> {
      const created = await server.app.services.identityProviders.create({
        name,
        protocol,
        metadata: protocol === 'saml' ? SAML_METADATA : OIDC_METADATA,
        instituteId,
      });
      return created.id;
    }

    before(async () => {
      server = await startTestServer(dialect, { clock });
      home = await server.institute();
      elsewhere = await server.institute();
      ids = {
        own: await add('Home SAML', 'saml', home),
        global: await add('Global OIDC', 'oidc', null),
        foreign: await add('Foreign SAML', 'saml', elsewhere),
        ownOidc: await add('Home OIDC', 'oidc', home),
      };
    });

    after(async () => {
      await server.close();
    });

    describe('GET /api/v3/identity_providers', () => {
      for (const role of ['administrator', 'teacher', 'proctor', 'reviewer', 'auditor'] as const) {
        it(`lists its institute's and the global configurations to a${role.match(/^[aeiou]/) ? 'n' : ''} ${role}`, async () => {
          const user: TestUser = await server.user(home, role);
          const answer = await user.client.v3('GET', '/identity_providers');
          assert.deepEqual(
            providersIn(answer).map((item) => item.id),
            [ids.own, ids.global, ids.ownOidc],
          );
          assert.equal(answer.headers['x-pagination-item-count'], '3');
          assert.equal(answer.headers['x-pagination-page-count'], '1');
          assert.equal(answer.headers['x-pagination-page'], '1');
          assert.equal(answer.headers['x-pagination-limit'], '300');
        });
      }

      it('answers the record fields only, never the metadata', async () => {
        const admin = await server.user(home, 'administrator');
        const answer = await admin.client.v3('GET', '/identity_providers');
        const [first, global] = providersIn(answer);
        assert.deepEqual(first, {
          id: ids.own,
          name: 'Home SAML',
          protocol: 'saml',
          institute_id: home,
          created_at: new Date(clock.now()).toISOString(),
        });
        assert.deepEqual(Object.keys(global ?? {}), IDENTITY_PROVIDER_FIELDS);
        assert.equal(global?.institute_id, null);
        assert.match(String(global?.created_at), ISO_MILLIS);
        assert.ok(!answer.text.includes('EntityDescriptor'), 'no SAML metadata');
        assert.ok(!answer.text.includes('authorization_endpoint'), 'no OIDC metadata');
        assert.ok(!answer.text.includes('metadata'));
      });

      it('lists every configuration to a superuser', async () => {
        const superuser = await server.user(home, 'superuser');
        const answer = await superuser.client.v3('GET', '/identity_providers');
        assert.deepEqual(
          providersIn(answer).map((item) => item.id),
          [ids.own, ids.global, ids.foreign, ids.ownOidc],
        );
      });

      it("lists the other institute's own and the global ones to its members", async () => {
        const member = await server.user(elsewhere, 'teacher');
        const answer = await member.client.v3('GET', '/identity_providers');
        assert.deepEqual(
          providersIn(answer).map((item) => item.id),
          [ids.global, ids.foreign],
        );
      });

      it('filters, sorts and pages', async () => {
        const user = await server.user(home, 'auditor');
        const oidc = await user.client.v3('GET', '/identity_providers', {
          filter: JSON.stringify({ protocol: { eq: 'oidc' } }),
          sort: JSON.stringify([{ name: 'desc' }]),
        });
        assert.deepEqual(
          providersIn(oidc).map((item) => item.name),
          ['Home OIDC', 'Global OIDC'],
        );
        const global = await user.client.v3('GET', '/identity_providers', {
          filter: JSON.stringify({ institute_id: { null: true } }),
        });
        assert.deepEqual(
          providersIn(global).map((item) => item.id),
          [ids.global],
        );
        const paged = await user.client.v3('GET', '/identity_providers', { limit: 2, page: 2 });
        assert.deepEqual(
          providersIn(paged).map((item) => item.id),
          [ids.ownOidc],
        );
        assert.equal(paged.headers['x-pagination-page-count'], '2');
      });

      it('answers 422 naming an unknown filter field', async () => {
        const user = await server.user(home, 'teacher');
        const answer = await user.client.v3('GET', '/identity_providers', {
          filter: JSON.stringify({ metadata: { like: 'x' } }),
        });
        assert.equal(answer.status, 422, answer.text);
        assert.deepEqual(answer.json, {
          error: "'filter':['has an unknown field: metadata']",
          errors: { filter: ['has an unknown field: metadata'] },
        });
      });

      it('answers 404 to a write: the listing is read-only', async () => {
        const admin = await server.user(home, 'administrator');
        const answer = await admin.client.v3('POST', '/identity_providers', {
          name: 'API',
          protocol: 'oidc',
          metadata: OIDC_METADATA,
        });
        assert.equal(answer.status, 404, answer.text);
      });
    });

    describe('findIdentityProvider (for users that reference one)', () => {
      it('returns the configuration without its metadata, or undefined', async () => {
        const found = await findIdentityProvider(server.app.database.db, ids.global);
        assert.deepEqual(
          { ...found },
          {
            id: ids.global,
            instituteId: null,
            name: 'Global OIDC',
            protocol: 'oidc',
            createdAt: clock.now(),
          },
        );
        assert.equal(await findIdentityProvider(server.app.database.db, 999999), undefined);
      });
    });
  });
}
