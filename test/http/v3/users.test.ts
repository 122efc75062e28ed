import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Role } from '../../../src/domain/access.ts';
import { ApiClient } from '../../helpers/client.ts';
import type { HttpAnswer } from '../../helpers/http.ts';
import {
  MEMBER_ROLES,
  type MemberRole,
  NON_ADMIN_ROLES,
  startInstituteWorld,
  type TestUser,
} from '../../helpers/institute-world.ts';
import { DIALECTS, TestClock, type TestServer } from '../../helpers/server.ts';
import type { Scalar } from '../../helpers/signing.ts';
import { object } from '../../helpers/json.ts';
import { article, invalid, missing, NOT_AUTHORIZED, notFound } from '../../helpers/answers.ts';

type Json = Record<string, unknown>;

const ISO_MILLIS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Every field of the V3 user record (contract §6, plus `active`, institute_name, logo_image), in order. */
const USER_FIELDS = [
  'id',
  'institute_id',
  'institute_name',
  'logo_image',
  'email',
  'name',
  'role',
  'identity_provider_id',
  'active',
  'created_at',
  'updated_at',
] as const;

const GRANTABLE_ROLES: readonly Role[] = [
  'administrator',
  'teacher',
  'proctor',
  'reviewer',
  'auditor',
  'global_proctor',
  'global_reviewer',
];

const USERS = '/institutes/:institute_id/users';
const USER = '/institutes/:institute_id/users/:id';

function userIn(answer: HttpAnswer): Json {
  return object(object(answer.json, 'body').user, 'user');
}

function usersIn(answer: HttpAnswer): Json[] {
  assert.equal(answer.status, 200, answer.text);
  const list = object(answer.json, 'body').users;
  assert.ok(Array.isArray(list), 'users is an array');
  return list.map((item) => object(item, 'user'));
}

const TAKEN_EMAIL = {
  error: "'email':['has already been taken']",
  errors: { email: ['has already been taken'] },
};

let sequence = 0;
function newEmail(label = 'user'): string {
  sequence += 1;
  return `${label}.${sequence}.${Math.random().toString(36).slice(2, 8)}@example.org`;
}

