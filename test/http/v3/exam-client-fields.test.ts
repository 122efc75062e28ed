import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { HttpAnswer } from '../../helpers/http.ts';
import { object } from '../../helpers/json.ts';
import { DIALECTS, startTestServer, type TestServer } from '../../helpers/server.ts';
import { startLoggedServer } from '../auth/support.ts';

type Json = Record<string, unknown>;
type TestUser = Awaited<ReturnType<TestServer['user']>>;

function examIn(answer: HttpAnswer, status = 200): Json {
  assert.equal(answer.status, status, answer.text);
  return object(object(answer.json, 'body').exam, 'exam');
}

/**
 * The exam fields clients of the original service read (docs/api-v3-exams.md): the stored ones
 * (global_proctoring, global_reviewing, exam_language, timezone, terms, archived) and the derived
 * ones (mode, live_proctoring, published); and the X-Ignored-Params header naming what a V3 route
 * does not know.
 */
for (const dialect of DIALECTS) {
  describe(`V3 exam fields real clients read [${dialect}]`, () => {
    let server: TestServer;
    let teacher: TestUser;

    before(async () => {
      server = await startTestServer(dialect);
      const instituteId = (
        await server.app.services.institutes.create({
          name: `Clients ${dialect} ${Date.now()}`,
          short_name: 'CLI',
          default_language: 'nl',
        })
      ).id;
      teacher = await server.user(instituteId, 'teacher');
    });
    after(async () => server.close());

    const create = (params: Record<string, string | number | boolean | null>) =>
      teacher.client.v3('POST', '/exams', {
        name: 'Client fields',
        type: 'record_review',
        duration_minutes: 60,
        ...params,
      });

    it("gives a new exam the institute's language, UTC, no terms, and the three flags off", async () => {
      const exam = examIn(await create({}), 201);
      assert.deepEqual(
        {
          exam_language: exam.exam_language,
          timezone: exam.timezone,
          terms: exam.terms,
          global_proctoring: exam.global_proctoring,
          global_reviewing: exam.global_reviewing,
          archived: exam.archived,
        },
        {
          exam_language: 'nl',
          timezone: 'UTC',
          terms: null,
          global_proctoring: false,
          global_reviewing: false,
          archived: false,
        },
      );
    });

    it('stores the writable fields, as JSON and as form text, and shows them again', async () => {
      const sent = {
        global_proctoring: true,
        global_reviewing: true,
        exam_language: 'de-CH',
        timezone: 'Europe/Amsterdam',
        terms: 'No phones. No notes.',
        archived: true,
      };
      const exam = examIn(await create(sent), 201);
      for (const [name, value] of Object.entries(sent)) assert.equal(exam[name], value, name);
      const shown = examIn(await teacher.client.v3('GET', '/exams/:id', { id: Number(exam.id) }));
      assert.deepEqual(shown, exam);
      const form = examIn(
        await teacher.client.v3(
          'POST',
          '/exams',
          { name: 'Form', type: 'classroom', duration_minutes: 5, global_reviewing: '1', archived: 'false' },
          { as: 'form' },
        ),
        201,
      );
      assert.equal(form.global_reviewing, true);
      assert.equal(form.archived, false);
    });

    it('writes a language tag and a zone name in their listed spelling', async () => {
      const exam = examIn(await create({ exam_language: 'fr_ch', timezone: 'europe/berlin' }), 201);
      assert.equal(exam.exam_language, 'fr-CH');
      assert.equal(exam.timezone, 'Europe/Berlin');
    });

    const refusals: [string, Record<string, string | number | boolean | null>, string, string][] = [
      ['an unsupported language', { exam_language: 'xx-YY' }, 'exam_language', 'is not included in the list'],
      [
        'a malformed language tag',
        { exam_language: 'not a tag' },
        'exam_language',
        'is not a valid language tag',
      ],
      ['a blank language', { exam_language: '' }, 'exam_language', "can't be blank"],
      [
        'a zone that does not exist',
        { timezone: 'Mars/Olympus' },
        'timezone',
        'is not an IANA time zone name',
      ],
      ['a UTC offset for a zone', { timezone: '+01:00' }, 'timezone', 'is not an IANA time zone name'],
      ['a null zone', { timezone: null }, 'timezone', "can't be blank"],
      [
        'a flag that is no boolean',
        { global_proctoring: 'maybe' },
        'global_proctoring',
        'must be one of true, false, 1, 0',
      ],
      [
        'an archive flag that is no boolean',
        { archived: 'yes' },
        'archived',
        'must be one of true, false, 1, 0',
      ],
    ];
    for (const [what, params, field, rule] of refusals) {
      it(`answers 422 naming ${field} for ${what}`, async () => {
        const answer = await create(params);
        assert.equal(answer.status, 422, answer.text);
        assert.deepEqual(object(answer.json, 'body').errors, { [field]: [rule] });
      });
    }

    it('derives mode, live_proctoring and published from type and status, read-only', async () => {
      const expected: Record<string, string> = {
        demo: '01000000',
        classroom: '00100000',
        record_review: '00010000',
        live_proctoring: '00001000',
      };
      for (const [type, mode] of Object.entries(expected)) {
        const exam = examIn(
          await create({ type, mode: '11111111', live_proctoring: false, published: false }),
          201,
        );
        assert.equal(exam.mode, mode, type);
        assert.equal(exam.live_proctoring, type === 'live_proctoring', type);
        assert.equal(exam.published, true, `${type}: an open exam is published`);
      }
      const draft = examIn(await create({ status: 'draft' }), 201);
      assert.equal(draft.published, false);
      const closed = examIn(
        await teacher.client.v3('PATCH', '/exams/:id', { id: Number(draft.id), status: 'closed' }),
      );
      assert.equal(closed.published, true);
    });

    it('updates the writable fields and filters and sorts on them', async () => {
      const marker = `Archive ${Date.now()}`;
      const exam = examIn(await create({ name: marker }), 201);
      const updated = examIn(
        await teacher.client.v3('PUT', '/exams/:id', {
          id: Number(exam.id),
          archived: true,
          terms: 'Updated terms',
          timezone: 'America/New_York',
        }),
      );
      assert.equal(updated.archived, true);
      assert.equal(updated.terms, 'Updated terms');
      assert.equal(updated.timezone, 'America/New_York');
      assert.equal(updated.exam_language, 'nl', 'what is not sent stays');
      const cleared = examIn(
        await teacher.client.v3('PATCH', '/exams/:id', { id: Number(exam.id), terms: '' }),
      );
      assert.equal(cleared.terms, null);
      const listed = await teacher.client.v3('GET', '/exams', {
        filter: JSON.stringify({ archived: { eq: true }, name: { eq: marker } }),
      });
      assert.equal(listed.status, 200, listed.text);
      const ids = (object(listed.json, 'body').exams as Json[]).map((item) => item.id);
      assert.deepEqual(ids, [exam.id]);
      const sorted = await teacher.client.v3('GET', '/exams', {
        sort: JSON.stringify([{ timezone: 'desc' }]),
        filter: JSON.stringify({ exam_language: { eq: 'nl' } }),
      });
      assert.equal(sorted.status, 200, sorted.text);
      const zones = (object(sorted.json, 'body').exams as Json[]).map((item) => String(item.timezone));
      assert.deepEqual(zones, [...zones].sort().reverse());
      assert.ok(zones.includes('America/New_York'));
    });

    describe('X-Ignored-Params', () => {
      it('names a misspelt field and leaves the real one untouched', async () => {
        const answer = await create({ webcam: true });
        const exam = examIn(answer, 201);
        assert.equal(answer.headers['x-ignored-params'], 'webcam');
        assert.equal(exam.web_cam, false);
      });

      it('lists several, sorted and comma-separated, from the query and the body alike', async () => {
        const answer = await teacher.client.v3('GET', '/exams', {
          zeta: 1,
          alpha: 2,
          Beta: 3,
          page: 1,
          limit: 5,
        });
        assert.equal(answer.status, 200, answer.text);
        assert.equal(answer.headers['x-ignored-params'], 'Beta, alpha, zeta');
      });

      it('is absent when every parameter is known: signing, list and route parameters included', async () => {
        const listed = await teacher.client.v3('GET', '/exams', {
          page: 1,
          limit: 2,
          sort: '[{"id":"asc"}]',
        });
        assert.equal(listed.status, 200);
        assert.equal(listed.headers['x-ignored-params'], undefined);
        const created = await create({ web_cam: true, duration: 30, upload_exam: true });
        assert.equal(created.status, 201);
        assert.equal(created.headers['x-ignored-params'], undefined, 'the older spellings are known');
      });

      it('names list parameters sent to a route that has no list', async () => {
        const exam = examIn(await create({}), 201);
        const answer = await teacher.client.v3('GET', '/exams/:id', { id: Number(exam.id), page: 2 });
        assert.equal(answer.status, 200);
        assert.equal(answer.headers['x-ignored-params'], 'page');
      });

      it('percent-encodes names a header cannot hold', async () => {
        const answer = await create({ 'wéb cam,x': true });
        assert.equal(answer.status, 201, answer.text);
        assert.equal(answer.headers['x-ignored-params'], 'w%C3%A9b%20cam%2Cx');
      });

      it('copes with a name no header can hold, even a lone surrogate, and with very many names', async () => {
        const params: Record<string, number> = { '\ud800': 1 };
        for (let index = 0; index < 30; index += 1) params[`extra${String(index).padStart(2, '0')}`] = index;
        const answer = await create(params);
        assert.equal(answer.status, 201, answer.text);
        const names = String(answer.headers['x-ignored-params']).split(', ');
        assert.equal(names.length, 21);
        assert.equal(names[0], 'extra00');
        assert.equal(names[20], '(+11 more)');
      });

      it('is a V3 header: V2 ignores extras silently', async () => {
        const answer = await teacher.client.v2('GET', '/exams', { zeta: 1 });
        assert.equal(answer.status, 200);
        assert.equal(answer.headers['x-ignored-params'], undefined);
      });
    });
  });
}

describe('X-Ignored-Params in the debug log', () => {
  it('logs the ignored names with the path, never the query string', async () => {
    const logged = await startLoggedServer('sqlite');
    try {
      const instituteId = (
        await logged.server.app.services.institutes.create({ name: `Log ${Date.now()}`, short_name: 'LOG' })
      ).id;
      const { credentials } = await logged.server.app.services.users.create(instituteId, {
        email: `log-${Date.now()}@example.org`,
        name: 'Log',
        role: 'teacher',
      });
      const { ApiClient } = await import('../../helpers/client.ts');
      const client = new ApiClient(logged.baseUrl, credentials);
      const answer = await client.v3('GET', '/exams', { webcam: 'secret-value' });
      assert.equal(answer.status, 200, answer.text);
      const line = logged.lines.find((text) => text.includes('ignored parameters'));
      assert.ok(line !== undefined, 'the ignored parameters are logged');
      const entry = JSON.parse(line) as Json;
      assert.deepEqual(entry.ignored, ['webcam']);
      assert.equal(entry.path, '/api/v3/exams');
      assert.equal(line.includes('secret-value'), false, 'values are not logged');
    } finally {
      await logged.close();
    }
  });
});
