import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { migrateToLatest } from '../../src/db/migrate.ts';
import { DIALECTS } from '../helpers/server.ts';
import { atMigration } from './migration-support.ts';
import { oldOwnedExam, oldSession } from './old-rows.ts';

describe('migration 0016_lti_launch', () => {
  for (const dialect of DIALECTS) {
    it(`adds the LTI tables beside existing data, keeps single use unique, and lets rows go with their tool provider and session on ${dialect}`, async () => {
      await atMigration(dialect, '0015_live_proctoring', async (database) => {
        const { db } = database;
        const { institute, exam } = await oldOwnedExam(db, {
          name: 'Before 0016',
          type: 'record_only',
        });
        const session = await oldSession(db, exam.id, { status: 'registered', token: 'c'.repeat(32) });
        const provider = await db
          .insertInto('tool_providers')
          .values({
            institute_id: institute.id,
            name: 'Moodle',
            lti_version: '1.3',
            consumer_key: null,
            shared_secret_encrypted: null,
            issuer: 'https://moodle.example.org',
            client_id: 'abc',
            deployment_id: '1',
            auth_login_url: 'https://moodle.example.org/mod/lti/auth.php',
            auth_token_url: 'https://moodle.example.org/mod/lti/token.php',
            jwks_url: 'https://moodle.example.org/mod/lti/certs.php',
            created_at: 1,
            updated_at: 1,
          })
          .returning('id')
          .executeTakeFirstOrThrow();

        assert.ok((await migrateToLatest(database)).includes('0016_lti_launch'));

        // Times in milliseconds past 2^31 round-trip on both databases.
        const later = 1_795_226_927_619;
        await db
          .insertInto('lti_tool_keys')
          .values({
            kid: 'k1',
            private_key_encrypted: 'x',
            public_jwk: '{}',
            created_at: later,
            retired_at: null,
            expires_at: null,
          })
          .execute();
        await assert.rejects(
          db
            .insertInto('lti_tool_keys')
            .values({ kid: 'k1', private_key_encrypted: 'y', public_jwk: '{}', created_at: later })
            .execute(),
          'a key id is unique',
        );
        const key = await db
          .selectFrom('lti_tool_keys')
          .select(['kid', 'created_at'])
          .executeTakeFirstOrThrow();
        assert.deepEqual({ ...key, created_at: Number(key.created_at) }, { kid: 'k1', created_at: later });

        await db
          .insertInto('lti_logins')
          .values({
            state_hash: 's1',
            nonce: 'n1',
            tool_provider_id: provider.id,
            binding_hash: 'b1',
            binding_kind: 'cookie',
            login_params: '{}',
            created_at: later,
            expires_at: later + 600_000,
            used_at: null,
          })
          .execute();
        await db
          .insertInto('lti_oauth_nonces')
          .values({ tool_provider_id: provider.id, nonce: 'once', expires_at: later })
          .execute();
        await assert.rejects(
          db
            .insertInto('lti_oauth_nonces')
            .values({ tool_provider_id: provider.id, nonce: 'once', expires_at: later })
            .execute(),
          'a nonce is accepted once per tool provider',
        );
        await db
          .insertInto('lti_tickets')
          .values({
            ticket_hash: 't1',
            purpose: 'continue',
            payload: '{}',
            created_at: later,
            expires_at: later + 60_000,
            used_at: null,
          })
          .execute();
        await db
          .insertInto('lti_session_links')
          .values({
            student_session_id: session.id,
            tool_provider_id: provider.id,
            lti_version: '1.3',
            platform_user_id: 'sub-1',
            deployment_id: '1',
            attempt_number: 1,
            start_assessment_url: null,
            session_data: null,
            acs_url: null,
            acs_actions: null,
            created_at: later,
            updated_at: later,
          })
          .execute();

        // A session's link goes with the session; logins and nonces go with their tool provider.
        await db.deleteFrom('student_sessions').where('id', '=', session.id).execute();
        assert.deepEqual(await db.selectFrom('lti_session_links').select('student_session_id').execute(), []);
        await db.deleteFrom('tool_providers').where('id', '=', provider.id).execute();
        assert.deepEqual(await db.selectFrom('lti_logins').select('id').execute(), []);
        assert.deepEqual(await db.selectFrom('lti_oauth_nonces').select('nonce').execute(), []);
      });
    });
  }
});
