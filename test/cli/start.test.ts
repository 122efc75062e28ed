/**
 * What a person starting Invigil by hand sees: `--help` after a command prints the usage (no stack
 * trace), and `invigil serve` (what `npm start` runs) prints one human line with the address beside
 * its JSON log, plus the commands that create the first user while there is none.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { runCli } from '../helpers/cli.ts';
import { freePort, launchInvigil, waitUntil } from '../helpers/processes.ts';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../helpers/server.ts';

const FIRST_USER_COMMANDS = [
  '  ./bin/invigil institute create --name "Example University" --short-name EXU',
  '  ./bin/invigil user create --institute 1 --email office@example.org --name "Exam Office" --role administrator',
];

/** True when `text` holds a JavaScript stack frame or a fatal JSON log line. */
function crashed(text: string): boolean {
  return /^\s+at /m.test(text) || text.includes('"level":60');
}

for (const dialect of DIALECTS) {
  describe(`starting Invigil by hand [${dialect}]`, () => {
    let database: TestDatabase;
    let env: Record<string, string>;

    before(async () => {
      database = await createTestDatabase(dialect);
      env = { DATABASE_URL: database.url, DATA_DIR: database.dataDir };
    });
    after(async () => {
      await database.drop();
    });

    it('prints the usage for `user create --help` and `-h`, with exit 0 and no stack trace', async () => {
      for (const args of [
        ['user', 'create', '--help'],
        ['user', 'create', '--institute', '1', '-h'],
        ['institute', 'create', '--help'],
        ['--help'],
      ]) {
        const result = await runCli(args, env);
        assert.equal(result.code, 0, `${args.join(' ')}: ${result.stderr}`);
        assert.match(result.stdout, /^Usage: invigil <command>/);
        assert.match(result.stdout, /user create --institute ID --email EMAIL --name NAME --role ROLE/);
        assert.ok(!crashed(result.stderr), result.stderr);
      }
    });

    it('answers an unknown option with the usage error (exit 2), not a stack trace', async () => {
      const result = await runCli(['user', 'create', '--institute', '1', '--nickname', 'x'], env);
      assert.equal(result.code, 2, result.stderr);
      assert.match(result.stderr, /^invigil: Unknown option '--nickname'/);
      assert.match(result.stderr, /Usage: invigil <command>/);
      assert.ok(!crashed(result.stderr), result.stderr);
    });

    it('serve prints the address, and the first-user commands only while there is no user', async () => {
      const port = await freePort();
      const url = `http://127.0.0.1:${port}`;
      const listening = `Invigil is listening on ${url} (console: ${url}/console)`;
      const serveOnce = async (): Promise<string> => {
        const server = launchInvigil(['serve', '--no-worker'], {
          ...process.env,
          ...env,
          PORT: String(port),
          LOG_LEVEL: 'info',
        });
        try {
          await waitUntil(
            'the greeting',
            () => {
              if (!server.alive()) throw new Error(`invigil exited while starting:\n${server.output()}`);
              // The greeting (standard output) and the JSON log (standard error) come through two
              // pipes, in either order: both are waited for.
              const output = server.output();
              return Promise.resolve(
                output.includes(listening) && output.includes('"msg":"invigil serving"'),
              );
            },
            60_000,
          );
          return server.output();
        } finally {
          assert.equal((await server.stop()).code, 0);
        }
      };

      const empty = await serveOnce();
      const lines = empty.split('\n');
      const at = lines.indexOf(listening);
      assert.ok(at >= 0, empty);
      assert.deepEqual(lines.slice(at + 1, at + 4), [
        'No users yet. Create an institute and a first administrator (README.md, "Quick start"):',
        ...FIRST_USER_COMMANDS,
      ]);
      // The JSON log is still there, untouched.
      assert.ok(lines.some((line) => line.startsWith('{') && line.includes('"msg":"invigil serving"')));

      const institute = await runCli(['institute', 'create', '--name', 'First', '--short-name', 'F'], env);
      assert.equal(institute.code, 0, institute.stderr);
      const { id } = (JSON.parse(institute.stdout) as { institute: { id: number } }).institute;
      const args = ['user', 'create', '--institute', String(id), '--email', 'first@example.org'];
      const user = await runCli([...args, '--name', 'First', '--role', 'administrator'], env);
      assert.equal(user.code, 0, user.stderr);

      const populated = await serveOnce();
      assert.ok(populated.split('\n').includes(listening), populated);
      assert.ok(!populated.includes('No users yet'), populated);
    });
  });
}
