import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type CliRun, runCli } from '../helpers/cli.ts';
import { createTestDatabase, DIALECTS, openTestDatabase, type TestDatabase } from '../helpers/server.ts';

const PUBLIC_URL = 'https://invigil.example.org';
const SECRET = 'a-client-secret-from-the-idp';

function json(result: CliRun): Record<string, unknown> {
  assert.equal(result.code, 0, result.stderr);
  return JSON.parse(result.stdout) as Record<string, unknown>;
}

/** Asserts a failed command: exit 1, the message on stderr, nothing on stdout. */
function failed(result: CliRun, message: string): void {
  assert.equal(result.code, 1, result.stderr);
  assert.ok(result.stderr.includes(message), `stderr "${result.stderr}" says ${message}`);
  assert.equal(result.stdout, '');
}

for (const dialect of DIALECTS) {
  describe(`bin/invigil identity-provider create --issuer (OpenID Connect sign-in) [${dialect}]`, () => {
    let database: TestDatabase;
    let env: Record<string, string>;
    let instituteId: number;

    async function metadataOf(id: unknown): Promise<Record<string, unknown>> {
      const opened = openTestDatabase(database);
      try {
        const row = await opened.db
          .selectFrom('identity_providers')
          .select('metadata')
          .where('id', '=', Number(id))
          .executeTakeFirstOrThrow();
        assert.ok(!row.metadata.includes(SECRET), 'the secret is not stored in clear');
        return JSON.parse(row.metadata) as Record<string, unknown>;
      } finally {
        await opened.destroy();
      }
    }

    const create = (extra: string[], stdin: string | undefined = `${SECRET}\n`) =>
      runCli(
        [
          'identity-provider',
          'create',
          '--institute',
          String(instituteId),
          '--name',
          'Campus Login',
          '--issuer',
          'https://login.example.org/realms/campus',
          '--client-id',
          'invigil',
          ...extra,
        ],
        env,
        stdin,
      );

    before(async () => {
      database = await createTestDatabase(dialect);
      env = { DATABASE_URL: database.url, DATA_DIR: database.dataDir, PUBLIC_URL };
      const created = json(
        await runCli(['institute', 'create', '--name', 'OIDC University', '--short-name', 'OIDCU'], env),
      );
      instituteId = (created.institute as { id: number }).id;
    });
    after(async () => {
      await database.drop();
    });

    it('adds the provider with the secret read from standard input, prints the redirect URI, never the secret', async () => {
      const result = await create([]);
      const body = json(result);
      assert.ok(!result.stdout.includes(SECRET));
      assert.deepEqual(Object.keys(body), ['identity_provider', 'redirect_uri']);
      assert.equal(body.redirect_uri, `${PUBLIC_URL}/auth/oidc/callback`);
      const idp = body.identity_provider as Record<string, unknown>;
      assert.equal(idp.protocol, 'oidc');
      assert.equal(idp.name, 'Campus Login');
      assert.equal(idp.institute_id, instituteId);
      const metadata = await metadataOf(idp.id);
      assert.equal(metadata.issuer, 'https://login.example.org/realms/campus');
      assert.equal(metadata.client_id, 'invigil');
      assert.deepEqual(metadata.scopes, ['openid', 'email', 'profile']);
      assert.match(String(metadata.client_secret_encrypted), /^v1:/);
    });

    it('takes --scopes, and the same command as idp create', async () => {
      const body = json(
        await runCli(
          [
            'idp',
            'create',
            '--institute',
            String(instituteId),
            '--name',
            'Scoped',
            '--issuer',
            'https://login.example.org',
            '--client-id',
            'invigil',
            '--scopes',
            'openid email',
          ],
          env,
          `${SECRET}\r\n`,
        ),
      );
      const metadata = await metadataOf((body.identity_provider as { id: number }).id);
      assert.deepEqual(metadata.scopes, ['openid', 'email']);
    });

    it('refuses an issuer that is not https (plain http only on this machine), and scopes without openid', async () => {
      const withIssuer = (issuer: string) =>
        runCli(
          [
            'identity-provider',
            'create',
            '--institute',
            String(instituteId),
            '--name',
            'Bad',
            '--issuer',
            issuer,
            '--client-id',
            'x',
          ],
          env,
          `${SECRET}\n`,
        );
      failed(await withIssuer('http://login.example.org'), "'issuer':['must be an https:// address']");
      failed(await withIssuer('login.example.org'), "'issuer':['must be an https:// address']");
      failed(
        await withIssuer('https://login.example.org/?a=b'),
        "'issuer':['must not have a query, a fragment or credentials']",
      );
      assert.equal((await withIssuer('http://127.0.0.1:9000')).code, 0);
      failed(await create(['--scopes', 'email profile']), "'scopes':['must include openid']");
    });

    it('refuses an empty secret, an unknown institute, and a missing --institute', async () => {
      failed(await create([], ''), "Param is missing or the value is empty: 'client_secret'");
      failed(
        await runCli(
          [
            'identity-provider',
            'create',
            '--institute',
            '987654',
            '--name',
            'X',
            '--issuer',
            'https://login.example.org',
            '--client-id',
            'x',
          ],
          env,
          `${SECRET}\n`,
        ),
        "Couldn't find Institute with 'id'=987654",
      );
      const usage = await runCli(
        [
          'identity-provider',
          'create',
          '--name',
          'X',
          '--issuer',
          'https://login.example.org',
          '--client-id',
          'x',
        ],
        env,
        `${SECRET}\n`,
      );
      assert.equal(usage.code, 2, usage.stderr);
      assert.match(usage.stderr, /--institute is required/);
    });
  });
}
