import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createTestDatabase, DIALECTS, type TestDatabase, openTestDatabase } from '../helpers/server.ts';
import { type CliRun, runCli } from '../helpers/cli.ts';

const SAML_METADATA = `<?xml version="1.0" encoding="UTF-8"?>
<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="https://idp.example.org/saml">
  <md:IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol"/>
</md:EntityDescriptor>
`;
const OIDC_METADATA = JSON.stringify({
  issuer: 'https://login.example.org',
  authorization_endpoint: 'https://login.example.org/authorize',
  jwks_uri: 'https://login.example.org/jwks',
});
const ISO_MILLIS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

function json(result: CliRun): Record<string, unknown> {
  assert.equal(result.code, 0, result.stderr);
  return JSON.parse(result.stdout) as Record<string, unknown>;
}

function record(result: CliRun): Record<string, unknown> {
  const body = json(result);
  assert.deepEqual(Object.keys(body), ['identity_provider']);
  return body.identity_provider as Record<string, unknown>;
}

/** Asserts a failed command: exit 1, the message on stderr, nothing on stdout. */
function failed(result: CliRun, message: string): void {
  assert.equal(result.code, 1, result.stderr);
  assert.ok(result.stderr.includes(message), `stderr "${result.stderr}" says ${message}`);
  assert.equal(result.stdout, '');
}

