import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { invalid, NOT_AUTHORIZED, notFound } from '../../helpers/answers.ts';
import type { HttpAnswer } from '../../helpers/http.ts';
import { DIALECTS, startTestServer, type TestServer } from '../../helpers/server.ts';
import { consoleV3, GOOD_PASSWORD, postJson, signIn, staffUser } from '../staff/support.ts';

type Json = Record<string, unknown>;
type Member = Awaited<ReturnType<TestServer['user']>>;

const PUBLIC_URL = 'https://exams.example.org';
const DAY = 24 * 60 * 60 * 1000;
const ROUTE = '/institutes/:institute_id/users/:id/invite';

/** The `invitation` of a 200 answer; fails the test otherwise. */
function invitationIn(answer: HttpAnswer): Json {
  assert.equal(answer.status, 200, answer.text);
  const invitation = (answer.json as { invitation?: unknown }).invitation;
  assert.ok(typeof invitation === 'object' && invitation !== null, answer.text);
  return invitation as Json;
}

for (const dialect of DIALECTS) {
  describe(`POST /api/v3/institutes/:institute_id/users/:id/invite [${dialect}]`, () => {
    let server: TestServer;
    let instituteA: number;
    let instituteB: number;
    let superuser: Member;
    let admin: Member;
    let bAdmin: Member;

    /** The staff_invitation rows written for a user. */
    const invitationsOf = (userId: number) =>
      server.app.database.db
        .selectFrom('outbox')
        .innerJoin('users', (join) => join.onRef('users.email', '=', 'outbox.to_address'))
        .select(['outbox.id', 'outbox.status', 'outbox.institute_id', 'outbox.text_body'])
        .where('users.id', '=', userId)
        .where('outbox.kind', '=', 'staff_invitation')
        .orderBy('outbox.id')
        .execute();

    before(async () => {
      // No SMTP_URL: invitations are held, so the answer carries the link to pass on.
      server = await startTestServer(dialect, { env: { PUBLIC_URL } });
      instituteA = await server.institute();
      instituteB = await server.institute();
      superuser = await server.user(instituteA, 'superuser');
      admin = await server.user(instituteA, 'administrator');
      bAdmin = await server.user(instituteB, 'administrator');
    });
    after(async () => {
      await server.close();
    });

    it('queues the invitation email as `invigil user invite` does and, without SMTP, answers the link', async () => {
      const invited = await server.user(instituteA, 'teacher');
      const before = Date.now();
      const invitation = invitationIn(
        await admin.client.v3('POST', ROUTE, { institute_id: instituteA, id: invited.id }),
      );
      assert.deepEqual(Object.keys(invitation).sort(), ['expires_at', 'invitation_url', 'user_id']);
      assert.equal(invitation.user_id, invited.id);
      const url = String(invitation.invitation_url);
      assert.match(url, new RegExp(`^${PUBLIC_URL}/console/accept-invitation\\?token=[A-Za-z0-9_-]{43}$`));
      const expires = Date.parse(String(invitation.expires_at));
      assert.ok(expires >= before + 7 * DAY - 1000 && expires <= Date.now() + 7 * DAY + 1000);
      const rows = await invitationsOf(invited.id);
      assert.equal(rows.length, 1);
      assert.equal(rows[0]?.status, 'pending');
      assert.equal(rows[0]?.institute_id, instituteA);
      assert.ok(rows[0]?.text_body.includes(url), 'the email carries the same link');

      // The link works: the invited user chooses a password and signs in.
      const token = new URL(url).searchParams.get('token');
      const accepted = await postJson(server, '/auth/invitations/accept', { token, password: GOOD_PASSWORD });
      assert.equal(accepted.status, 204, accepted.text);
      const email = (
        await server.app.database.db
          .selectFrom('users')
          .select('email')
          .where('id', '=', invited.id)
          .executeTakeFirstOrThrow()
      ).email;
      await signIn(server, email);
    });

    it('does not answer the link for a user who already has a password (the email still goes)', async () => {
      const invited = await staffUser(server, instituteA, 'teacher');
      const invitation = invitationIn(
        await admin.client.v3('POST', ROUTE, { institute_id: instituteA, id: invited.id }),
      );
      assert.equal(invitation.invitation_url, null);
      assert.equal(typeof invitation.expires_at, 'string');
      assert.equal((await invitationsOf(invited.id)).length, 1);
    });

    it('is recorded in the audit log with the user as target', async () => {
      const invited = await server.user(instituteA, 'proctor');
      invitationIn(await admin.client.v3('POST', ROUTE, { institute_id: instituteA, id: invited.id }));
      const event = await server.app.database.db
        .selectFrom('audit_events')
        .selectAll()
        .where('user_id', '=', admin.id)
        .where('action', '=', 'POST /api/v3/institutes/:institute_id/users/:id/invite')
        .orderBy('id', 'desc')
        .executeTakeFirstOrThrow();
      assert.equal(event.target_type, 'users');
      assert.equal(Number(event.target_id), invited.id);
      assert.equal(event.institute_id, instituteA);
    });

    it('refuses other roles of the institute (403) and hides it from other institutes (404)', async () => {
      const invited = await server.user(instituteA, 'teacher');
      for (const role of ['teacher', 'proctor', 'reviewer', 'auditor'] as const) {
        const member = await server.user(instituteA, role);
        const answer = await member.client.v3('POST', ROUTE, { institute_id: instituteA, id: invited.id });
        assert.equal(answer.status, 403, role);
        assert.deepEqual(answer.json, NOT_AUTHORIZED);
      }
      const hidden = await bAdmin.client.v3('POST', ROUTE, { institute_id: instituteA, id: invited.id });
      assert.equal(hidden.status, 404);
      assert.deepEqual(hidden.json, notFound('Institute', instituteA));
      // A user of another institute under one's own institute's path is no user of it.
      const elsewhere = await bAdmin.client.v3('POST', ROUTE, { institute_id: instituteB, id: invited.id });
      assert.equal(elsewhere.status, 404);
      assert.deepEqual(elsewhere.json, notFound('User', invited.id));
      assert.equal((await invitationsOf(invited.id)).length, 0);
    });

    it("lets only a superuser invite a superuser (the link would set a superuser's password)", async () => {
      const root = await server.user(instituteA, 'superuser');
      const refused = await admin.client.v3('POST', ROUTE, { institute_id: instituteA, id: root.id });
      assert.equal(refused.status, 403);
      assert.deepEqual(refused.json, NOT_AUTHORIZED);
      assert.equal((await invitationsOf(root.id)).length, 0);
      invitationIn(await superuser.client.v3('POST', ROUTE, { institute_id: instituteA, id: root.id }));
      assert.equal((await invitationsOf(root.id)).length, 1);
    });

    it('answers 422 for a deactivated user and 404 for an unknown one', async () => {
      const gone = await server.user(instituteA, 'teacher');
      const deactivated = await admin.client.v3('PATCH', '/institutes/:institute_id/users/:id', {
        institute_id: instituteA,
        id: gone.id,
        active: false,
      });
      assert.equal(deactivated.status, 200, deactivated.text);
      const answer = await admin.client.v3('POST', ROUTE, { institute_id: instituteA, id: gone.id });
      assert.equal(answer.status, 422);
      assert.deepEqual(answer.json, invalid('id', 'names a deactivated user'));
      const unknown = await admin.client.v3('POST', ROUTE, { institute_id: instituteA, id: 987654321 });
      assert.equal(unknown.status, 404);
      assert.deepEqual(unknown.json, notFound('User', 987654321));
    });

    it('the console creates a user and invites it with the cookie and X-CSRF-Token (refused without the token)', async () => {
      const staff = await staffUser(server, instituteA, 'administrator');
      const browser = await signIn(server, staff.email);
      const email = `console-${Date.now()}@example.org`;
      const created = await consoleV3(server, browser, 'POST', `/institutes/${instituteA}/users`, {
        body: { email, name: 'Made in the console', role: 'proctor' },
        csrf: browser.csrf,
      });
      assert.equal(created.status, 201, created.text);
      const user = (created.json as { user: Json }).user;
      assert.equal(user.email, email);
      assert.equal(user.role, 'proctor');
      assert.equal(typeof user.api_token, 'string');
      const path = `/institutes/${instituteA}/users/${String(user.id)}/invite`;
      const refused = await consoleV3(server, browser, 'POST', path);
      assert.equal(refused.status, 403);
      assert.deepEqual(refused.json, NOT_AUTHORIZED);
      const invitation = invitationIn(await consoleV3(server, browser, 'POST', path, { csrf: browser.csrf }));
      assert.equal(invitation.user_id, user.id);
      assert.match(String(invitation.invitation_url), /accept-invitation\?token=/);
      assert.equal((await invitationsOf(Number(user.id))).length, 1);
    });
  });
}
