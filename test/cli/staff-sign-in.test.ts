import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { verifyPassword } from '../../src/security/passwords.ts';
import { type CliRun, runCli } from '../helpers/cli.ts';
import { createTestDatabase, DIALECTS, type TestDatabase, openTestDatabase } from '../helpers/server.ts';

/** The staff sign-in commands (docs/staff-sign-in.md), each dialect on a database of its own. */

function json(result: CliRun): Record<string, Record<string, unknown>> {
  assert.equal(result.code, 0, result.stderr);
  return JSON.parse(result.stdout) as Record<string, Record<string, unknown>>;
}

for (const dialect of DIALECTS) {
  describe(`bin/invigil user invite and set-password [${dialect}]`, () => {
    let database: TestDatabase;
    let env: Record<string, string>;

    before(async () => {
      database = await createTestDatabase(dialect);
      env = { DATABASE_URL: database.url, DATA_DIR: database.dataDir };
    });
    after(async () => {
      await database.drop();
    });

    it('invites a user (the one-time link as JSON, the email queued) and sets a password read from standard input', async () => {
      const { institute } = json(
        await runCli(['institute', 'create', '--name', 'Sign-in University', '--short-name', 'SIU'], env),
      );
      const { user } = json(
        await runCli(
          [
            'user',
            'create',
            '--institute',
            String(institute?.id),
            '--email',
            'staff@siu.example',
            '--name',
            'Staff',
            '--role',
            'teacher',
          ],
          env,
        ),
      );
      const id = String(user?.id);
      const { invitation } = json(await runCli(['user', 'invite', '--id', id], env));
      assert.match(
        String(invitation?.url),
        /^http:\/\/127\.0\.0\.1:3000\/console\/accept-invitation\?token=[\w-]{43}$/,
      );
      assert.ok(Date.parse(String(invitation?.expires_at)) > Date.now());

      const short = await runCli(['user', 'set-password', '--id', id], env, 'eleven char\n');
      assert.equal(short.code, 1);
      assert.match(short.stderr, /'password':\['is too short \(minimum is 12 characters\)'\]/);
      const long = await runCli(['user', 'set-password', '--id', id], env, `${'x'.repeat(1025)}\n`);
      assert.equal(long.code, 1);
      assert.match(long.stderr, /'password':\['is too long \(maximum is 1024 characters\)'\]/);
      const set = await runCli(
        ['user', 'set-password', '--id', id],
        env,
        'twelve chars ok\nignored second line\n',
      );
      assert.deepEqual(json(set), { password_set: { user_id: user?.id } });

      const opened = openTestDatabase(database);
      try {
        const row = await opened.db
          .selectFrom('users')
          .select('password_hash')
          .where('id', '=', Number(id))
          .executeTakeFirstOrThrow();
        assert.ok(await verifyPassword('twelve chars ok', row.password_hash ?? ''));
        const mail = await opened.db
          .selectFrom('outbox')
          .select(['kind', 'text_body'])
          .where('to_address', '=', 'staff@siu.example')
          .executeTakeFirstOrThrow();
        assert.equal(mail.kind, 'staff_invitation');
        assert.ok(mail.text_body.includes(String(invitation?.url)));
      } finally {
        await opened.destroy();
      }
    });

    it('answers an unknown user with exit 1 and a message', async () => {
      const invite = await runCli(['user', 'invite', '--id', '99999'], env);
      assert.equal(invite.code, 1);
      assert.match(invite.stderr, /Couldn't find User with 'id'=99999/);
      const set = await runCli(['user', 'set-password', '--id', '99999'], env, 'long enough password\n');
      assert.equal(set.code, 1);
      assert.match(set.stderr, /Couldn't find User with 'id'=99999/);
    });
  });
}