for (const dialect of DIALECTS) {
  describe(`bin/invigil idp [${dialect}]`, () => {
    let database: TestDatabase;
    let env: Record<string, string>;
    let instituteId: number;
    let samlFile: string;
    let oidcFile: string;

    async function metadataOf(id: unknown): Promise<string> {
      const opened = openTestDatabase(database);
      try {
        const row = await opened.db
          .selectFrom('identity_providers')
          .select('metadata')
          .where('id', '=', Number(id))
          .executeTakeFirstOrThrow();
        return row.metadata;
      } finally {
        await opened.destroy();
      }
    }

    before(async () => {
      database = await createTestDatabase(dialect);
      env = { DATABASE_URL: database.url, DATA_DIR: database.dataDir };
      const created = json(
        await runCli(['institute', 'create', '--name', 'IdP University', '--short-name', 'IDPU'], env),
      );
      instituteId = (created.institute as { id: number }).id;
      samlFile = path.join(database.dataDir, 'idp-metadata.xml');
      fs.writeFileSync(samlFile, SAML_METADATA);
      oidcFile = path.join(database.dataDir, 'openid-configuration.json');
      fs.writeFileSync(oidcFile, OIDC_METADATA);
    });

    after(async () => {
      await database.drop();
    });

    describe('idp create', () => {
      it('adds a SAML configuration for an institute from a metadata file', async () => {
        const idp = record(
          await runCli(
            [
              'idp',
              'create',
              '--name',
              'Campus SAML',
              '--protocol',
              'saml',
              '--metadata',
              samlFile,
              '--institute',
              String(instituteId),
            ],
            env,
          ),
        );
        assert.deepEqual(Object.keys(idp), ['id', 'name', 'protocol', 'institute_id', 'created_at']);
        assert.equal(idp.name, 'Campus SAML');
        assert.equal(idp.protocol, 'saml');
        assert.equal(idp.institute_id, instituteId);
        assert.match(String(idp.created_at), ISO_MILLIS);
        assert.equal(await metadataOf(idp.id), SAML_METADATA, 'the file contents are stored');
      });

      it('adds a global SAML configuration from the metadata text itself', async () => {
        const idp = record(
          await runCli(
            ['idp', 'create', '--name', 'Text SAML', '--protocol', 'saml', '--metadata', SAML_METADATA],
            env,
          ),
        );
        assert.equal(idp.institute_id, null);
        assert.equal(await metadataOf(idp.id), SAML_METADATA);
      });

      it('adds an OIDC configuration from a discovery document file', async () => {
        const idp = record(
          await runCli(
            [
              'idp',
              'create',
              '--name',
              'Campus OIDC',
              '--protocol',
              'oidc',
              '--metadata',
              oidcFile,
              '--institute',
              String(instituteId),
            ],
            env,
          ),
        );
        assert.equal(idp.protocol, 'oidc');
        assert.equal(idp.institute_id, instituteId);
        assert.equal(await metadataOf(idp.id), OIDC_METADATA);
      });

      it('adds a global OIDC configuration from the JSON text itself', async () => {
        const idp = record(
          await runCli(
            ['idp', 'create', '--name', 'Text OIDC', '--protocol', 'oidc', '--metadata', OIDC_METADATA],
            env,
          ),
        );
        assert.equal(idp.protocol, 'oidc');
        assert.equal(idp.institute_id, null);
      });

      it('refuses SAML metadata without an EntityDescriptor, or that is not XML', async () => {
        failed(
          await runCli(
            [
              'idp',
              'create',
              '--name',
              'Bad',
              '--protocol',
              'saml',
              '--metadata',
              '<md:EntitiesDescriptor/>',
            ],
            env,
          ),
          "'metadata':['must be SAML metadata: an XML document with an EntityDescriptor']",
        );
        failed(
          await runCli(['idp', 'create', '--name', 'Bad', '--protocol', 'saml', '--metadata', oidcFile], env),
          "'metadata':['must be SAML metadata: an XML document']",
        );
      });

      it('refuses OIDC metadata that is not JSON, or has no issuer', async () => {
        failed(
          await runCli(['idp', 'create', '--name', 'Bad', '--protocol', 'oidc', '--metadata', samlFile], env),
          "'metadata':['must be OIDC metadata: a JSON document']",
        );
        failed(
          await runCli(
            [
              'idp',
              'create',
              '--name',
              'Bad',
              '--protocol',
              'oidc',
              '--metadata',
              '{"jwks_uri":"https://x"}',
            ],
            env,
          ),
          "'metadata':['must be OIDC metadata: a JSON object with an issuer']",
        );
        failed(
          await runCli(
            ['idp', 'create', '--name', 'Bad', '--protocol', 'oidc', '--metadata', '{"issuer":""}'],
            env,
          ),
          "'metadata':['must be OIDC metadata: a JSON object with an issuer']",
        );
      });

      it('refuses a metadata file it cannot read, naming it', async () => {
        const absent = path.join(database.dataDir, 'absent.xml');
        failed(
          await runCli(['idp', 'create', '--name', 'Bad', '--protocol', 'saml', '--metadata', absent], env),
          `'metadata':['is neither metadata (XML or JSON) nor a readable file: ${absent} (ENOENT)']`,
        );
      });

      it('refuses a protocol other than saml and oidc', async () => {
        failed(
          await runCli(
            ['idp', 'create', '--name', 'Bad', '--protocol', 'ldap', '--metadata', OIDC_METADATA],
            env,
          ),
          "'protocol':['is not included in the list']",
        );
      });

      it('refuses an unknown institute', async () => {
        failed(
          await runCli(
            [
              'idp',
              'create',
              '--name',
              'Bad',
              '--protocol',
              'oidc',
              '--metadata',
              OIDC_METADATA,
              '--institute',
              '99999',
            ],
            env,
          ),
          "Couldn't find Institute with 'id'=99999",
        );
      });

      it('answers a usage error (exit 2) for a missing option, an unknown one, or a bad institute id', async () => {
        for (const [args, message] of [
          [['idp', 'create', '--name', 'X', '--protocol', 'saml'], '--metadata is required'],
          [['idp', 'create', '--protocol', 'saml', '--metadata', samlFile], '--name is required'],
          [
            ['idp', 'create', '--name', 'X', '--protocol', 'saml', '--metadata', samlFile, '--colour', 'red'],
            'colour',
          ],
          [
            [
              'idp',
              'create',
              '--name',
              'X',
              '--protocol',
              'saml',
              '--metadata',
              samlFile,
              '--institute',
              'one',
            ],
            '--institute must be a whole number',
          ],
          [['idp', 'frobnicate'], 'unknown command: idp frobnicate'],
        ] as const) {
          const result = await runCli([...args], env);
          assert.equal(result.code, 2, result.stderr);
          assert.ok(result.stderr.includes(message), `stderr "${result.stderr}" says ${message}`);
          assert.match(result.stderr, /Usage: invigil/);
        }
      });
    });

    describe('idp list', () => {
      it('lists every configuration, without metadata', async () => {
        const result = await runCli(['idp', 'list'], env);
        const body = json(result);
        assert.deepEqual(Object.keys(body), ['identity_providers']);
        const list = body.identity_providers as Record<string, unknown>[];
        assert.deepEqual(
          list.map((idp) => idp.name),
          ['Campus SAML', 'Text SAML', 'Campus OIDC', 'Text OIDC'],
        );
        assert.ok(!result.stdout.includes('EntityDescriptor'));
        assert.ok(!result.stdout.includes('jwks_uri'));
      });

      it("lists an institute's own configurations and the global ones", async () => {
        const other = json(
          await runCli(['institute', 'create', '--name', 'Other U', '--short-name', 'OU'], env),
        );
        const otherId = (other.institute as { id: number }).id;
        record(
          await runCli(
            [
              'idp',
              'create',
              '--name',
              'Other SAML',
              '--protocol',
              'saml',
              '--metadata',
              samlFile,
              '--institute',
              String(otherId),
            ],
            env,
          ),
        );
        const list = json(await runCli(['idp', 'list', '--institute', String(instituteId)], env))
          .identity_providers as Record<string, unknown>[];
        assert.deepEqual(
          list.map((idp) => idp.name),
          ['Campus SAML', 'Text SAML', 'Campus OIDC', 'Text OIDC'],
        );
        const others = json(await runCli(['idp', 'list', '--institute', String(otherId)], env))
          .identity_providers as Record<string, unknown>[];
        assert.deepEqual(
          others.map((idp) => idp.name),
          ['Text SAML', 'Text OIDC', 'Other SAML'],
        );
      });

      it('refuses an unknown institute', async () => {
        failed(
          await runCli(['idp', 'list', '--institute', '99999'], env),
          "Couldn't find Institute with 'id'=99999",
        );
      });
    });
  });
}
