import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { OUTBOX_STATUS_FILTER_NAMES, OUTBOX_STATUS_FILTERS } from '../../src/domain/mail/outbox.ts';
import { listOutboxSchema } from '../../src/http/v3/outbox.schemas.ts';
import { type CliRun, runCli } from '../helpers/cli.ts';
import { createTestDatabase, DIALECTS, type TestDatabase, openTestDatabase } from '../helpers/server.ts';

type Json = Record<string, unknown>;

function json(result: CliRun): Json {
  assert.equal(result.code, 0, result.stderr);
  return JSON.parse(result.stdout) as Json;
}

const SENT_AT = Date.parse('2026-11-21T09:30:00.000Z');

for (const dialect of DIALECTS) {
  describe(`bin/invigil mail list and mail show [${dialect}]`, () => {
    let database: TestDatabase;
    let env: Record<string, string>;
    const ids: Record<string, number> = {};
    let instituteId: number;

    before(async () => {
      database = await createTestDatabase(dialect);
      env = { DATABASE_URL: database.url, DATA_DIR: database.dataDir };
      json(await runCli(['migrate'], env));
      const opened = openTestDatabase(database);
      try {
        instituteId = (
          await opened.db
            .insertInto('institutes')
            .values({
              name: 'Mail Institute',
              short_name: 'MI',
              check_requirements_emails_enabled: true,
              reminder_emails_enabled: true,
              exam_link_emails_enabled: true,
              exam_changed_emails_enabled: true,
              exam_finalized_emails_enabled: true,
              default_language: 'en',
              created_at: 0,
              updated_at: 0,
            })
            .returning('id')
            .executeTakeFirstOrThrow()
        ).id;
        for (const [name, status] of [
          ['held', 'held'],
          ['failed', 'failed'],
          ['sent', 'sent'],
          ['pending', 'pending'],
          ['sending', 'sending'],
        ] as const) {
          const row = await opened.db
            .insertInto('outbox')
            .values({
              kind: 'exam_link',
              to_address: `${name}@example.org`,
              subject: `Your exam link: ${name}`,
              text_body: `Hello ${name},\nopen https://exams.example.org/room/abc`,
              html_body: `<p>Hello ${name}</p>`,
              status,
              attempts: status === 'pending' ? 0 : 1,
              next_attempt_at: SENT_AT,
              last_error: status === 'failed' ? '550 mailbox unavailable' : null,
              created_at: SENT_AT,
              sent_at: status === 'sent' ? SENT_AT : null,
              // One email of no institute (a superuser's, say); the others belong to the institute.
              institute_id: status === 'held' ? null : instituteId,
            })
            .returning('id')
            .executeTakeFirstOrThrow();
          ids[name] = row.id;
        }
      } finally {
        await opened.destroy();
      }
    });

    after(async () => {
      await database.drop();
    });

    it('lists every email newest first, without bodies', async () => {
      const { messages } = json(await runCli(['mail', 'list'], env)) as { messages: Json[] };
      assert.deepEqual(
        messages.map((message) => message.to),
        [
          'sending@example.org',
          'pending@example.org',
          'sent@example.org',
          'failed@example.org',
          'held@example.org',
        ],
      );
      const sent = messages.find((message) => message.status === 'sent');
      assert.deepEqual(sent, {
        id: ids.sent,
        kind: 'exam_link',
        to: 'sent@example.org',
        subject: 'Your exam link: sent',
        status: 'sent',
        attempts: 1,
        last_error: null,
        student_session_id: null,
        institute_id: instituteId,
        created_at: '2026-11-21T09:30:00.000Z',
        sent_at: '2026-11-21T09:30:00.000Z',
        next_attempt_at: '2026-11-21T09:30:00.000Z',
      });
      for (const message of messages) {
        assert.ok(!('text' in message) && !('html' in message), 'no body in a listing');
      }
      assert.equal(messages.find((message) => message.status === 'held')?.institute_id, null);
    });

    it('filters with the definition the V3 outbox listing uses: every name, and nothing else', async () => {
      const schemaEnum = (listOutboxSchema.querystring.properties.status as { enum: readonly string[] }).enum;
      assert.deepEqual([...schemaEnum], [...OUTBOX_STATUS_FILTER_NAMES]);
      assert.deepEqual([...OUTBOX_STATUS_FILTER_NAMES].sort(), [
        'failed',
        'held',
        'pending',
        'queued',
        'sending',
        'sent',
      ]);
      for (const name of OUTBOX_STATUS_FILTER_NAMES) {
        const { messages } = json(await runCli(['mail', 'list', '--status', name], env)) as {
          messages: Json[];
        };
        const wanted: readonly string[] = OUTBOX_STATUS_FILTERS[name];
        assert.ok(messages.length > 0, name);
        for (const message of messages) assert.ok(wanted.includes(String(message.status)), name);
        assert.equal(messages.length, wanted.length, name);
      }
      const bad = await runCli(['mail', 'list', '--status', 'lost'], env);
      assert.equal(bad.code, 2);
      assert.match(
        bad.stderr,
        new RegExp(`--status must be one of ${OUTBOX_STATUS_FILTER_NAMES.join(', ')}`),
      );
    });

    it('filters by status, queued meaning pending and sending, and limits the count', async () => {
      const only = async (args: string[]) =>
        (json(await runCli(['mail', 'list', ...args], env)) as { messages: Json[] }).messages.map(
          (message) => message.to,
        );
      assert.deepEqual(await only(['--status', 'held']), ['held@example.org']);
      assert.deepEqual(await only(['--status', 'failed']), ['failed@example.org']);
      assert.deepEqual(await only(['--status', 'sent']), ['sent@example.org']);
      assert.deepEqual(await only(['--status', 'queued']), ['sending@example.org', 'pending@example.org']);
      assert.deepEqual(await only(['--limit', '2']), ['sending@example.org', 'pending@example.org']);
      assert.deepEqual(await only(['--status', 'failed', '--limit', '1']), ['failed@example.org']);
    });

    it('shows one email with its text and HTML bodies', async () => {
      const { message } = json(await runCli(['mail', 'show', String(ids.failed)], env)) as { message: Json };
      assert.equal(message.id, ids.failed);
      assert.equal(message.status, 'failed');
      assert.equal(message.last_error, '550 mailbox unavailable');
      assert.equal(message.text, 'Hello failed,\nopen https://exams.example.org/room/abc');
      assert.equal(message.html, '<p>Hello failed</p>');
    });

    it('answers exit 1 for an id that names no email, and 2 for bad arguments', async () => {
      const missing = await runCli(['mail', 'show', '999999'], env);
      assert.equal(missing.code, 1);
      assert.equal(missing.stdout, '');
      assert.match(missing.stderr, /Couldn't find the email with id 999999/);
      for (const args of [
        ['mail', 'show'],
        ['mail', 'show', 'abc'],
        ['mail', 'show', '0'],
        ['mail', 'show', '1', '2'],
        ['mail', 'list', '--status', 'lost'],
        ['mail', 'list', '--status', 'constructor'],
        ['mail', 'list', '--limit', '0'],
        ['mail', 'list', '--limit', 'ten'],
        ['mail', 'list', '--limit', '1001'],
        ['mail', 'list', '--other'],
      ]) {
        const bad = await runCli(args, env);
        assert.equal(bad.code, 2, `${args.join(' ')}: ${bad.stderr}`);
        assert.equal(bad.stdout, '');
      }
    });
  });
}
