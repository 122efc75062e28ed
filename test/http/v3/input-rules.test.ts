import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { acceptsV3 } from '../../../src/http/v3/index.ts';
import { invalid } from '../../helpers/answers.ts';
import type { ApiClient } from '../../helpers/client.ts';
import { object } from '../../helpers/json.ts';
import { DIALECTS, startTestServer, type TestServer } from '../../helpers/server.ts';

describe('the V3 Accept header is read as a list of media types', () => {
  const accepted = [
    'application/vnd.procwise.v3',
    'application/vnd.service.v3',
    'APPLICATION/VND.PROCWISE.V3',
    'application/vnd.procwise.v3; charset=utf-8',
    'application/vnd.procwise.v3;q=0.5',
    'application/json, application/vnd.procwise.v3',
    'text/html;q=0.1 , application/vnd.service.v3 ;q=1',
    'application/vnd.procwise.v3+json',
  ];
  const refused = [
    'application/vnd.procwise.v33',
    'application/vnd.procwise.v3x',
    'xapplication/vnd.procwise.v3',
    'application/vnd.procwise.v3;q=0',
    'application/vnd.procwise.v2',
    '*/*',
    'application/*',
    'application/json',
    '',
  ];
  for (const header of accepted)
    it(`accepts ${JSON.stringify(header)}`, () => assert.equal(acceptsV3(header), true));
  for (const header of refused)
    it(`refuses ${JSON.stringify(header)}`, () => assert.equal(acceptsV3(header), false));
  it('refuses a request without the header', () => assert.equal(acceptsV3(undefined), false));
});

for (const dialect of DIALECTS) {
  describe(`input rules of step 7 [${dialect}]`, () => {
    let server: TestServer;
    let superuser: ApiClient;
    let instituteId: number;

    before(async () => {
      server = await startTestServer(dialect);
      instituteId = await server.institute();
      superuser = (await server.user(instituteId, 'superuser')).client;
    });
    after(() => server.close());

    it('answers 406 over HTTP to an Accept that only contains the V3 type as a substring', async () => {
      const answer = await superuser.v3(
        'GET',
        '/exams',
        {},
        { headers: { accept: 'application/vnd.procwise.v33' } },
      );
      assert.equal(answer.status, 406);
      const listed = await superuser.v3(
        'GET',
        '/exams',
        {},
        { headers: { accept: 'text/plain, application/vnd.procwise.v3;q=0.9' } },
      );
      assert.equal(listed.status, 200, listed.text);
    });

    it('refuses a user email that differs from a taken one only in letter case, on create and update', async () => {
      const first = await superuser.v3('POST', '/institutes/:institute_id/users', {
        institute_id: instituteId,
        email: 'admA@a.test',
        name: 'First',
        role: 'teacher',
      });
      assert.equal(first.status, 201, first.text);
      const again = await superuser.v3('POST', '/institutes/:institute_id/users', {
        institute_id: instituteId,
        email: 'ADMA@a.test',
        name: 'Second',
        role: 'teacher',
      });
      assert.equal(again.status, 422, again.text);
      assert.deepEqual(again.json, invalid('email', 'has already been taken'));
      const other = await superuser.v3('POST', '/institutes/:institute_id/users', {
        institute_id: instituteId,
        email: 'other@a.test',
        name: 'Other',
        role: 'teacher',
      });
      assert.equal(other.status, 201, other.text);
      const otherId = Number(object(object(other.json, 'body').user, 'user').id);
      const moved = await superuser.v3('PATCH', '/institutes/:institute_id/users/:id', {
        institute_id: instituteId,
        id: otherId,
        email: 'adma@A.TEST',
      });
      assert.equal(moved.status, 422, moved.text);
      assert.deepEqual(moved.json, invalid('email', 'has already been taken'));
    });

    describe('default_language', () => {
      const create = (language: string) =>
        superuser.v3('POST', '/institutes', {
          name: `Lang ${language} ${Math.random().toString(36).slice(2, 8)}`,
          short_name: 'L',
          default_language: language,
        });

      for (const [sent, kept] of [
        ['en', 'en'],
        ['de-CH', 'de-CH'],
        ['fr', 'fr'],
        ['EN-gb', 'en-GB'],
        ['es-419', 'es-419'],
        ['de_AT', 'de-AT'],
      ] as const) {
        it(`keeps ${sent} as ${kept}`, async () => {
          const answer = await create(sent);
          assert.equal(answer.status, 201, answer.text);
          assert.equal(object(object(answer.json, 'body').institute, 'institute').default_language, kept);
        });
      }

      for (const language of ['xx', 'klingon', 'pt-BR', 'zz-CH', 'constructor']) {
        it(`answers 422 'is not included in the list' for ${language}`, async () => {
          const answer = await create(language);
          assert.equal(answer.status, 422, answer.text);
          const expected = /^[A-Za-z]{2,3}(?:-[A-Za-z]{2})?$/.test(language)
            ? 'is not included in the list'
            : 'is not a valid language tag';
          assert.deepEqual(answer.json, invalid('default_language', expected));
        });
      }
    });
  });
}
