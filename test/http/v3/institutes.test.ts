import { instituteOfSession } from '../../../src/domain/data-keys/data-keys.repository.ts';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import type { Role } from '../../../src/domain/access.ts';
import type { HttpAnswer } from '../../helpers/http.ts';
import { SAMPLE, v3Multipart } from '../../helpers/multipart.ts';
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

/** Every field of the V3 institute record (contract §6), in order. */
const INSTITUTE_FIELDS = [
  'id',
  'name',
  'short_name',
  'callback_url',
  'check_requirements_emails_enabled',
  'reminder_emails_enabled',
  'exam_link_emails_enabled',
  'exam_changed_emails_enabled',
  'exam_finalized_emails_enabled',
  'session_retention_period',
  'default_language',
  'require_second_factor_for_administrators',
  'second_review_required',
  'privacy_contact',
  'dpo_name',
  'dpo_email',
  'appeal_period_days',
  'created_at',
  'updated_at',
] as const;

const EMAIL_SWITCHES = [
  'check_requirements_emails_enabled',
  'reminder_emails_enabled',
  'exam_link_emails_enabled',
  'exam_changed_emails_enabled',
  'exam_finalized_emails_enabled',
] as const;

function instituteIn(answer: HttpAnswer): Json {
  return object(object(answer.json, 'body').institute, 'institute');
}

function institutesIn(answer: HttpAnswer): Json[] {
  assert.equal(answer.status, 200, answer.text);
  const list = object(answer.json, 'body').institutes;
  assert.ok(Array.isArray(list), 'institutes is an array');
  return list.map((item) => object(item, 'institute'));
}

let sequence = 0;
function uniqueName(label = 'Institute'): string {
  sequence += 1;
  return `${label} ${sequence} ${Math.random().toString(36).slice(2, 8)}`;
}

