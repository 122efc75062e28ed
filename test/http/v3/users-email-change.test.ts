/**
 * Changing a colleague's email does not hand their account over (docs/staff-sign-in.md, "Changing a
 * colleague's email"): an administrator may not change another administrator's email, and a changed
 * email of any other user removes its password and ends its sessions, so only an invitation to the
 * new address signs it in again.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { NOT_AUTHORIZED } from '../../helpers/answers.ts';
import { httpRequest } from '../../helpers/http.ts';
import { DIALECTS, startTestServer, type TestServer } from '../../helpers/server.ts';
import { GOOD_PASSWORD, postJson, signIn, staffUser } from '../staff/support.ts';

for (const dialect of DIALECTS) {
  describe(`PATCH /api/v3/institutes/:institute_id/users/:id changing an email [${dialect}]`, () => {
    let server: TestServer;
    let instituteId: number;

    before(async () => {
      server = await startTestServer(dialect);
      instituteId = await server.institute();
    });
    after(() => server.close());

    const sessionStatus = async (cookie: string) =>
      (await httpRequest({ url: `${server.baseUrl}/auth/session`, headers: { cookie } })).status;
    const emailOf = async (id: number) =>
      (
        await server.app.database.db
          .selectFrom('users')
          .select('email')
          .where('id', '=', id)
          .executeTakeFirstOrThrow()
      ).email;

    it("refuses (403) an administrator changing another administrator's email, changing nothing", async () => {
      const admin = await staffUser(server, instituteId, 'administrator');
      const colleague = await staffUser(server, instituteId, 'administrator');
      const browser = await signIn(server, colleague.email);
      const answer = await admin.client.v3('PATCH', '/institutes/:institute_id/users/:id', {
        institute_id: instituteId,
        id: colleague.id,
        email: 'taken-over@example.org',
      });
      assert.equal(answer.status, 403, answer.text);
      assert.deepEqual(answer.json, NOT_AUTHORIZED);
      assert.equal(await emailOf(colleague.id), colleague.email);
      assert.equal(await sessionStatus(browser.cookie), 200);
      // Other changes of the colleague stay possible.
      const renamed = await admin.client.v3('PATCH', '/institutes/:institute_id/users/:id', {
        institute_id: instituteId,
        id: colleague.id,
        name: 'Renamed',
      });
      assert.equal(renamed.status, 200, renamed.text);
    });

    it("ends a teacher's sessions and removes its password when an administrator changes its email; an invitation to the new address sets one", async () => {
      const admin = await staffUser(server, instituteId, 'administrator');
      const teacher = await staffUser(server, instituteId, 'teacher');
      const browser = await signIn(server, teacher.email);
      const newEmail = `moved-${teacher.id}@example.org`;
      const answer = await admin.client.v3('PATCH', '/institutes/:institute_id/users/:id', {
        institute_id: instituteId,
        id: teacher.id,
        email: newEmail,
      });
      assert.equal(answer.status, 200, answer.text);
      assert.notEqual(await sessionStatus(browser.cookie), 200);
      const oldPassword = await postJson(server, '/auth/sign_in', {
        email: newEmail,
        password: GOOD_PASSWORD,
      });
      assert.equal(oldPassword.status, 403, oldPassword.text);
      const invited = await admin.client.v3('POST', '/institutes/:institute_id/users/:id/invite', {
        institute_id: instituteId,
        id: teacher.id,
      });
      assert.equal(invited.status, 200, invited.text);
      const outbox = await server.app.database.db
        .selectFrom('outbox')
        .select('to_address')
        .where('to_address', '=', newEmail)
        .execute();
      assert.equal(outbox.length, 1);
    });

    it('keeps the sessions and password of a user changing its own email, or when the email only changes case', async () => {
      const admin = await staffUser(server, instituteId, 'administrator');
      const own = await signIn(server, admin.email);
      const self = await admin.client.v3('PATCH', '/institutes/:institute_id/users/:id', {
        institute_id: instituteId,
        id: admin.id,
        email: `self-${admin.id}@example.org`,
      });
      assert.equal(self.status, 200, self.text);
      assert.equal(await sessionStatus(own.cookie), 200);
      const teacher = await staffUser(server, instituteId, 'teacher');
      const browser = await signIn(server, teacher.email);
      const cased = await admin.client.v3('PATCH', '/institutes/:institute_id/users/:id', {
        institute_id: instituteId,
        id: teacher.id,
        email: teacher.email.toUpperCase(),
      });
      assert.equal(cased.status, 200, cased.text);
      assert.equal(await sessionStatus(browser.cookie), 200);
    });
  });
}
