import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, it } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import { livekitClientFile, registerLiveAssets } from '../../src/http/live/assets.routes.ts';
import { httpRequest } from '../helpers/http.ts';
import { DIALECTS, startTestServer, type TestServer } from '../helpers/server.ts';

const JAVASCRIPT = 'text/javascript; charset=utf-8';
const PAGE = new URL('../../src/http/live/page/', import.meta.url);

describe('GET /live/assets/:file', () => {
  let app: FastifyInstance;

  before(async () => {
    app = Fastify();
    registerLiveAssets(app);
    await app.ready();
  });
  after(() => app.close());

  for (const name of ['live-client.js', 'livekit.js']) {
    it(`serves ${name} from the live page folder, revalidated by its ETag`, async () => {
      const answer = await app.inject({ url: `/live/assets/${name}` });
      assert.equal(answer.statusCode, 200);
      assert.equal(answer.headers['content-type'], JAVASCRIPT);
      assert.equal(answer.headers['cache-control'], 'no-cache');
      assert.equal(answer.headers['x-content-type-options'], 'nosniff');
      assert.equal(answer.body, fs.readFileSync(new URL(name, PAGE), 'utf8'));
      const etag = answer.headers.etag;
      assert.match(String(etag), /^"[\w-]{22}"$/);
      const again = await app.inject({
        url: `/live/assets/${name}`,
        headers: { 'if-none-match': String(etag) },
      });
      assert.equal(again.statusCode, 304);
      assert.equal(again.body, '');
      const stale = await app.inject({
        url: `/live/assets/${name}`,
        headers: { 'if-none-match': '"stale"' },
      });
      assert.equal(stale.statusCode, 200);
    });
  }

  it("serves livekit-client's ES module build as livekit-client.mjs, as JavaScript", async () => {
    assert.match(livekitClientFile(), /livekit-client[/\\]dist[/\\]livekit-client\.esm\.mjs$/);
    const answer = await app.inject({ url: '/live/assets/livekit-client.mjs' });
    assert.equal(answer.statusCode, 200);
    assert.equal(answer.headers['content-type'], JAVASCRIPT);
    assert.equal(answer.headers['cache-control'], 'no-cache');
    assert.ok(answer.headers.etag);
    // The module exports what livekit.js uses, and asks for no source map that is not served.
    for (const name of ['Room', 'RoomEvent', 'Track', 'DisconnectReason', 'ConnectionError']) {
      assert.match(answer.body, new RegExp(`\\b${name}\\b`));
    }
    assert.match(answer.body, /\bexport\s*\{[^}]*\bRoomEvent\b[^}]*\}\s*;?\s*$/);
    assert.doesNotMatch(answer.body, /sourceMappingURL/);
    // Self-contained: it imports nothing (a bare module name would not resolve in a browser).
    assert.doesNotMatch(answer.body, /^\s*import\s*[\w{*"']/m);
    assert.doesNotMatch(answer.body, /\bimport\s*\(\s*["'`]/);
  });

  it('answers 404 JSON for any other name', async () => {
    for (const url of [
      '/live/assets/unknown.js',
      '/live/assets/tsconfig.json',
      '/live/assets/livekit-client.esm.mjs.map',
      '/live/assets/LIVEKIT.JS',
      '/live/assets/',
    ]) {
      const answer = await app.inject({ url });
      assert.equal(answer.statusCode, 404, url);
      assert.deepEqual(answer.json(), { error: 'Not Found' }, url);
      assert.equal(answer.headers.etag, undefined, url);
    }
  });

  it('answers 404 for path tricks, never a file outside the folder', async () => {
    for (const url of [
      '/live/assets/..%2Fassets.routes.ts',
      '/live/assets/%2E%2E%2F%2E%2E%2Froom%2Fpage%2Froom.js',
      '/live/assets/..%5Cassets.routes.ts',
      '/live/assets/live-client.js%00.map',
      '/live/assets/./livekit.js/',
      '/live/assets/page/livekit.js',
      '/live/assets/%2Fetc%2Fpasswd',
      '/live/assets/livekit.js%2F..%2F..%2Fassets.routes.ts',
    ]) {
      const answer = await app.inject({ url });
      assert.equal(answer.statusCode, 404, url);
      assert.doesNotMatch(answer.body, /registerLiveAssets|root:/, url);
    }
  });
});

for (const dialect of DIALECTS) {
  describe(`live assets in the service [${dialect}]`, () => {
    let server: TestServer;

    before(async () => {
      server = await startTestServer(dialect);
    });
    after(() => server.close());

    it('serves the live client and livekit-client from the running service', async () => {
      for (const name of ['live-client.js', 'livekit.js', 'livekit-client.mjs']) {
        const answer = await httpRequest({ url: `${server.baseUrl}/live/assets/${name}` });
        assert.equal(answer.status, 200, name);
        assert.equal(answer.headers['content-type'], JAVASCRIPT, name);
      }
      for (const path of ['/live/assets/room.js', '/live/assets', '/live/assets/..%2Fassets.routes.ts']) {
        const missing = await httpRequest({ url: `${server.baseUrl}${path}` });
        assert.equal(missing.status, 404, path);
        assert.deepEqual(missing.json, { error: 'Not Found' }, path);
      }
    });
  });
}