for (const dialect of DIALECTS) {
  describe(`V3 institutes [${dialect}]`, () => {
    const clock = new TestClock(Math.floor(Date.now() / 1000) * 1000);
    let server: TestServer;
    /** The superuser's own institute. */
    let homeId: number;
    let superuser: TestUser;
    /** The institute most tests act on, with one member of every role. */
    let mainId: number;
    const member = {} as Record<MemberRole, TestUser>;
    /** Another institute, with one member of every role. */
    let otherId: number;
    const outsider = {} as Record<MemberRole, TestUser>;

    before(async () => {
      const world = await startInstituteWorld(dialect, clock);
      ({ server, homeId, superuser, mainId, otherId } = world);
      Object.assign(member, world.member);
      Object.assign(outsider, world.outsider);
    });

    after(async () => {
      await server.close();
    });

    function create(user: TestUser, params: Record<string, Scalar>, as?: 'form'): Promise<HttpAnswer> {
      return user.client.v3('POST', '/institutes', params, as === undefined ? {} : { as });
    }

    async function created(params: Record<string, Scalar> = {}): Promise<Json> {
      const answer = await create(superuser, { name: uniqueName(), short_name: 'NEW', ...params });
      assert.equal(answer.status, 201, answer.text);
      return instituteIn(answer);
    }

    function show(user: TestUser, id: Scalar): Promise<HttpAnswer> {
      return user.client.v3('GET', '/institutes/:id', { id });
    }

    async function stored(id: number): Promise<Json> {
      const answer = await show(superuser, id);
      assert.equal(answer.status, 200, answer.text);
      return instituteIn(answer);
    }

    async function instituteCount(): Promise<number> {
      const row = await server.app.database.db
        .selectFrom('institutes')
        .select((eb) => eb.fn.countAll<number>().as('count'))
        .executeTakeFirstOrThrow();
      return Number(row.count);
    }

    describe('POST /api/v3/institutes', () => {
      it('answers 201 to a superuser with the full record and the documented defaults', async () => {
        const name = uniqueName();
        const answer = await create(superuser, { name, short_name: 'ACME' });
        assert.equal(answer.status, 201, answer.text);
        assert.deepEqual(Object.keys(object(answer.json, 'body')), ['institute']);
        const institute = instituteIn(answer);
        assert.deepEqual(Object.keys(institute), [...INSTITUTE_FIELDS]);
        assert.ok(Number.isInteger(institute.id) && (institute.id as number) > 0);
        assert.equal(institute.name, name);
        assert.equal(institute.short_name, 'ACME');
        assert.equal(institute.callback_url, null);
        for (const flag of EMAIL_SWITCHES) assert.equal(institute[flag], true, `${flag} defaults to true`);
        assert.equal(institute.session_retention_period, null);
        assert.equal(institute.default_language, 'en');
        assert.equal(institute.require_second_factor_for_administrators, false);
        assert.match(String(institute.created_at), ISO_MILLIS);
        assert.equal(institute.created_at, new Date(clock.now()).toISOString());
        assert.equal(institute.updated_at, institute.created_at);
        assert.deepEqual(await stored(institute.id as number), institute);
      });

      it('keeps every optional setting it is sent', async () => {
        const params: Record<string, Scalar> = {
          name: uniqueName(),
          short_name: 'OPT',
          callback_url: 'https://lms.example.org/hooks/invigil',
          session_retention_period: 30,
          default_language: 'de-CH',
        };
        for (const flag of EMAIL_SWITCHES) params[flag] = false;
        const institute = await created(params);
        for (const [name, value] of Object.entries(params)) assert.equal(institute[name], value, name);
      });

      it('reads a form-encoded body with booleans and numbers as strings', async () => {
        const answer = await create(
          superuser,
          {
            name: uniqueName('Form'),
            short_name: 'FRM',
            reminder_emails_enabled: '0',
            exam_link_emails_enabled: 'false',
            session_retention_period: '7',
          },
          'form',
        );
        assert.equal(answer.status, 201, answer.text);
        const institute = instituteIn(answer);
        assert.equal(institute.reminder_emails_enabled, false);
        assert.equal(institute.exam_link_emails_enabled, false);
        assert.equal(institute.check_requirements_emails_enabled, true);
        assert.equal(institute.session_retention_period, 7);
      });

      it('accepts a null session_retention_period (sessions are kept)', async () => {
        const institute = await created({ session_retention_period: null });
        assert.equal(institute.session_retention_period, null);
      });

      for (const field of ['name', 'short_name'] as const) {
        it(`answers 422 naming a missing ${field}`, async () => {
          const params: Record<string, Scalar> = { name: uniqueName(), short_name: 'S' };
          delete params[field];
          const before = await instituteCount();
          const answer = await create(superuser, params);
          assert.equal(answer.status, 422, answer.text);
          assert.deepEqual(answer.json, missing(field));
          assert.equal(await instituteCount(), before, 'nothing was created');
        });

        for (const [label, value] of [
          ['empty', ''],
          ['blank', '   '],
          ['null', null],
        ] as const) {
          it(`answers 422 naming ${field} when it is ${label}`, async () => {
            const answer = await create(superuser, { name: uniqueName(), short_name: 'S', [field]: value });
            assert.equal(answer.status, 422, answer.text);
            assert.deepEqual(answer.json, missing(field));
          });
        }
      }

      it('answers 422 naming the name when it is already taken, and keeps one institute of that name', async () => {
        const name = uniqueName('Taken');
        await created({ name });
        const answer = await create(superuser, { name, short_name: 'DUP' });
        assert.equal(answer.status, 422, answer.text);
        assert.deepEqual(answer.json, {
          error: "'name':['has already been taken']",
          errors: { name: ['has already been taken'] },
        });
        const list = institutesIn(
          await superuser.client.v3('GET', '/institutes', { filter: JSON.stringify({ name: { eq: name } }) }),
        );
        assert.equal(list.length, 1);
      });

      it('lets only one of two concurrent creates with the same name win', async () => {
        const name = uniqueName('Race');
        const answers = await Promise.all([
          create(superuser, { name, short_name: 'R1' }),
          create(superuser, { name, short_name: 'R2' }),
        ]);
        const statuses = answers.map((answer) => answer.status).sort();
        assert.deepEqual(statuses, [201, 422], answers.map((answer) => answer.text).join('\n'));
      });

      for (const value of [0, -1, 1.5, 'abc']) {
        it(`answers 422 naming session_retention_period for ${JSON.stringify(value)}`, async () => {
          const answer = await create(superuser, {
            name: uniqueName(),
            short_name: 'S',
            session_retention_period: value,
          });
          assert.equal(answer.status, 422, answer.text);
          const body = object(answer.json, 'body');
          assert.ok(Object.hasOwn(object(body.errors, 'errors'), 'session_retention_period'), answer.text);
          assert.match(String(body.error), /^'session_retention_period':\['.+'\]$/);
        });
      }

      for (const value of ['not a url', 'ftp://example.org/x', 'javascript:alert(1)']) {
        it(`answers 422 naming callback_url for ${value}`, async () => {
          const answer = await create(superuser, {
            name: uniqueName(),
            short_name: 'S',
            callback_url: value,
          });
          assert.equal(answer.status, 422, answer.text);
          assert.deepEqual(answer.json, invalid('callback_url', 'is not a valid URL'));
        });
      }

      it('answers 422 naming default_language when it is not a language tag or is blank', async () => {
        const bad = await create(superuser, {
          name: uniqueName(),
          short_name: 'S',
          default_language: 'english!',
        });
        assert.deepEqual(bad.json, invalid('default_language', 'is not a valid language tag'));
        const blank = await create(superuser, { name: uniqueName(), short_name: 'S', default_language: '' });
        assert.equal(blank.status, 422, blank.text);
        assert.deepEqual(blank.json, invalid('default_language', "can't be blank"));
      });

      it('answers 422 naming a mail switch that is not true, false, 1 or 0', async () => {
        const answer = await create(superuser, {
          name: uniqueName(),
          short_name: 'S',
          reminder_emails_enabled: 'sometimes',
        });
        assert.equal(answer.status, 422, answer.text);
        assert.deepEqual(answer.json, invalid('reminder_emails_enabled', 'must be one of true, false, 1, 0'));
      });

      for (const role of MEMBER_ROLES) {
        it(`answers 403 to ${article(role)} and creates nothing`, async () => {
          const before = await instituteCount();
          const answer = await create(member[role], { name: uniqueName(), short_name: 'NO' });
          assert.equal(answer.status, 403, answer.text);
          assert.deepEqual(answer.json, NOT_AUTHORIZED);
          assert.equal(await instituteCount(), before);
        });
      }

      it('answers 403 to an unsigned call, before reading the parameters', async () => {
        const answer = await superuser.client.v3('POST', '/institutes', { name: '' }, { unsigned: true });
        assert.equal(answer.status, 403, answer.text);
        assert.deepEqual(answer.json, NOT_AUTHORIZED);
      });
    });

    describe('GET /api/v3/institutes', () => {
      let listed: Json[];

      before(async () => {
        listed = [];
        for (const [label, language, retention] of [
          ['Listed Alpha', 'en', 10],
          ['Listed Beta', 'fr', 20],
          ['Listed Gamma', 'fr', null],
        ] as const) {
          listed.push(
            await created({
              name: `${label} ${dialect} ${Math.random().toString(36).slice(2, 6)}`,
              short_name: label.split(' ')[1] ?? 'L',
              default_language: language,
              session_retention_period: retention,
            }),
          );
        }
      });

      const ids = (answer: HttpAnswer) => institutesIn(answer).map((institute) => institute.id);

      it('lists every institute to a superuser, by id, with full records and the pagination headers', async () => {
        const answer = await superuser.client.v3('GET', '/institutes');
        const list = institutesIn(answer);
        assert.deepEqual(Object.keys(object(answer.json, 'body')), ['institutes']);
        const total = await instituteCount();
        assert.equal(list.length, total);
        const listedIds = list.map((institute) => institute.id as number);
        assert.deepEqual(
          listedIds,
          [...listedIds].sort((a, b) => a - b),
        );
        for (const id of [homeId, mainId, otherId]) assert.ok(listedIds.includes(id), `lists ${id}`);
        for (const institute of list) assert.deepEqual(Object.keys(institute), [...INSTITUTE_FIELDS]);
        assert.deepEqual(
          list.find((institute) => institute.id === listed[0]?.id),
          listed[0],
        );
        assert.equal(answer.headers['x-pagination-item-count'], String(total));
        assert.equal(answer.headers['x-pagination-page-count'], '1');
        assert.equal(answer.headers['x-pagination-page'], '1');
        assert.equal(answer.headers['x-pagination-limit'], '300');
      });

      it('answers one page of limit items with the headers', async () => {
        const total = await instituteCount();
        const answer = await superuser.client.v3('GET', '/institutes', { page: 2, limit: 2 });
        const all = ids(await superuser.client.v3('GET', '/institutes'));
        assert.deepEqual(ids(answer), all.slice(2, 4));
        assert.equal(answer.headers['x-pagination-item-count'], String(total));
        assert.equal(answer.headers['x-pagination-page-count'], String(Math.ceil(total / 2)));
        assert.equal(answer.headers['x-pagination-page'], '2');
        assert.equal(answer.headers['x-pagination-limit'], '2');
      });

      it('filters by name with like, case-insensitively', async () => {
        const answer = await superuser.client.v3('GET', '/institutes', {
          filter: JSON.stringify({ name: { like: `listed` }, default_language: { eq: 'fr' } }),
        });
        const names = institutesIn(answer).map((institute) => institute.name);
        assert.deepEqual(names, [listed[1]?.name, listed[2]?.name]);
        assert.equal(answer.headers['x-pagination-item-count'], '2');
      });

      it('filters on null and sorts by several keys', async () => {
        const none = await superuser.client.v3('GET', '/institutes', {
          filter: JSON.stringify({ id: { in: listed.map((institute) => institute.id) } }),
          sort: JSON.stringify([{ default_language: 'desc' }, { session_retention_period: 'desc' }]),
        });
        assert.deepEqual(ids(none), [listed[2]?.id, listed[1]?.id, listed[0]?.id]);
        const kept = await superuser.client.v3('GET', '/institutes', {
          filter: JSON.stringify({
            id: { in: listed.map((institute) => institute.id) },
            session_retention_period: { null: true },
          }),
        });
        assert.deepEqual(ids(kept), [listed[2]?.id]);
      });

      it('sorts by name descending and by created_at', async () => {
        const answer = await superuser.client.v3('GET', '/institutes', {
          filter: JSON.stringify({ id: { in: listed.map((institute) => institute.id) } }),
          sort: JSON.stringify([{ name: 'desc' }]),
        });
        assert.deepEqual(ids(answer), [listed[2]?.id, listed[1]?.id, listed[0]?.id]);
        const byTime = await superuser.client.v3('GET', '/institutes', {
          filter: JSON.stringify({ created_at: { lte: new Date(clock.now()).toISOString() } }),
          sort: JSON.stringify([{ created_at: 'asc' }]),
        });
        assert.equal(byTime.status, 200, byTime.text);
      });

      it('answers 422 naming an unknown filter field, operator or sort field', async () => {
        const field = await superuser.client.v3('GET', '/institutes', {
          filter: JSON.stringify({ colour: { eq: 'red' } }),
        });
        assert.deepEqual(field.json, invalid('filter', 'has an unknown field: colour'));
        const op = await superuser.client.v3('GET', '/institutes', {
          filter: JSON.stringify({ name: { near: 'x' } }),
        });
        assert.deepEqual(op.json, invalid('filter', 'has an unknown operator: near'));
        const sort = await superuser.client.v3('GET', '/institutes', {
          sort: JSON.stringify([{ colour: 'asc' }]),
        });
        assert.deepEqual(sort.json, invalid('sort', 'has an unknown field: colour'));
        const json = await superuser.client.v3('GET', '/institutes', { filter: '{nope' });
        assert.deepEqual(json.json, invalid('filter', 'is not valid JSON'));
      });

      for (const role of MEMBER_ROLES) {
        it(`answers 403 to ${article(role)}`, async () => {
          const answer = await member[role].client.v3('GET', '/institutes');
          assert.equal(answer.status, 403, answer.text);
          assert.deepEqual(answer.json, NOT_AUTHORIZED);
        });
      }
    });

    describe('GET /api/v3/institutes/:id', () => {
      it('answers a superuser with any institute', async () => {
        const answer = await show(superuser, mainId);
        assert.equal(answer.status, 200, answer.text);
        assert.deepEqual(Object.keys(object(answer.json, 'body')), ['institute']);
        const institute = instituteIn(answer);
        assert.equal(institute.id, mainId);
        assert.deepEqual(Object.keys(institute), [...INSTITUTE_FIELDS]);
      });

      it('answers an administrator with its own institute', async () => {
        const answer = await show(member.administrator, mainId);
        assert.equal(answer.status, 200, answer.text);
        assert.deepEqual(instituteIn(answer), await stored(mainId));
      });

      for (const role of NON_ADMIN_ROLES) {
        it(`answers 403 to ${article(role)} of the institute`, async () => {
          const answer = await show(member[role], mainId);
          assert.equal(answer.status, 403, answer.text);
          assert.deepEqual(answer.json, NOT_AUTHORIZED);
        });
      }

      for (const role of MEMBER_ROLES) {
        it(`answers 404 to ${article(role)} of another institute, as if it did not exist`, async () => {
          const answer = await show(outsider[role], mainId);
          assert.equal(answer.status, 404, answer.text);
          assert.deepEqual(answer.json, notFound('Institute', mainId));
        });
      }

      for (const id of [999999, 'abc', '0', '99999999999']) {
        it(`answers 404 naming the id as sent for ${JSON.stringify(id)}`, async () => {
          const answer = await show(superuser, id);
          assert.equal(answer.status, 404, answer.text);
          assert.deepEqual(answer.json, notFound('Institute', id));
        });
      }

      it('answers an administrator 404, not 403, for an unknown id', async () => {
        const answer = await show(member.administrator, 999999);
        assert.equal(answer.status, 404, answer.text);
        assert.deepEqual(answer.json, notFound('Institute', 999999));
      });
    });

    for (const method of ['PATCH', 'PUT'] as const) {
      describe(`${method} /api/v3/institutes/:id`, () => {
        function update(user: TestUser, id: Scalar, params: Record<string, Scalar>): Promise<HttpAnswer> {
          return user.client.v3(method, '/institutes/:id', { id, ...params });
        }

        it('lets an administrator change its own institute: only what is sent changes', async () => {
          const before = await stored(mainId);
          clock.current += 1000;
          const answer = await update(member.administrator, mainId, {
            short_name: `${method}-S`,
            callback_url: 'https://lms.example.org/callback',
            reminder_emails_enabled: false,
            session_retention_period: 90,
            default_language: 'nl',
          });
          assert.equal(answer.status, 200, answer.text);
          assert.deepEqual(Object.keys(object(answer.json, 'body')), ['institute']);
          const institute = instituteIn(answer);
          assert.equal(institute.short_name, `${method}-S`);
          assert.equal(institute.callback_url, 'https://lms.example.org/callback');
          assert.equal(institute.reminder_emails_enabled, false);
          assert.equal(institute.session_retention_period, 90);
          assert.equal(institute.default_language, 'nl');
          assert.equal(institute.name, before.name);
          assert.equal(institute.exam_link_emails_enabled, before.exam_link_emails_enabled);
          assert.equal(institute.created_at, before.created_at);
          assert.equal(institute.updated_at, new Date(clock.now()).toISOString());
          assert.deepEqual(await stored(mainId), institute);
        });

        it('clears callback_url and session_retention_period sent as null', async () => {
          await update(member.administrator, mainId, {
            callback_url: 'https://x.example.org',
            session_retention_period: 5,
          });
          const answer = await update(member.administrator, mainId, {
            callback_url: null,
            session_retention_period: null,
          });
          assert.equal(answer.status, 200, answer.text);
          assert.equal(instituteIn(answer).callback_url, null);
          assert.equal(instituteIn(answer).session_retention_period, null);
        });

        it('lets a superuser rename any institute', async () => {
          const target = await created();
          const name = uniqueName('Renamed');
          const answer = await update(superuser, target.id as number, { name });
          assert.equal(answer.status, 200, answer.text);
          assert.equal(instituteIn(answer).name, name);
        });

        it('keeps its own name when renamed to the name it has', async () => {
          const target = await created();
          const answer = await update(superuser, target.id as number, { name: target.name as string });
          assert.equal(answer.status, 200, answer.text);
        });

        it("answers 422 naming the name when it is another institute's, and changes nothing", async () => {
          const first = await created();
          const second = await created();
          const answer = await update(superuser, second.id as number, { name: first.name as string });
          assert.equal(answer.status, 422, answer.text);
          assert.deepEqual(answer.json, {
            error: "'name':['has already been taken']",
            errors: { name: ['has already been taken'] },
          });
          assert.equal((await stored(second.id as number)).name, second.name);
        });

        for (const field of ['name', 'short_name'] as const) {
          it(`answers 422 naming ${field} when it is emptied, and changes nothing`, async () => {
            const before = await stored(mainId);
            const answer = await update(member.administrator, mainId, { [field]: '' });
            assert.equal(answer.status, 422, answer.text);
            assert.deepEqual(answer.json, missing(field));
            assert.deepEqual(await stored(mainId), before);
          });
        }

        it('answers 422 naming session_retention_period for 0', async () => {
          const answer = await update(member.administrator, mainId, { session_retention_period: 0 });
          assert.equal(answer.status, 422, answer.text);
          assert.deepEqual(
            answer.json,
            invalid('session_retention_period', 'must be greater than or equal to 1'),
          );
        });

        for (const role of NON_ADMIN_ROLES) {
          it(`answers 403 to ${article(role)} of the institute and changes nothing`, async () => {
            const before = await stored(mainId);
            const answer = await update(member[role], mainId, { short_name: 'HACKED' });
            assert.equal(answer.status, 403, answer.text);
            assert.deepEqual(answer.json, NOT_AUTHORIZED);
            assert.deepEqual(await stored(mainId), before);
          });
        }

        for (const role of MEMBER_ROLES) {
          it(`answers 404 to ${article(role)} of another institute and changes nothing`, async () => {
            const before = await stored(mainId);
            const answer = await update(outsider[role], mainId, { short_name: 'HACKED' });
            assert.equal(answer.status, 404, answer.text);
            assert.deepEqual(answer.json, notFound('Institute', mainId));
            assert.deepEqual(await stored(mainId), before);
          });
        }

        it('answers 404 for an unknown id', async () => {
          const answer = await update(superuser, 'x1', { short_name: 'X' });
          assert.equal(answer.status, 404, answer.text);
          assert.deepEqual(answer.json, notFound('Institute', 'x1'));
        });
      });
    }

    describe('DELETE /api/v3/institutes/:id', () => {
      function destroy(user: TestUser, id: Scalar): Promise<HttpAnswer> {
        return user.client.v3('DELETE', '/institutes/:id', { id });
      }

      for (const role of MEMBER_ROLES) {
        it(`answers 403 to ${article(role)} of the institute and deletes nothing`, async () => {
          const answer = await destroy(member[role], mainId);
          assert.equal(answer.status, 403, answer.text);
          assert.deepEqual(answer.json, NOT_AUTHORIZED);
          assert.equal((await stored(mainId)).id, mainId);
        });

        it(`answers 404 to ${article(role)} of another institute and deletes nothing`, async () => {
          const answer = await destroy(outsider[role], mainId);
          assert.equal(answer.status, 404, answer.text);
          assert.deepEqual(answer.json, notFound('Institute', mainId));
          assert.equal((await stored(mainId)).id, mainId);
        });
      }

      it('answers 422 to a superuser destroying its own institute, which stays', async () => {
        const answer = await destroy(superuser, homeId);
        assert.equal(answer.status, 422, answer.text);
        assert.deepEqual(answer.json, { error: 'Cannot delete the institute the calling user belongs to' });
        assert.equal((await stored(homeId)).id, homeId);
      });

      for (const id of [999999, 'abc']) {
        it(`answers 404 naming the id as sent for ${JSON.stringify(id)}`, async () => {
          const answer = await destroy(superuser, id);
          assert.equal(answer.status, 404, answer.text);
          assert.deepEqual(answer.json, notFound('Institute', id));
        });
      }

      describe('by a superuser, of an institute with data', () => {
        let doomedId: number;
        const doomed = {} as Record<Role, TestUser>;
        let examIds: number[];
        let sessionIds: number[];
        let fileKeys: { id: number; storageKey: string }[];
        let keptExamId: number;
        let keptFileId: number;
        let answer: HttpAnswer;

        before(async () => {
          const { db } = server.app.database;
          const { files } = server.app.services;
          doomedId = (await created({ name: uniqueName('Doomed') })).id as number;
          for (const role of ['administrator', 'teacher', 'proctor', 'auditor'] as const) {
            doomed[role] = await server.user(doomedId, role);
          }
          const teacher = doomed.teacher;
          examIds = [];
          sessionIds = [];
          for (const name of ['Doomed exam 1', 'Doomed exam 2']) {
            const exam = await teacher.client.v3('POST', '/exams', {
              name,
              type: 'classroom',
              duration_minutes: 30,
            });
            assert.equal(exam.status, 201, exam.text);
            examIds.push(object(object(exam.json, 'body').exam, 'exam').id as number);
          }
          const [firstExam, secondExam] = examIds as [number, number];
          // A destroyed (status deleted) exam goes too.
          const gone = await teacher.client.v3('DELETE', '/exams/:id', { id: secondExam });
          assert.equal(gone.status, 200, gone.text);
          const upload = await v3Multipart(
            teacher.client,
            'POST',
            '/exams/:exam_id/attachments',
            { exam_id: firstExam },
            [{ field: 'document', fileName: 'rules.pdf', contentType: 'application/pdf', bytes: SAMPLE.pdf }],
          );
          assert.equal(upload.status, 201, upload.text);
          for (const email of ['ann@example.org', 'bob@example.org']) {
            const session = await teacher.client.v3('POST', '/exams/:exam_id/student_sessions', {
              exam_id: firstExam,
              name: email,
              email,
            });
            assert.equal(session.status, 201, session.text);
            sessionIds.push(object(object(session.json, 'body').student, 'student').id as number);
          }
          const [firstSession] = sessionIds as [number];
          const now = clock.now();
          // Files a student session points at, and a recording chunk (session_files).
          const idCard = await files.keepStream(Readable.from([Buffer.from('id card')]), {
            instituteId: (await instituteOfSession(server.app.database.db, firstSession)) ?? 0,
            originalName: 'id.png',
            contentType: 'image/png',
          });
          const chunk = await files.keepStream(Readable.from([Buffer.from('recording')]), {
            instituteId: (await instituteOfSession(server.app.database.db, firstSession)) ?? 0,
            originalName: 'chunk.webm',
            contentType: 'video/webm',
          });
          await db
            .updateTable('student_sessions')
            .set({ id_card_file_id: idCard.id, proctor_id: doomed.proctor.id })
            .where('id', '=', firstSession)
            .execute();
          await db
            .insertInto('session_files')
            .values({
              student_session_id: firstSession,
              kind: 'recording',
              file_id: chunk.id,
              sequence: 0,
              created_at: now,
            })
            .execute();
          await db
            .insertInto('exam_comanagers')
            .values({ exam_id: firstExam, user_id: doomed.administrator.id, created_at: now })
            .execute();
          await db
            .insertInto('outbox')
            .values({
              kind: 'exam_link',
              to_address: 'ann@example.org',
              subject: 'Your exam',
              text_body: 'x',
              html_body: 'x',
              status: 'pending',
              attempts: 0,
              next_attempt_at: now,
              student_session_id: firstSession,
              created_at: now,
            })
            .execute();
          const idp = await db
            .insertInto('identity_providers')
            .values({
              institute_id: doomedId,
              name: 'Doomed SSO',
              protocol: 'saml',
              metadata: '<x/>',
              created_at: now,
              updated_at: now,
            })
            .returning('id')
            .executeTakeFirstOrThrow();
          await db
            .updateTable('users')
            .set({ identity_provider_id: idp.id })
            .where('id', '=', teacher.id)
            .execute();
          const provider = await db
            .insertInto('tool_providers')
            .values({
              institute_id: doomedId,
              name: 'Doomed LMS',
              lti_version: '1.1',
              consumer_key: 'k',
              created_at: now,
              updated_at: now,
            })
            .returning('id')
            .executeTakeFirstOrThrow();
          await db
            .insertInto('lti_resources')
            .values({
              institute_id: doomedId,
              tool_provider_id: provider.id,
              exam_id: firstExam,
              resource_link_id: 'rl-1',
              created_at: now,
              updated_at: now,
            })
            .execute();
          // An exam of another institute: it and its file must survive.
          const keeper = await server.user(otherId, 'teacher');
          const kept = await keeper.client.v3('POST', '/exams', {
            name: 'Kept',
            type: 'demo',
            duration_minutes: 5,
          });
          keptExamId = object(object(kept.json, 'body').exam, 'exam').id as number;
          const keptUpload = await v3Multipart(
            keeper.client,
            'POST',
            '/exams/:exam_id/attachments',
            { exam_id: keptExamId },
            [{ field: 'document', fileName: 'kept.pdf', contentType: 'application/pdf', bytes: SAMPLE.pdf }],
          );
          assert.equal(keptUpload.status, 201, keptUpload.text);
          const keptAttachment = await db
            .selectFrom('attachments')
            .select('file_id')
            .where('exam_id', '=', keptExamId)
            .executeTakeFirstOrThrow();
          keptFileId = keptAttachment.file_id;
          const attachmentFiles = await db
            .selectFrom('attachments')
            .innerJoin('files', 'files.id', 'attachments.file_id')
            .select(['files.id', 'files.storage_key'])
            .where('attachments.exam_id', '=', firstExam)
            .execute();
          fileKeys = [
            ...attachmentFiles.map((row) => ({ id: row.id, storageKey: row.storage_key })),
            { id: idCard.id, storageKey: idCard.storageKey },
            { id: chunk.id, storageKey: chunk.storageKey },
          ];
          assert.equal(fileKeys.length, 3);
          answer = await destroy(superuser, doomedId);
        });

        it('answers 200 with an empty object', () => {
          assert.equal(answer.status, 200, answer.text);
          assert.deepEqual(answer.json, {});
        });

        it('then answers 404 on show, update and a second destroy', async () => {
          assert.deepEqual((await show(superuser, doomedId)).json, notFound('Institute', doomedId));
          const update = await superuser.client.v3('PATCH', '/institutes/:id', {
            id: doomedId,
            name: 'Back',
          });
          assert.equal(update.status, 404, update.text);
          const again = await destroy(superuser, doomedId);
          assert.equal(again.status, 404, again.text);
          assert.deepEqual(again.json, notFound('Institute', doomedId));
        });

        it('refuses every signed call of its users with 403', async () => {
          for (const role of ['administrator', 'teacher', 'proctor', 'auditor'] as const) {
            const call = await doomed[role].client.v3('GET', '/exams');
            assert.equal(call.status, 403, `${role}: ${call.text}`);
            assert.deepEqual(call.json, NOT_AUTHORIZED);
          }
        });

        it('leaves no row of the institute in the database', async () => {
          const { db } = server.app.database;
          const count = async (
            table: 'users' | 'exams' | 'identity_providers' | 'tool_providers' | 'lti_resources',
          ) => {
            const row = await db
              .selectFrom(table)
              .select((eb) => eb.fn.countAll<number>().as('count'))
              .where('institute_id', '=', doomedId)
              .executeTakeFirstOrThrow();
            return Number(row.count);
          };
          for (const table of [
            'users',
            'exams',
            'identity_providers',
            'tool_providers',
            'lti_resources',
          ] as const) {
            assert.equal(await count(table), 0, `${table} of the institute are gone`);
          }
          const userIds = Object.values(doomed).map((user) => user.id);
          assert.deepEqual(
            await db.selectFrom('exams').select('id').where('id', 'in', examIds).execute(),
            [],
          );
          for (const table of ['documents', 'attachments', 'exam_comanagers', 'exam_zip_exports'] as const) {
            const rows = await db
              .selectFrom(table)
              .select('exam_id')
              .where('exam_id', 'in', examIds)
              .execute();
            assert.deepEqual(rows, [], `${table} of its exams are gone`);
          }
          assert.deepEqual(
            await db.selectFrom('student_sessions').select('id').where('id', 'in', sessionIds).execute(),
            [],
          );
          for (const table of ['incidents', 'session_files', 'outbox'] as const) {
            const rows = await db
              .selectFrom(table)
              .select('student_session_id')
              .where('student_session_id', 'in', sessionIds)
              .execute();
            assert.deepEqual(rows, [], `${table} of its sessions are gone`);
          }
          assert.deepEqual(
            await db.selectFrom('nonces').select('user_id').where('user_id', 'in', userIds).execute(),
            [],
          );
          assert.deepEqual(
            await db
              .selectFrom('exam_comanagers')
              .select('user_id')
              .where('user_id', 'in', userIds)
              .execute(),
            [],
          );
          assert.deepEqual(
            await db
              .selectFrom('files')
              .select('id')
              .where(
                'id',
                'in',
                fileKeys.map((file) => file.id),
              )
              .execute(),
            [],
            'its file records are gone',
          );
        });

        it('removes its stored files from storage', async () => {
          const { files } = server.app.services;
          for (const file of fileKeys) {
            await assert.rejects(
              files.open({ ...file, originalName: 'x', contentType: 'x', size: 0, sha256: '', createdAt: 0 }),
              { name: 'StorageMissing' },
              `object ${file.storageKey} is removed`,
            );
          }
        });

        it("keeps every other institute's data", async () => {
          const { db } = server.app.database;
          assert.ok(
            await db.selectFrom('exams').select('id').where('id', '=', keptExamId).executeTakeFirst(),
          );
          const keptFile = await server.app.services.files.find(keptFileId);
          assert.ok(keptFile !== undefined, 'the other institute keeps its file record');
          const stream = await server.app.services.files.open(keptFile);
          stream.destroy();
          assert.equal((await show(member.administrator, mainId)).status, 200);
          assert.equal((await member.teacher.client.v3('GET', '/exams')).status, 200);
        });
      });
    });
  });
}
