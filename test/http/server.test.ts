import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { httpRequest } from '../helpers/http.ts';
import { DIALECTS, startTestServer, type TestServer } from '../helpers/server.ts';

for (const dialect of DIALECTS) {
  describe(`service endpoints [${dialect}]`, () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer(dialect);
    });
    after(async () => {
      await server.close();
    });

    it('GET /healthz answers 200 {"status":"ok"} without authentication', async () => {
      const answer = await httpRequest({ url: `${server.baseUrl}/healthz` });
      assert.equal(answer.status, 200);
      assert.deepEqual(answer.json, { status: 'ok' });
    });

    it('GET /api/openapi.json describes the signed routes', async () => {
      const answer = await httpRequest({ url: `${server.baseUrl}/api/openapi.json` });
      assert.equal(answer.status, 200);
      const document = answer.json as { openapi: string; paths: Record<string, Record<string, unknown>> };
      assert.match(document.openapi, /^3\./);
      assert.ok(document.paths['/api/v3/exams']?.get);
      assert.ok(document.paths['/api/v3/exams']?.post);
      assert.ok(document.paths['/api/v3/exams/{id}']?.patch);
      assert.ok(document.paths['/api/v3/exams/{id}']?.put);
      assert.ok(document.paths['/api/v3/exams/{id}']?.delete);
      assert.ok(document.paths['/api/exams']?.get);
      assert.equal(document.paths['/healthz'], undefined);
    });

    it('GET /api/docs serves a docs page whose scripts and styles all come from this server', async () => {
      const page = await httpRequest({ url: `${server.baseUrl}/api/docs` });
      assert.equal(page.status, 200);
      assert.match(page.text, /swagger-ui/i);
      assert.match(String(page.headers['content-type']), /text\/html/);
      const external = [...page.text.matchAll(/(?:src|href)="(https?:[^"]+)"/g)].map((match) => match[1]);
      assert.deepEqual(external, []);
      const spec = await httpRequest({ url: `${server.baseUrl}/api/docs/json` });
      assert.equal(spec.status, 200);
    });

    it('answers an unknown V3 path with a JSON 404 and an unknown V2 path with an empty 404', async () => {
      const v3 = await httpRequest({ url: `${server.baseUrl}/api/v3/nothing-here` });
      assert.equal(v3.status, 404);
      assert.deepEqual(v3.json, { error: 'Not Found' });
      const v2 = await httpRequest({ url: `${server.baseUrl}/api/nothing-here` });
      assert.equal(v2.status, 404);
      assert.equal(v2.text, '');
    });

    it('answers 503 from /healthz once the database is gone', async () => {
      const spare = await startTestServer(dialect);
      try {
        await spare.app.database.destroy();
        const answer = await httpRequest({ url: `${spare.baseUrl}/healthz` });
        assert.equal(answer.status, 503);
      } finally {
        await spare.app.server.close();
        await spare.database.drop();
      }
    });
  });
}
