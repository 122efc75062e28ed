import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openDatabase } from '../../src/db/database.ts';
import { ApiClient } from '../helpers/client.ts';
import { httpRequest } from '../helpers/http.ts';
import { createTestDatabase, DIALECTS, type TestDatabase, openTestDatabase } from '../helpers/server.ts';
import { type CliRun, INVIGIL_BIN, runCli } from '../helpers/cli.ts';

/** Every migration in src/db/migrations, by name, in the order they apply. */
const MIGRATION_NAMES = fs
  .readdirSync(path.join(import.meta.dirname, '..', '..', 'src', 'db', 'migrations'))
  .map((file) => file.replace(/\.ts$/, ''))
  .sort();

function json(result: CliRun): Record<string, Record<string, unknown>> {
  assert.equal(result.code, 0, result.stderr);
  return JSON.parse(result.stdout) as Record<string, Record<string, unknown>>;
}

async function waitForHealth(url: string, child: ChildProcess): Promise<void> {
  for (let attempt = 0; attempt < 100; attempt += 1) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`);
    try {
      const answer = await httpRequest({ url: `${url}/healthz` });
      if (answer.status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('server did not become healthy');
}

for (const dialect of DIALECTS) {
  describe(`bin/invigil [${dialect}]`, () => {
    let database: TestDatabase;
    let env: Record<string, string>;

    before(async () => {
      database = await createTestDatabase(dialect);
      env = { DATABASE_URL: database.url, DATA_DIR: database.dataDir };
    });
    after(async () => {
      await database.drop();
    });

    it('migrate applies the migrations once and reports them as JSON', async () => {
      assert.deepEqual(json(await runCli(['migrate'], env)), { migrated: MIGRATION_NAMES });
      assert.deepEqual(json(await runCli(['migrate'], env)), { migrated: [] });
    });

    it('creates institutes and users, prints credentials once, and rotates them', async () => {
      const { institute } = json(
        await runCli(['institute', 'create', '--name', 'CLI University', '--short-name', 'CLIU'], env),
      );
      assert.equal(institute?.name, 'CLI University');
      assert.equal(institute?.short_name, 'CLIU');
      assert.equal(typeof institute?.id, 'number');

      const { user } = json(
        await runCli(
          [
            'user',
            'create',
            '--institute',
            String(institute?.id),
            '--email',
            'cli@example.org',
            '--name',
            'Cli',
            '--role',
            'teacher',
          ],
          env,
        ),
      );
      assert.equal(user?.email, 'cli@example.org');
      assert.equal(user?.role, 'teacher');
      assert.match(String(user?.api_token), /^[0-9a-f]{32}$/);
      assert.match(String(user?.secret_key), /^[0-9a-f]{48}$/);

      // Credentials at rest: only a hash of the token and a ciphertext of the secret are stored.
      const opened = openTestDatabase(database);
      try {
        const row = await opened.db
          .selectFrom('users')
          .selectAll()
          .where('id', '=', Number(user?.id))
          .executeTakeFirstOrThrow();
        assert.notEqual(row.api_token_hash, user?.api_token);
        assert.ok(!row.secret_key_encrypted.includes(String(user?.secret_key)));
      } finally {
        await opened.destroy();
      }
      const keyFile = fs.statSync(path.join(database.dataDir, 'server.key'));
      assert.equal(keyFile.mode & 0o777, 0o600);

      const rotated = json(await runCli(['user', 'rotate-credentials', '--id', String(user?.id)], env)).user;
      assert.notEqual(rotated?.api_token, user?.api_token);
      assert.notEqual(rotated?.secret_key, user?.secret_key);
    });

    it('answers a taken institute name and an unknown user with exit 1 and a message', async () => {
      await runCli(['institute', 'create', '--name', 'Twice', '--short-name', 'T'], env);
      const again = await runCli(['institute', 'create', '--name', 'Twice', '--short-name', 'T'], env);
      assert.equal(again.code, 1);
      assert.match(again.stderr, /'name':\['has already been taken'\]/);
      const missing = await runCli(['user', 'rotate-credentials', '--id', '99999'], env);
      assert.equal(missing.code, 1);
      assert.match(missing.stderr, /Couldn't find User with 'id'=99999/);
    });

    it('answers a usage error with exit 2 and the usage text', async () => {
      const result = await runCli(['user', 'create', '--institute', '1'], env);
      assert.equal(result.code, 2);
      assert.match(result.stderr, /--email is required/);
      assert.match(result.stderr, /Usage: invigil/);
      const unknown = await runCli(['frobnicate'], env);
      assert.equal(unknown.code, 2);
    });

    it('stops with a message naming an invalid variable', async () => {
      const result = await runCli(['serve'], { ...env, PORT: 'abc' });
      assert.equal(result.code, 78);
      assert.match(result.stderr, /PORT must be a whole number/);
      assert.equal(result.stdout, '');
      const lease = await runCli(['worker'], { ...env, JOB_LEASE_MS: '500' });
      assert.equal(lease.code, 78);
      assert.match(lease.stderr, /JOB_LEASE_MS must be between 1000 and 3600000, got 500/);
      const retention = await runCli(['worker'], { ...env, RETENTION_DAYS: '0' });
      assert.equal(retention.code, 78);
      assert.match(retention.stderr, /RETENTION_DAYS must be between 1 and 3650, got 0/);
    });

    it('serves, answers /healthz and a signed request, and exits 0 on SIGTERM', async () => {
      const { institute } = json(
        await runCli(['institute', 'create', '--name', 'Served', '--short-name', 'S'], env),
      );
      const { user } = json(
        await runCli(
          [
            'user',
            'create',
            '--institute',
            String(institute?.id),
            '--email',
            'served@example.org',
            '--name',
            'S',
            '--role',
            'administrator',
          ],
          env,
        ),
      );
      const port = String(20000 + Math.floor(Math.random() * 20000));
      const child = spawn(INVIGIL_BIN, ['serve'], {
        env: { ...process.env, ...env, PORT: port, LOG_LEVEL: 'warn' },
      });
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      const url = `http://127.0.0.1:${port}`;
      try {
        await waitForHealth(url, child);
        const health = await httpRequest({ url: `${url}/healthz` });
        assert.deepEqual(health.json, { status: 'ok' });
        const client = new ApiClient(url, {
          apiToken: String(user?.api_token),
          secretKey: String(user?.secret_key),
        });
        const listed = await client.v3('GET', '/exams');
        assert.equal(listed.status, 200, listed.text);
      } finally {
        child.kill('SIGTERM');
      }
      assert.equal(await exited, 0);
    });

    it('worker honours JOB_LEASE_MS, sweeps jobs and sent mail past RETENTION_DAYS at start and logs how many', async () => {
      const DAY = 24 * 60 * 60 * 1000;
      const now = Date.now();
      const open = () => openTestDatabase(database);
      const seeded = open();
      const job = async (status: string, finishedAt: number | null, runAt: number) => {
        const row = await seeded.db
          .insertInto('jobs')
          .values({
            kind: 'history',
            payload: '{}',
            status,
            attempts: finishedAt === null ? 0 : 1,
            max_attempts: 5,
            run_at: runAt,
            created_at: now - 9 * DAY,
            updated_at: finishedAt ?? now - 9 * DAY,
            finished_at: finishedAt,
          })
          .returning('id')
          .executeTakeFirstOrThrow();
        return row.id;
      };
      const mail = async (sentAt: number) => {
        const row = await seeded.db
          .insertInto('outbox')
          .values({
            kind: 'exam_link',
            to_address: 'student@example.org',
            subject: 'Your exam',
            text_body: 'text',
            html_body: '<p>html</p>',
            status: 'sent',
            attempts: 1,
            next_attempt_at: sentAt,
            created_at: sentAt,
            sent_at: sentAt,
          })
          .returning('id')
          .executeTakeFirstOrThrow();
        return row.id;
      };
      let kept: { jobs: number[]; mail: number[] };
      try {
        await job('succeeded', now - 8 * DAY, now - 9 * DAY);
        await mail(now - 8 * DAY);
        kept = {
          // Not due for a day, so the worker leaves it queued.
          jobs: [await job('succeeded', now - 6 * DAY, now - 9 * DAY), await job('queued', null, now + DAY)],
          mail: [await mail(now - 6 * DAY)],
        };
      } finally {
        await seeded.destroy();
      }

      const child = spawn(INVIGIL_BIN, ['worker'], {
        env: { ...process.env, ...env, LOG_LEVEL: 'info', JOB_LEASE_MS: '1500', RETENTION_DAYS: '7' },
      });
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      const lines: Record<string, unknown>[] = [];
      let partial = '';
      child.stderr.on('data', (chunk: Buffer) => {
        const text = partial + chunk.toString();
        const complete = text.split('\n');
        partial = complete.pop() ?? '';
        for (const line of complete)
          if (line.trim() !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
      });
      const logged = (message: string) => lines.find((line) => line.msg === message);
      try {
        for (
          let wait = 0;
          wait < 300 && logged('finished jobs and sent mail past retention removed') === undefined;
          wait += 1
        ) {
          if (child.exitCode !== null) throw new Error(`worker exited with ${child.exitCode}`);
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        const swept = logged('finished jobs and sent mail past retention removed');
        assert.ok(swept, JSON.stringify(lines));
        assert.deepEqual([swept.jobs, swept.mail, swept.retentionDays], [1, 1, 7]);
        assert.equal(logged('job worker started')?.leaseMs, 1500);
      } finally {
        child.kill('SIGTERM');
      }
      assert.equal(await exited, 0);

      const checked = open();
      try {
        // Only the seeded jobs: the worker's own maintenance queues a session.retention job too.
        const jobs = await checked.db
          .selectFrom('jobs')
          .select('id')
          .where('kind', '=', 'history')
          .orderBy('id')
          .execute();
        assert.deepEqual(
          jobs.map((row) => row.id),
          kept.jobs,
        );
        const outbox = await checked.db.selectFrom('outbox').select('id').orderBy('id').execute();
        assert.deepEqual(
          outbox.map((row) => row.id),
          kept.mail,
        );
      } finally {
        await checked.destroy();
      }
    });
  });
}

describe('bin/invigil mail redeliver', () => {
  it('queues held mail again and reports how many', async () => {
    const database = await createTestDatabase('sqlite');
    try {
      const env = { DATABASE_URL: database.url, DATA_DIR: database.dataDir };
      assert.deepEqual(json(await runCli(['migrate'], env)), { migrated: MIGRATION_NAMES });
      const opened = openDatabase({ kind: 'sqlite', path: database.url.slice('sqlite:'.length) });
      try {
        await opened.db
          .insertInto('outbox')
          .values({
            kind: 'exam_link',
            to_address: 'student@example.org',
            subject: 'Your exam',
            text_body: 'text',
            html_body: '<p>html</p>',
            status: 'held',
            attempts: 0,
            next_attempt_at: 0,
            created_at: 0,
          })
          .execute();
      } finally {
        await opened.destroy();
      }
      assert.deepEqual(json(await runCli(['mail', 'redeliver'], env)), { requeued: 1 });
      assert.deepEqual(json(await runCli(['mail', 'redeliver'], env)), { requeued: 0 });
    } finally {
      await database.drop();
    }
  });
});