for (const dialect of DIALECTS) {
  describe(`V3 institute users [${dialect}]`, () => {
    const clock = new TestClock(Math.floor(Date.now() / 1000) * 1000);
    let server: TestServer;
    let superuser: TestUser;
    let mainId: number;
    const member = {} as Record<MemberRole, TestUser>;
    let otherId: number;
    const outsider = {} as Record<MemberRole, TestUser>;

    before(async () => {
      const world = await startInstituteWorld(dialect, clock);
      ({ server, superuser, mainId, otherId } = world);
      Object.assign(member, world.member);
      Object.assign(outsider, world.outsider);
    });

    after(async () => {
      await server.close();
    });

    function create(
      user: TestUser,
      instituteId: Scalar,
      params: Record<string, Scalar>,
      as?: 'form',
    ): Promise<HttpAnswer> {
      return user.client.v3(
        'POST',
        USERS,
        { institute_id: instituteId, ...params },
        as === undefined ? {} : { as },
      );
    }

    /** Creates a user through the API as the institute's administrator; returns record and client. */
    async function created(
      params: Record<string, Scalar> = {},
      by: TestUser = member.administrator,
      instituteId: number = mainId,
    ): Promise<{ record: Json; client: ApiClient }> {
      const answer = await create(by, instituteId, {
        email: newEmail(),
        name: 'New User',
        role: 'teacher',
        ...params,
      });
      assert.equal(answer.status, 201, answer.text);
      const record = userIn(answer);
      const client = new ApiClient(server.baseUrl, {
        apiToken: String(record.api_token),
        secretKey: String(record.secret_key),
      });
      return { record, client };
    }

    function show(user: TestUser, instituteId: Scalar, id: Scalar): Promise<HttpAnswer> {
      return user.client.v3('GET', USER, { institute_id: instituteId, id });
    }

    async function stored(id: number): Promise<Json> {
      const row = await server.app.database.db
        .selectFrom('users')
        .select('institute_id')
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      const answer = await show(superuser, row.institute_id, id);
      assert.equal(answer.status, 200, answer.text);
      return userIn(answer);
    }

    async function userRow(id: number) {
      return server.app.database.db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
    }

    async function identityProvider(instituteId: number | null, name: string): Promise<number> {
      const now = clock.now();
      const row = await server.app.database.db
        .insertInto('identity_providers')
        .values({
          institute_id: instituteId,
          name,
          protocol: 'oidc',
          metadata: '{}',
          created_at: now,
          updated_at: now,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      return row.id;
    }

    describe('POST /api/v3/institutes/:institute_id/users', () => {
      it('answers 201 to an administrator with the record and, this once, the credentials', async () => {
        const email = newEmail('teacher');
        const answer = await create(member.administrator, mainId, {
          email,
          name: 'Tess Teacher',
          role: 'teacher',
        });
        assert.equal(answer.status, 201, answer.text);
        assert.deepEqual(Object.keys(object(answer.json, 'body')), ['user']);
        const user = userIn(answer);
        assert.deepEqual(Object.keys(user), [...USER_FIELDS, 'api_token', 'secret_key']);
        assert.ok(Number.isInteger(user.id) && (user.id as number) > 0);
        assert.equal(user.institute_id, mainId);
        const institute = await server.app.database.db
          .selectFrom('institutes')
          .select('name')
          .where('id', '=', mainId)
          .executeTakeFirstOrThrow();
        assert.equal(
          user.institute_name,
          institute.name,
          "the institute's name, as clients of the original read it",
        );
        assert.equal(user.logo_image, null, 'institutes have no logo');
        assert.equal(user.email, email);
        assert.equal(user.name, 'Tess Teacher');
        assert.equal(user.role, 'teacher');
        assert.equal(user.identity_provider_id, null);
        assert.equal(user.active, true);
        assert.match(String(user.created_at), ISO_MILLIS);
        assert.equal(user.created_at, new Date(clock.now()).toISOString());
        assert.equal(user.updated_at, user.created_at);
        assert.match(String(user.api_token), /^[0-9a-f]{32}$/);
        assert.match(String(user.secret_key), /^[0-9a-f]{48}$/);
      });

      it('issues credentials that sign calls as the new user', async () => {
        const { record, client } = await created({ role: 'teacher' });
        const exam = await client.v3('POST', '/exams', {
          name: 'By the new user',
          type: 'demo',
          duration_minutes: 5,
        });
        assert.equal(exam.status, 201, exam.text);
        assert.equal(object(object(exam.json, 'body').exam, 'exam').user_id, record.id);
      });

      it('keeps the credentials out of the database in the clear', async () => {
        const { record } = await created();
        const row = await userRow(record.id as number);
        assert.ok(row !== undefined);
        assert.notEqual(row.api_token_hash, record.api_token);
        assert.ok(!row.secret_key_encrypted.includes(String(record.secret_key)));
      });

      it('never shows the credentials again: show, list and update answers leave them out', async () => {
        const { record } = await created();
        const id = record.id as number;
        const shown = userIn(await show(member.administrator, mainId, id));
        assert.deepEqual(Object.keys(shown), [...USER_FIELDS]);
        const listed = usersIn(await member.administrator.client.v3('GET', USERS, { institute_id: mainId }));
        for (const user of listed) {
          assert.ok(
            !Object.hasOwn(user, 'api_token') && !Object.hasOwn(user, 'secret_key'),
            'list has no credentials',
          );
        }
        const updated = await member.administrator.client.v3('PATCH', USER, {
          institute_id: mainId,
          id,
          name: 'Changed',
        });
        assert.deepEqual(Object.keys(userIn(updated)), [...USER_FIELDS]);
      });

      it('reads a form-encoded body', async () => {
        const email = newEmail('form');
        const answer = await create(
          member.administrator,
          mainId,
          { email, name: 'Form User', role: 'auditor' },
          'form',
        );
        assert.equal(answer.status, 201, answer.text);
        assert.equal(userIn(answer).role, 'auditor');
      });

      it('trims the email it is sent', async () => {
        const email = newEmail('trim');
        const answer = await create(member.administrator, mainId, {
          email: `  ${email} `,
          name: 'Trim',
          role: 'teacher',
        });
        assert.equal(answer.status, 201, answer.text);
        assert.equal(userIn(answer).email, email);
      });

      for (const role of GRANTABLE_ROLES) {
        it(`lets an administrator create a ${role}`, async () => {
          const { record } = await created({ role });
          assert.equal(record.role, role);
        });
      }

      it('answers 403 to an administrator creating a superuser, and creates nothing', async () => {
        const email = newEmail('would-be-super');
        const answer = await create(member.administrator, mainId, { email, name: 'Nope', role: 'superuser' });
        assert.equal(answer.status, 403, answer.text);
        assert.deepEqual(answer.json, NOT_AUTHORIZED);
        const row = await server.app.database.db
          .selectFrom('users')
          .select('id')
          .where('email', '=', email)
          .executeTakeFirst();
        assert.equal(row, undefined);
      });

      it('lets a superuser create a superuser, in any institute', async () => {
        const { record, client } = await created({ role: 'superuser' }, superuser, otherId);
        assert.equal(record.role, 'superuser');
        assert.equal(record.institute_id, otherId);
        const list = await client.v3('GET', '/institutes');
        assert.equal(list.status, 200, list.text);
      });

      for (const field of ['email', 'name', 'role'] as const) {
        it(`answers 422 naming a missing ${field}`, async () => {
          const params: Record<string, Scalar> = { email: newEmail(), name: 'Someone', role: 'teacher' };
          delete params[field];
          const answer = await create(member.administrator, mainId, params);
          assert.equal(answer.status, 422, answer.text);
          assert.deepEqual(answer.json, missing(field));
        });

        for (const [label, value] of [
          ['empty', ''],
          ['blank', '  '],
          ['null', null],
        ] as const) {
          it(`answers 422 naming ${field} when it is ${label}`, async () => {
            const answer = await create(member.administrator, mainId, {
              email: newEmail(),
              name: 'Someone',
              role: 'teacher',
              [field]: value,
            });
            assert.equal(answer.status, 422, answer.text);
            assert.deepEqual(answer.json, missing(field));
          });
        }
      }

      for (const role of ['student', 'Teacher', 'admin']) {
        it(`answers 422 for the role ${role}, outside the list`, async () => {
          const answer = await create(member.administrator, mainId, { email: newEmail(), name: 'Odd', role });
          assert.equal(answer.status, 422, answer.text);
          assert.deepEqual(answer.json, invalid('role', 'is not included in the list'));
        });
      }

      for (const email of ['not-an-email', 'two words@example.org', '@example.org']) {
        it(`answers 422 naming the email for ${JSON.stringify(email)}`, async () => {
          const answer = await create(member.administrator, mainId, { email, name: 'Odd', role: 'teacher' });
          assert.equal(answer.status, 422, answer.text);
          assert.deepEqual(answer.json, invalid('email', 'is invalid'));
        });
      }

      it('answers 422 naming the email when it is taken in the same institute', async () => {
        const { record } = await created();
        const answer = await create(member.administrator, mainId, {
          email: record.email as string,
          name: 'Twin',
          role: 'teacher',
        });
        assert.equal(answer.status, 422, answer.text);
        assert.deepEqual(answer.json, TAKEN_EMAIL);
      });

      it('answers 422 naming the email when another institute uses it (emails are unique everywhere)', async () => {
        const answer = await create(member.administrator, mainId, {
          email: (await stored(outsider.teacher.id)).email as string,
          name: 'Twin',
          role: 'teacher',
        });
        assert.equal(answer.status, 422, answer.text);
        assert.deepEqual(answer.json, TAKEN_EMAIL);
      });

      it('lets only one of two concurrent creates with the same email win', async () => {
        const email = newEmail('race');
        const answers = await Promise.all([
          create(member.administrator, mainId, { email, name: 'One', role: 'teacher' }),
          create(superuser, mainId, { email, name: 'Two', role: 'teacher' }),
        ]);
        assert.deepEqual(
          answers.map((answer) => answer.status).sort(),
          [201, 422],
          answers.map((answer) => answer.text).join('\n'),
        );
        const loser = answers.find((answer) => answer.status === 422);
        assert.deepEqual(loser?.json, TAKEN_EMAIL);
      });

      it('accepts an identity provider of the institute and a global one', async () => {
        const own = await identityProvider(mainId, 'Main SSO');
        const global = await identityProvider(null, 'Global SSO');
        assert.equal((await created({ identity_provider_id: own })).record.identity_provider_id, own);
        assert.equal((await created({ identity_provider_id: global })).record.identity_provider_id, global);
        assert.equal((await created({ identity_provider_id: String(own) })).record.identity_provider_id, own);
      });

      it("answers 422 for another institute's identity provider, an unknown one, or one that is not an id", async () => {
        const foreign = await identityProvider(otherId, 'Other SSO');
        for (const value of [foreign, 999999, 'abc']) {
          const answer = await create(member.administrator, mainId, {
            email: newEmail(),
            name: 'SSO',
            role: 'teacher',
            identity_provider_id: value,
          });
          assert.equal(answer.status, 422, `${value}: ${answer.text}`);
          assert.deepEqual(
            answer.json,
            invalid('identity_provider_id', 'is not an identity provider of the institute'),
          );
        }
      });

      for (const role of NON_ADMIN_ROLES) {
        it(`answers 403 to ${article(role)} of the institute`, async () => {
          const email = newEmail();
          const answer = await create(member[role], mainId, { email, name: 'Nope', role: 'teacher' });
          assert.equal(answer.status, 403, answer.text);
          assert.deepEqual(answer.json, NOT_AUTHORIZED);
          const row = await server.app.database.db
            .selectFrom('users')
            .select('id')
            .where('email', '=', email)
            .executeTakeFirst();
          assert.equal(row, undefined);
        });
      }

      for (const role of MEMBER_ROLES) {
        it(`answers 404 naming the institute to ${article(role)} of another institute`, async () => {
          const answer = await create(outsider[role], mainId, {
            email: newEmail(),
            name: 'Nope',
            role: 'teacher',
          });
          assert.equal(answer.status, 404, answer.text);
          assert.deepEqual(answer.json, notFound('Institute', mainId));
        });
      }

      it('answers a superuser 404 for an unknown institute', async () => {
        for (const id of [999999, 'abc']) {
          const answer = await create(superuser, id, { email: newEmail(), name: 'Nope', role: 'teacher' });
          assert.equal(answer.status, 404, answer.text);
          assert.deepEqual(answer.json, notFound('Institute', id));
        }
      });
    });

    describe('GET /api/v3/institutes/:institute_id/users', () => {
      let listId: number;
      let listed: Json[];

      before(async () => {
        listId = await server.institute();
        const admin = await server.user(listId, 'administrator', newEmail('zed-admin'));
        listed = [await stored(admin.id)];
        for (const [name, role, label] of [
          ['Carol', 'teacher', 'carol'],
          ['alice', 'proctor', 'alice'],
          ['Bob', 'teacher', 'bob'],
        ] as const) {
          listed.push((await created({ name, role, email: newEmail(label) }, admin, listId)).record);
        }
        listed = listed.map(({ api_token: _token, secret_key: _secret, ...record }) => record);
      });

      const list = (user: TestUser, params: Record<string, Scalar> = {}) =>
        user.client.v3('GET', USERS, { institute_id: listId, ...params });
      const ids = (answer: HttpAnswer) => usersIn(answer).map((user) => user.id);

      it("lists the institute's users, by id, with full records and the pagination headers", async () => {
        const answer = await list(superuser);
        assert.deepEqual(Object.keys(object(answer.json, 'body')), ['users']);
        assert.deepEqual(usersIn(answer), listed);
        assert.equal(answer.headers['x-pagination-item-count'], '4');
        assert.equal(answer.headers['x-pagination-page-count'], '1');
        assert.equal(answer.headers['x-pagination-page'], '1');
        assert.equal(answer.headers['x-pagination-limit'], '300');
      });

      it("lists only its own institute's users to an administrator", async () => {
        const answer = await member.administrator.client.v3('GET', USERS, { institute_id: mainId });
        const users = usersIn(answer);
        assert.ok(users.length >= MEMBER_ROLES.length);
        for (const user of users) assert.equal(user.institute_id, mainId);
        const userIds = users.map((user) => user.id);
        for (const role of MEMBER_ROLES) {
          assert.ok(userIds.includes(member[role].id), `lists the ${role}`);
          assert.ok(!userIds.includes(outsider[role].id), `leaves out the other institute's ${role}`);
        }
      });

      it('answers one page of limit items', async () => {
        const answer = await list(superuser, { page: 2, limit: 3 });
        assert.deepEqual(ids(answer), [listed[3]?.id]);
        assert.equal(answer.headers['x-pagination-item-count'], '4');
        assert.equal(answer.headers['x-pagination-page-count'], '2');
        assert.equal(answer.headers['x-pagination-page'], '2');
        assert.equal(answer.headers['x-pagination-limit'], '3');
      });

      it('filters on role, email and name', async () => {
        assert.deepEqual(
          ids(await list(superuser, { filter: JSON.stringify({ role: { eq: 'teacher' } }) })),
          [listed[1]?.id, listed[3]?.id],
        );
        assert.deepEqual(
          ids(await list(superuser, { filter: JSON.stringify({ email: { like: 'ALICE' } }) })),
          [listed[2]?.id],
        );
        assert.deepEqual(
          ids(await list(superuser, { filter: JSON.stringify({ name: { in: ['Bob', 'Carol'] } }) })),
          [listed[1]?.id, listed[3]?.id],
        );
        assert.deepEqual(
          ids(
            await list(superuser, {
              filter: JSON.stringify({ id: { gt: listed[1]?.id }, role: { not_eq: 'proctor' } }),
            }),
          ),
          [listed[3]?.id],
        );
        assert.deepEqual(
          ids(
            await list(superuser, {
              filter: JSON.stringify({ created_at: { lte: new Date(clock.now()).toISOString() } }),
            }),
          ),
          listed.map((user) => user.id),
        );
      });

      it('sorts by name, role and id', async () => {
        assert.deepEqual(
          ids(await list(superuser, { sort: JSON.stringify([{ id: 'desc' }]) })),
          [...listed.map((user) => user.id)].reverse(),
        );
        const byRole = await list(superuser, { sort: JSON.stringify([{ role: 'asc' }, { name: 'desc' }]) });
        assert.deepEqual(ids(byRole), [listed[0]?.id, listed[2]?.id, listed[1]?.id, listed[3]?.id]);
        const byEmail = await list(superuser, { sort: JSON.stringify([{ email: 'asc' }]), limit: 1 });
        assert.deepEqual(ids(byEmail), [listed[2]?.id]);
      });

      it('answers 422 naming an unknown filter or sort field', async () => {
        const filter = await list(superuser, { filter: JSON.stringify({ secret_key: { eq: 'x' } }) });
        assert.deepEqual(filter.json, invalid('filter', 'has an unknown field: secret_key'));
        const sort = await list(superuser, { sort: JSON.stringify([{ api_token_hash: 'asc' }]) });
        assert.deepEqual(sort.json, invalid('sort', 'has an unknown field: api_token_hash'));
      });

      for (const role of NON_ADMIN_ROLES) {
        it(`answers 403 to ${article(role)} of the institute`, async () => {
          const answer = await member[role].client.v3('GET', USERS, { institute_id: mainId });
          assert.equal(answer.status, 403, answer.text);
          assert.deepEqual(answer.json, NOT_AUTHORIZED);
        });
      }

      for (const role of MEMBER_ROLES) {
        it(`answers 404 naming the institute to ${article(role)} of another institute`, async () => {
          const answer = await outsider[role].client.v3('GET', USERS, { institute_id: mainId });
          assert.equal(answer.status, 404, answer.text);
          assert.deepEqual(answer.json, notFound('Institute', mainId));
        });
      }
    });

    describe('GET /api/v3/institutes/:institute_id/users/:id', () => {
      it('answers an administrator with a user of its institute', async () => {
        const answer = await show(member.administrator, mainId, member.teacher.id);
        assert.equal(answer.status, 200, answer.text);
        assert.deepEqual(Object.keys(object(answer.json, 'body')), ['user']);
        const user = userIn(answer);
        assert.deepEqual(Object.keys(user), [...USER_FIELDS]);
        assert.equal(user.id, member.teacher.id);
        assert.equal(user.role, 'teacher');
        assert.equal(user.institute_id, mainId);
      });

      it('answers a superuser with a user of any institute', async () => {
        const answer = await show(superuser, otherId, outsider.auditor.id);
        assert.equal(answer.status, 200, answer.text);
        assert.equal(userIn(answer).id, outsider.auditor.id);
      });

      it("answers 404 naming the user for another institute's user under this institute's path", async () => {
        for (const user of [member.administrator, superuser]) {
          const answer = await show(user, mainId, outsider.teacher.id);
          assert.equal(answer.status, 404, answer.text);
          assert.deepEqual(answer.json, notFound('User', outsider.teacher.id));
        }
      });

      for (const id of [999999, 'abc', '0', '99999999999']) {
        it(`answers 404 naming the user as sent for ${JSON.stringify(id)}`, async () => {
          const answer = await show(member.administrator, mainId, id);
          assert.equal(answer.status, 404, answer.text);
          assert.deepEqual(answer.json, notFound('User', id));
        });
      }

      for (const role of NON_ADMIN_ROLES) {
        it(`answers 403 to ${article(role)} of the institute, even about itself`, async () => {
          for (const id of [member.administrator.id, member[role].id]) {
            const answer = await show(member[role], mainId, id);
            assert.equal(answer.status, 403, answer.text);
            assert.deepEqual(answer.json, NOT_AUTHORIZED);
          }
        });
      }

      for (const role of MEMBER_ROLES) {
        it(`answers 404 naming the institute to ${article(role)} of another institute`, async () => {
          const answer = await show(outsider[role], mainId, member.teacher.id);
          assert.equal(answer.status, 404, answer.text);
          assert.deepEqual(answer.json, notFound('Institute', mainId));
        });
      }
    });

    for (const method of ['PATCH', 'PUT'] as const) {
      describe(`${method} /api/v3/institutes/:institute_id/users/:id`, () => {
        function update(
          user: TestUser,
          id: Scalar,
          params: Record<string, Scalar>,
          instituteId: Scalar = mainId,
        ): Promise<HttpAnswer> {
          return user.client.v3(method, USER, { institute_id: instituteId, id, ...params });
        }

        it('changes only what is sent and keeps the rest', async () => {
          const { record } = await created({ role: 'teacher', name: 'Before' });
          const id = record.id as number;
          clock.current += 1000;
          const email = newEmail('after');
          const answer = await update(member.administrator, id, { name: 'After', email, role: 'reviewer' });
          assert.equal(answer.status, 200, answer.text);
          assert.deepEqual(Object.keys(object(answer.json, 'body')), ['user']);
          const user = userIn(answer);
          assert.equal(user.name, 'After');
          assert.equal(user.email, email);
          assert.equal(user.role, 'reviewer');
          assert.equal(user.institute_id, mainId);
          assert.equal(user.active, true);
          assert.equal(user.created_at, record.created_at);
          assert.equal(user.updated_at, new Date(clock.now()).toISOString());
          assert.deepEqual(await stored(id), user);
          const renamed = await update(member.administrator, id, { name: 'Only the name' });
          assert.equal(userIn(renamed).email, email);
          assert.equal(userIn(renamed).role, 'reviewer');
        });

        it('sets and clears the identity provider', async () => {
          const { record } = await created();
          const id = record.id as number;
          const own = await identityProvider(mainId, `Main SSO ${method}`);
          const set = await update(member.administrator, id, { identity_provider_id: own });
          assert.equal(userIn(set).identity_provider_id, own);
          const foreign = await identityProvider(otherId, `Other SSO ${method}`);
          const refused = await update(member.administrator, id, { identity_provider_id: foreign });
          assert.deepEqual(
            refused.json,
            invalid('identity_provider_id', 'is not an identity provider of the institute'),
          );
          const cleared = await update(member.administrator, id, { identity_provider_id: null });
          assert.equal(userIn(cleared).identity_provider_id, null);
        });

        for (const field of ['email', 'name', 'role'] as const) {
          it(`answers 422 naming ${field} when it is emptied, and changes nothing`, async () => {
            const { record } = await created();
            const before = await stored(record.id as number);
            const answer = await update(member.administrator, record.id as number, { [field]: '' });
            assert.equal(answer.status, 422, answer.text);
            assert.deepEqual(answer.json, missing(field));
            assert.deepEqual(await stored(record.id as number), before);
          });
        }

        it('answers 422 for a role outside the list', async () => {
          const answer = await update(member.administrator, member.teacher.id, { role: 'janitor' });
          assert.deepEqual(answer.json, invalid('role', 'is not included in the list'));
        });

        it("answers 422 naming the email when it is another user's, and changes nothing", async () => {
          const { record } = await created();
          const before = await stored(record.id as number);
          const answer = await update(member.administrator, record.id as number, {
            email: (await stored(member.teacher.id)).email as string,
          });
          assert.equal(answer.status, 422, answer.text);
          assert.deepEqual(answer.json, TAKEN_EMAIL);
          assert.deepEqual(await stored(record.id as number), before);
        });

        it('accepts the email the user already has', async () => {
          const { record } = await created();
          const answer = await update(member.administrator, record.id as number, {
            email: record.email as string,
          });
          assert.equal(answer.status, 200, answer.text);
        });

        it('answers 403 to an administrator granting superuser, and changes nothing', async () => {
          const { record } = await created();
          const answer = await update(member.administrator, record.id as number, { role: 'superuser' });
          assert.equal(answer.status, 403, answer.text);
          assert.deepEqual(answer.json, NOT_AUTHORIZED);
          assert.equal((await stored(record.id as number)).role, 'teacher');
        });

        it("answers 403 to an administrator changing a superuser's account, and changes nothing", async () => {
          const { record } = await created({ role: 'superuser' }, superuser);
          const id = record.id as number;
          const changes: Record<string, Scalar>[] = [
            { role: 'teacher' },
            { active: false },
            { name: 'Renamed' },
          ];
          for (const params of changes) {
            const answer = await update(member.administrator, id, params);
            assert.equal(answer.status, 403, answer.text);
            assert.deepEqual(answer.json, NOT_AUTHORIZED);
          }
          const user = await stored(id);
          assert.equal(user.role, 'superuser');
          assert.equal(user.active, true);
        });

        it('lets a superuser grant superuser', async () => {
          const { record } = await created();
          const answer = await update(superuser, record.id as number, { role: 'superuser' });
          assert.equal(answer.status, 200, answer.text);
          assert.equal(userIn(answer).role, 'superuser');
        });

        it('deactivates a user, whose next signed call is refused, and reactivates it', async () => {
          const { record, client } = await created({ role: 'teacher' });
          const id = record.id as number;
          assert.equal((await client.v3('GET', '/exams')).status, 200);
          const off = await update(member.administrator, id, { active: false });
          assert.equal(off.status, 200, off.text);
          assert.equal(userIn(off).active, false);
          const refused = await client.v3('GET', '/exams');
          assert.equal(refused.status, 403, refused.text);
          assert.deepEqual(refused.json, NOT_AUTHORIZED);
          const write = await client.v3('POST', '/exams', { name: 'x', type: 'demo', duration_minutes: 5 });
          assert.equal(write.status, 403, write.text);
          assert.deepEqual(write.json, NOT_AUTHORIZED);
          const listed = usersIn(
            await member.administrator.client.v3('GET', USERS, {
              institute_id: mainId,
              filter: JSON.stringify({ active: { eq: false }, id: { eq: id } }),
            }),
          );
          assert.deepEqual(
            listed.map((user) => user.id),
            [id],
            'a deactivated user is listed, filterable by active',
          );
          const on = await update(member.administrator, id, { active: 'true' });
          assert.equal(on.status, 200, on.text);
          assert.equal(userIn(on).active, true);
          const accepted = await client.v3('GET', '/exams');
          assert.equal(accepted.status, 200, accepted.text);
        });

        it('answers 422 for an active value that is not a boolean', async () => {
          const answer = await update(member.administrator, member.teacher.id, { active: 'maybe' });
          assert.deepEqual(answer.json, invalid('active', 'must be one of true, false, 1, 0'));
        });

        it('answers 422 to an administrator deactivating itself, which stays active', async () => {
          const admin = await server.user(mainId, 'administrator');
          const answer = await update(admin, admin.id, { active: false });
          assert.equal(answer.status, 422, answer.text);
          assert.deepEqual(answer.json, invalid('active', 'cannot be false for the calling user'));
          assert.equal((await stored(admin.id)).active, true);
          assert.equal((await admin.client.v3('GET', USERS, { institute_id: mainId })).status, 200);
        });

        it('answers 422 to an administrator changing its own role, and lets it change its name', async () => {
          const admin = await server.user(mainId, 'administrator');
          const answer = await update(admin, admin.id, { role: 'teacher' });
          assert.equal(answer.status, 422, answer.text);
          assert.deepEqual(answer.json, invalid('role', 'cannot be changed by the calling user'));
          assert.equal((await stored(admin.id)).role, 'administrator');
          const renamed = await update(admin, admin.id, {
            name: 'Renamed Admin',
            role: 'administrator',
            active: true,
          });
          assert.equal(renamed.status, 200, renamed.text);
          assert.equal(userIn(renamed).name, 'Renamed Admin');
        });

        it("answers 404 naming the user for another institute's user under this path", async () => {
          const answer = await update(superuser, outsider.teacher.id, { name: 'Moved?' });
          assert.equal(answer.status, 404, answer.text);
          assert.deepEqual(answer.json, notFound('User', outsider.teacher.id));
        });

        it('answers 404 naming the user for an unknown id', async () => {
          const answer = await update(member.administrator, 'u1', { name: 'Ghost' });
          assert.deepEqual(answer.json, notFound('User', 'u1'));
        });

        for (const role of NON_ADMIN_ROLES) {
          it(`answers 403 to ${article(role)} of the institute, even about itself, and changes nothing`, async () => {
            const before = await stored(member[role].id);
            const changes: Record<string, Scalar>[] = [{ name: 'Self-renamed' }, { role: 'administrator' }];
            for (const params of changes) {
              const answer = await update(member[role], member[role].id, params);
              assert.equal(answer.status, 403, answer.text);
              assert.deepEqual(answer.json, NOT_AUTHORIZED);
            }
            assert.deepEqual(await stored(member[role].id), before);
          });
        }

        for (const role of MEMBER_ROLES) {
          it(`answers 404 naming the institute to ${article(role)} of another institute`, async () => {
            const answer = await update(outsider[role], member.teacher.id, { name: 'Hijacked' });
            assert.equal(answer.status, 404, answer.text);
            assert.deepEqual(answer.json, notFound('Institute', mainId));
          });
        }
      });
    }

    describe('DELETE /api/v3/institutes/:institute_id/users/:id', () => {
      function destroy(user: TestUser, id: Scalar, instituteId: Scalar = mainId): Promise<HttpAnswer> {
        return user.client.v3('DELETE', USER, { institute_id: instituteId, id });
      }

      it('answers 200 with an empty object; the user, its nonces and co-manager rows are gone', async () => {
        const { db } = server.app.database;
        const { record, client } = await created({ role: 'teacher' });
        const id = record.id as number;
        assert.equal((await client.v3('GET', '/exams')).status, 200, 'the user has signed a call (a nonce)');
        const exam = await member.administrator.client.v3('POST', '/exams', {
          name: 'Co-managed',
          type: 'demo',
          duration_minutes: 5,
        });
        const examId = object(object(exam.json, 'body').exam, 'exam').id as number;
        await db
          .insertInto('exam_comanagers')
          .values({ exam_id: examId, user_id: id, created_at: clock.now() })
          .execute();
        const answer = await destroy(member.administrator, id);
        assert.equal(answer.status, 200, answer.text);
        assert.deepEqual(answer.json, {});
        assert.equal(await userRow(id), undefined);
        assert.deepEqual(
          await db.selectFrom('nonces').select('user_id').where('user_id', '=', id).execute(),
          [],
        );
        assert.deepEqual(
          await db.selectFrom('exam_comanagers').select('user_id').where('user_id', '=', id).execute(),
          [],
        );
        assert.ok(
          await db.selectFrom('exams').select('id').where('id', '=', examId).executeTakeFirst(),
          'the exam stays',
        );
      });

      it("refuses the destroyed user's signed calls with 403", async () => {
        const { record, client } = await created({ role: 'administrator' });
        assert.equal((await client.v3('GET', USERS, { institute_id: mainId })).status, 200);
        assert.equal((await destroy(superuser, record.id as number)).status, 200);
        const refused = await client.v3('GET', USERS, { institute_id: mainId });
        assert.equal(refused.status, 403, refused.text);
        assert.deepEqual(refused.json, NOT_AUTHORIZED);
      });

      it('then answers 404 naming the user on show, update and a second destroy', async () => {
        const { record } = await created();
        const id = record.id as number;
        await destroy(member.administrator, id);
        assert.deepEqual((await show(member.administrator, mainId, id)).json, notFound('User', id));
        const update = await member.administrator.client.v3('PATCH', USER, {
          institute_id: mainId,
          id,
          name: 'x',
        });
        assert.deepEqual(update.json, notFound('User', id));
        const again = await destroy(member.administrator, id);
        assert.equal(again.status, 404, again.text);
        assert.deepEqual(again.json, notFound('User', id));
      });

      it('unassigns the user from the student sessions it proctored', async () => {
        const { db } = server.app.database;
        const { record } = await created({ role: 'proctor' });
        const id = record.id as number;
        const exam = await member.teacher.client.v3('POST', '/exams', {
          name: 'Proctored',
          type: 'demo',
          duration_minutes: 5,
        });
        const examId = object(object(exam.json, 'body').exam, 'exam').id as number;
        const session = await member.teacher.client.v3('POST', '/exams/:exam_id/student_sessions', {
          exam_id: examId,
          name: 'Stu',
          email: newEmail('stu'),
        });
        const sessionId = object(object(session.json, 'body').student, 'student').id as number;
        await db
          .updateTable('student_sessions')
          .set({ proctor_id: id })
          .where('id', '=', sessionId)
          .execute();
        assert.equal((await destroy(member.administrator, id)).status, 200);
        const row = await db
          .selectFrom('student_sessions')
          .select('proctor_id')
          .where('id', '=', sessionId)
          .executeTakeFirstOrThrow();
        assert.equal(row.proctor_id, null);
      });

      it('answers 422 for a user who owns exams, deleted ones included, and keeps it', async () => {
        const { record, client } = await created({ role: 'teacher' });
        const id = record.id as number;
        const exam = await client.v3('POST', '/exams', { name: 'Owned', type: 'demo', duration_minutes: 5 });
        const examId = object(object(exam.json, 'body').exam, 'exam').id as number;
        const refused = await destroy(member.administrator, id);
        assert.equal(refused.status, 422, refused.text);
        assert.deepEqual(refused.json, { error: 'Cannot delete record because dependent exams exist' });
        assert.equal((await client.v3('DELETE', '/exams/:id', { id: examId })).status, 200);
        const still = await destroy(member.administrator, id);
        assert.equal(still.status, 422, still.text);
        assert.deepEqual(still.json, { error: 'Cannot delete record because dependent exams exist' });
        assert.ok(await userRow(id));
        assert.equal((await client.v3('GET', '/exams')).status, 200, 'the user still signs calls');
      });

      it('answers 422 to an administrator destroying itself, which stays', async () => {
        const admin = await server.user(mainId, 'administrator');
        const answer = await destroy(admin, admin.id);
        assert.equal(answer.status, 422, answer.text);
        assert.deepEqual(answer.json, { error: 'Cannot delete the calling user' });
        assert.ok(await userRow(admin.id));
      });

      it('answers 403 to an administrator destroying a superuser of its institute', async () => {
        const { record } = await created({ role: 'superuser' }, superuser);
        const answer = await destroy(member.administrator, record.id as number);
        assert.equal(answer.status, 403, answer.text);
        assert.deepEqual(answer.json, NOT_AUTHORIZED);
        assert.ok(await userRow(record.id as number));
      });

      it('lets a superuser destroy a user of any institute', async () => {
        const { record } = await created({}, superuser, otherId);
        const answer = await destroy(superuser, record.id as number, otherId);
        assert.equal(answer.status, 200, answer.text);
        assert.equal(await userRow(record.id as number), undefined);
      });

      it("answers 404 naming the user for another institute's user under this path, and keeps it", async () => {
        const answer = await destroy(superuser, outsider.reviewer.id);
        assert.equal(answer.status, 404, answer.text);
        assert.deepEqual(answer.json, notFound('User', outsider.reviewer.id));
        assert.ok(await userRow(outsider.reviewer.id));
      });

      for (const role of NON_ADMIN_ROLES) {
        it(`answers 403 to ${article(role)} of the institute and destroys nothing`, async () => {
          const { record } = await created();
          const answer = await destroy(member[role], record.id as number);
          assert.equal(answer.status, 403, answer.text);
          assert.deepEqual(answer.json, NOT_AUTHORIZED);
          assert.ok(await userRow(record.id as number));
        });
      }

      for (const role of MEMBER_ROLES) {
        it(`answers 404 naming the institute to ${article(role)} of another institute and destroys nothing`, async () => {
          const { record } = await created();
          const answer = await destroy(outsider[role], record.id as number);
          assert.equal(answer.status, 404, answer.text);
          assert.deepEqual(answer.json, notFound('Institute', mainId));
          assert.ok(await userRow(record.id as number));
        });
      }
    });
  });
}
