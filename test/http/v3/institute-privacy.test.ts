import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
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
import { article, invalid, NOT_AUTHORIZED, notFound } from '../../helpers/answers.ts';

type Json = Record<string, unknown>;

/** The four settings the room's privacy panel reads (migration 0028_privacy_notice). */
const PRIVACY_FIELDS = ['privacy_contact', 'dpo_name', 'dpo_email', 'appeal_period_days'] as const;

function instituteIn(answer: HttpAnswer): Json {
  return object(object(answer.json, 'body').institute, 'institute');
}

let sequence = 0;
function uniqueName(): string {
  sequence += 1;
  return `Privacy ${sequence} ${Math.random().toString(36).slice(2, 8)}`;
}

for (const dialect of DIALECTS) {
  describe(`V3 institutes: privacy contact, data protection officer, appeal period [${dialect}]`, () => {
    const clock = new TestClock(Math.floor(Date.now() / 1000) * 1000);
    let server: TestServer;
    let superuser: TestUser;
    let mainId: number;
    const member = {} as Record<MemberRole, TestUser>;
    const outsider = {} as Record<MemberRole, TestUser>;

    before(async () => {
      const world = await startInstituteWorld(dialect, clock);
      ({ server, superuser, mainId } = world);
      Object.assign(member, world.member);
      Object.assign(outsider, world.outsider);
    });

    after(async () => {
      await server.close();
    });

    function update(user: TestUser, id: Scalar, params: Record<string, Scalar>): Promise<HttpAnswer> {
      return user.client.v3('PATCH', '/institutes/:id', { id, ...params });
    }

    async function stored(id: number): Promise<Json> {
      const answer = await superuser.client.v3('GET', '/institutes/:id', { id });
      assert.equal(answer.status, 200, answer.text);
      return instituteIn(answer);
    }

    describe('POST /api/v3/institutes', () => {
      it('gives a new institute no contact, no officer and a 14-day appeal period', async () => {
        const answer = await superuser.client.v3('POST', '/institutes', {
          name: uniqueName(),
          short_name: 'P',
        });
        assert.equal(answer.status, 201, answer.text);
        const institute = instituteIn(answer);
        assert.equal(institute.privacy_contact, null);
        assert.equal(institute.dpo_name, null);
        assert.equal(institute.dpo_email, null);
        assert.equal(institute.appeal_period_days, 14);
      });

      it('keeps the four settings it is sent, trimmed', async () => {
        const answer = await superuser.client.v3('POST', '/institutes', {
          name: uniqueName(),
          short_name: 'P',
          privacy_contact: '  privacy@uni.example.org ',
          dpo_name: 'Dr. Ada Lovelace',
          dpo_email: 'dpo@uni.example.org',
          appeal_period_days: 30,
        });
        assert.equal(answer.status, 201, answer.text);
        const institute = instituteIn(answer);
        assert.equal(institute.privacy_contact, 'privacy@uni.example.org');
        assert.equal(institute.dpo_name, 'Dr. Ada Lovelace');
        assert.equal(institute.dpo_email, 'dpo@uni.example.org');
        assert.equal(institute.appeal_period_days, 30);
        assert.deepEqual(await stored(institute.id as number), institute);
      });
    });

    describe('PATCH /api/v3/institutes/:id', () => {
      it('lets an administrator set and clear them; only what is sent changes', async () => {
        const answer = await update(member.administrator, mainId, {
          privacy_contact: 'https://uni.example.org/privacy',
          dpo_name: 'Grace Hopper',
          dpo_email: 'grace@uni.example.org',
          appeal_period_days: 0,
        });
        assert.equal(answer.status, 200, answer.text);
        const institute = instituteIn(answer);
        assert.equal(institute.privacy_contact, 'https://uni.example.org/privacy');
        assert.equal(institute.dpo_name, 'Grace Hopper');
        assert.equal(institute.dpo_email, 'grace@uni.example.org');
        assert.equal(institute.appeal_period_days, 0);

        const cleared = await update(member.administrator, mainId, { dpo_name: '', dpo_email: null });
        assert.equal(cleared.status, 200, cleared.text);
        const after = instituteIn(cleared);
        assert.equal(after.dpo_name, null);
        assert.equal(after.dpo_email, null);
        assert.equal(after.privacy_contact, 'https://uni.example.org/privacy');
        assert.equal(after.appeal_period_days, 0);
        assert.deepEqual(await stored(mainId), after);
      });

      it('reads the appeal period from a form-encoded body', async () => {
        const answer = await member.administrator.client.v3(
          'PATCH',
          '/institutes/:id',
          { id: mainId, appeal_period_days: '365' },
          { as: 'form' },
        );
        assert.equal(answer.status, 200, answer.text);
        assert.equal(instituteIn(answer).appeal_period_days, 365);
      });

      const refusals: [string, Scalar, Record<string, unknown>][] = [
        ['appeal_period_days', -1, invalid('appeal_period_days', 'must be greater than or equal to 0')],
        ['appeal_period_days', 366, invalid('appeal_period_days', 'must be less than or equal to 365')],
        ['appeal_period_days', 1.5, invalid('appeal_period_days', 'is not a number')],
        ['appeal_period_days', 'two weeks', invalid('appeal_period_days', 'is not a number')],
        ['appeal_period_days', null, invalid('appeal_period_days', 'is not a number')],
        ['dpo_email', 'not an address', invalid('dpo_email', 'is invalid')],
        ['dpo_name', 'x'.repeat(501), invalid('dpo_name', 'is too long (maximum is 500 characters)')],
        [
          'privacy_contact',
          'x'.repeat(501),
          invalid('privacy_contact', 'is too long (maximum is 500 characters)'),
        ],
      ];
      for (const [field, value, body] of refusals) {
        const label = typeof value === 'string' && value.length > 20 ? `${value.length} characters` : value;
        it(`answers 422 naming ${field} for ${JSON.stringify(label)}, and changes nothing`, async () => {
          const before = await stored(mainId);
          const answer = await update(member.administrator, mainId, { [field]: value });
          assert.equal(answer.status, 422, answer.text);
          assert.deepEqual(answer.json, body);
          assert.deepEqual(await stored(mainId), before);
        });
      }

      for (const role of NON_ADMIN_ROLES) {
        it(`answers 403 to ${article(role)} of the institute and changes nothing`, async () => {
          const before = await stored(mainId);
          const answer = await update(member[role], mainId, { dpo_email: 'attacker@evil.example' });
          assert.equal(answer.status, 403, answer.text);
          assert.deepEqual(answer.json, NOT_AUTHORIZED);
          assert.deepEqual(await stored(mainId), before);
        });
      }

      for (const role of MEMBER_ROLES) {
        it(`answers 404 to ${article(role)} of another institute and changes nothing`, async () => {
          const before = await stored(mainId);
          const answer = await update(outsider[role], mainId, { appeal_period_days: 1 });
          assert.equal(answer.status, 404, answer.text);
          assert.deepEqual(answer.json, notFound('Institute', mainId));
          assert.deepEqual(await stored(mainId), before);
        });
      }

      it('answers 403 to an unsigned call and changes nothing', async () => {
        const before = await stored(mainId);
        const answer = await member.administrator.client.v3(
          'PATCH',
          '/institutes/:id',
          { id: mainId, appeal_period_days: 1 },
          { unsigned: true },
        );
        assert.equal(answer.status, 403, answer.text);
        assert.deepEqual(answer.json, NOT_AUTHORIZED);
        assert.deepEqual(await stored(mainId), before);
      });
    });

    it('shows the four settings to the institute administrator', async () => {
      const answer = await member.administrator.client.v3('GET', '/institutes/:id', { id: mainId });
      assert.equal(answer.status, 200, answer.text);
      for (const field of PRIVACY_FIELDS) assert.ok(Object.hasOwn(instituteIn(answer), field), field);
    });
  });
}
