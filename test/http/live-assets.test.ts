import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import { LIVE_ENTRY_ALIASES, registerLiveAssets } from '../../src/http/live/assets.routes.ts';
import { registerWebAssets, webBuild } from '../../src/http/web-build.ts';
import { httpRequest, type HttpAnswer } from '../helpers/http.ts';
import { DIALECTS, startTestServer, type TestServer } from '../helpers/server.ts';

const JAVASCRIPT = 'text/javascript; charset=utf-8';

/** The hashed file the web build's entry `name` starts from (/assets/…). */
function builtScript(name: string): string {
  const entry = webBuild().entry(name);
  assert.ok(entry, `the web build has the ${name} entry`);
  return entry.script;
}

describe('GET /live/assets/:file and the live modules by their old addresses', () => {
  let app: FastifyInstance;

  before(async () => {
    app = Fastify();
    registerLiveAssets(app);
    registerWebAssets(app);
    await app.ready();
  });
  after(() => app.close());

  for (const [address, entry] of Object.entries(LIVE_ENTRY_ALIASES)) {
    it(`redirects ${address} to the built ${entry}, revalidated each time`, async () => {
      const answer = await app.inject({ url: address });
      assert.equal(answer.statusCode, 302);
      assert.equal(answer.headers.location, builtScript(entry));
      assert.equal(answer.headers['cache-control'], 'no-cache');
      const built = await app.inject({ url: builtScript(entry) });
      assert.equal(built.statusCode, 200);
      assert.equal(built.headers['content-type'], JAVASCRIPT);
      assert.equal(built.headers['cache-control'], 'public, max-age=31536000, immutable');
      assert.equal(built.headers['x-content-type-options'], 'nosniff');
      assert.match(built.body, /\bexport\b/);
      const etag = built.headers.etag;
      assert.match(String(etag), /^"[\w-]{22}"$/);
      const again = await app.inject({ url: builtScript(entry), headers: { 'if-none-match': String(etag) } });
      assert.equal(again.statusCode, 304);
      assert.equal(again.body, '');
    });
  }

  it('bundles livekit-client as a chunk of its own, loaded by the LiveKit adapter on demand', async () => {
    const adapter = (await app.inject({ url: builtScript('livekit') })).body;
    const chunk = /["'`]\.?\/?(?:assets\/)?(livekit-client[\w.-]*\.js)["'`]/.exec(adapter)?.[1];
    assert.ok(chunk, 'the adapter names the livekit-client chunk');
    assert.doesNotMatch(adapter, /^\s*import\s*[\w{*"'][^;]*livekit-client/m, 'not a static import');
    const answer = await app.inject({ url: `/assets/${chunk}` });
    assert.equal(answer.statusCode, 200);
    assert.equal(answer.headers['content-type'], JAVASCRIPT);
    // The chunk exports what the adapter uses, and asks for no source map that is not served.
    for (const name of ['Room', 'RoomEvent', 'Track', 'DisconnectReason', 'ConnectionError']) {
      assert.match(answer.body, new RegExp(`\\b${name}\\b`));
    }
    assert.ok(!answer.body.includes('sourceMappingURL'), 'no source map comment');
    // Its imports are files of the build (a bare module name would not resolve in a browser).
    const imports = [
      ...answer.body.matchAll(/(?:^|[;}])\s*import\s*(?:[\w{*][^;]*?from\s*)?["'`]([^"'`]+)["'`]/g),
      ...answer.body.matchAll(/\bimport\s*\(\s*["'`]([^"'`]+)["'`]/g),
    ].map((match) => match[1]);
    assert.deepEqual(
      imports.filter((specifier) => specifier === undefined || !specifier.startsWith('./')),
      [],
    );
  });

  it('answers 404 JSON for any other name', async () => {
    for (const url of [
      '/live/assets/unknown.js',
      '/live/assets/tsconfig.json',
      '/live/assets/livekit-client.mjs',
      '/live/assets/livekit-client.esm.mjs.map',
      '/live/assets/live-client.ts',
      '/live/assets/LIVEKIT.JS',
      '/live/assets/',
    ]) {
      const answer = await app.inject({ url });
      assert.equal(answer.statusCode, 404, url);
      assert.deepEqual(answer.json(), { error: 'Not Found' }, url);
      assert.equal(answer.headers.etag, undefined, url);
    }
  });

  it('answers 404 for path tricks, never a file outside the build', async () => {
    for (const url of [
      '/live/assets/..%2Fassets.routes.ts',
      '/live/assets/%2E%2E%2F%2E%2E%2Froom%2Fpage%2Froom.js',
      '/live/assets/..%5Cassets.routes.ts',
      '/live/assets/live-client.js%00.map',
      '/live/assets/./livekit.js/',
      '/live/assets/page/livekit.js',
      '/live/assets/%2Fetc%2Fpasswd',
      '/live/assets/livekit.js%2F..%2F..%2Fassets.routes.ts',
      '/assets/..%2F..%2Fweb%2Flive%2Flive-client.ts',
      '/assets/..%2Fmanifest.json',
    ]) {
      const answer = await app.inject({ url });
      assert.equal(answer.statusCode, 404, url);
      assert.doesNotMatch(answer.body, /registerLiveAssets|connectLive|root:/, url);
    }
  });
});

/** GET `url`, following one redirect within the service. */
async function getFollowing(baseUrl: string, path: string): Promise<HttpAnswer> {
  const answer = await httpRequest({ url: `${baseUrl}${path}` });
  if (answer.status !== 302) return answer;
  return httpRequest({ url: new URL(String(answer.headers.location), `${baseUrl}${path}`).toString() });
}

for (const dialect of DIALECTS) {
  describe(`live assets in the service [${dialect}]`, () => {
    let server: TestServer;

    before(async () => {
      server = await startTestServer(dialect);
    });
    after(() => server.close());

    it('serves the live client, the LiveKit adapter and the phone module from the running service', async () => {
      for (const address of Object.keys(LIVE_ENTRY_ALIASES)) {
        const answer = await getFollowing(server.baseUrl, address);
        assert.equal(answer.status, 200, address);
        assert.equal(answer.headers['content-type'], JAVASCRIPT, address);
      }
      for (const path of ['/live/assets/room.js', '/live/assets', '/live/assets/..%2Fassets.routes.ts']) {
        const missing = await httpRequest({ url: `${server.baseUrl}${path}` });
        assert.equal(missing.status, 404, path);
        assert.deepEqual(missing.json, { error: 'Not Found' }, path);
      }
    });
  });
}
