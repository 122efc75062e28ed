/**
 * The web build as the server reads and serves it (src/http/web-build.ts): entries from Vite's
 * manifest, hashed files at /assets/* with a year of caching, packed with brotli or gzip when the
 * browser takes it, and the same bytes either way. Runs on a small build written here, so it does not
 * depend on dist/web.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import { chosenEncoding, entryHeadTags, registerWebAssets, webBuild } from '../../src/http/web-build.ts';

describe('the web build', () => {
  let dir: string;
  let app: FastifyInstance;
  // Text that packs well, over the size below which files are sent as they are.
  const script = `export const words = ${JSON.stringify('the exam room '.repeat(400))};\n`;

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'invigil-web-build-'));
    fs.mkdirSync(path.join(dir, '.vite'));
    fs.mkdirSync(path.join(dir, 'assets'));
    fs.writeFileSync(path.join(dir, 'assets/room-abc.js'), script);
    fs.writeFileSync(path.join(dir, 'assets/shared-def.js'), 'export {};\n');
    fs.writeFileSync(path.join(dir, 'assets/room-abc.css'), 'body{margin:0}\n');
    fs.writeFileSync(path.join(dir, 'assets/shared-def.css'), 'p{margin:0}\n');
    fs.writeFileSync(
      path.join(dir, '.vite/manifest.json'),
      JSON.stringify({
        'room/main.ts': {
          file: 'assets/room-abc.js',
          name: 'room',
          isEntry: true,
          imports: ['_shared.js'],
          css: ['assets/room-abc.css'],
          dynamicImports: ['../virtual:messages/room/en', '../virtual:messages/room/nl'],
        },
        '../virtual:messages/room/en': { file: 'assets/messages-room-en-111.js' },
        '../virtual:messages/room/nl': { file: 'assets/messages-room-nl-222.js' },
        '_shared.js': { file: 'assets/shared-def.js', name: 'shared', css: ['assets/shared-def.css'] },
      }),
    );
    app = Fastify();
    registerWebAssets(app, webBuild(dir));
    await app.ready();
  });

  after(async () => {
    await app.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("names an entry's script, its imports' style sheets before its own, and the chunks to preload", () => {
    const entry = webBuild(dir).entry('room');
    assert.deepEqual(entry, {
      script: '/assets/room-abc.js',
      styles: ['/assets/shared-def.css', '/assets/room-abc.css'],
      preloads: ['/assets/shared-def.js'],
      messages: new Map([
        ['en', '/assets/messages-room-en-111.js'],
        ['nl', '/assets/messages-room-nl-222.js'],
      ]),
    });
    assert.equal(webBuild(dir).entry('nothing'), undefined);
    assert.equal(
      entryHeadTags(entry),
      [
        '<link rel="stylesheet" href="/assets/shared-def.css">',
        '<link rel="stylesheet" href="/assets/room-abc.css">',
        '<link rel="modulepreload" href="/assets/shared-def.js">',
        '<script type="module" src="/assets/room-abc.js"></script>',
      ].join('\n'),
    );
    // With a language, its catalogue is fetched alongside (and no other language's).
    const dutch = entryHeadTags(entry, 'nl');
    assert.match(dutch, /<link rel="modulepreload" href="\/assets\/messages-room-nl-222\.js">/);
    assert.doesNotMatch(dutch, /messages-room-en/);
  });

  it('chooses brotli, then gzip, and neither when the browser refuses them', () => {
    assert.equal(chosenEncoding('gzip, deflate, br, zstd'), 'br');
    assert.equal(chosenEncoding('gzip, deflate'), 'gzip');
    assert.equal(chosenEncoding('br;q=0, gzip;q=0.5'), 'gzip');
    assert.equal(chosenEncoding('identity'), undefined);
    assert.equal(chosenEncoding(undefined), undefined);
    assert.equal(chosenEncoding('BR'), 'br');
  });

  for (const [encoding, unpack] of [
    ['br', zlib.brotliDecompressSync],
    ['gzip', zlib.gunzipSync],
  ] as const) {
    it(`sends a script packed with ${encoding}, the same bytes once unpacked, revalidated by its own ETag`, async () => {
      const answer = await app.inject({
        url: '/assets/room-abc.js',
        headers: { 'accept-encoding': encoding },
      });
      assert.equal(answer.statusCode, 200);
      assert.equal(answer.headers['content-encoding'], encoding);
      assert.equal(answer.headers.vary, 'accept-encoding');
      assert.equal(answer.headers['cache-control'], 'public, max-age=31536000, immutable');
      assert.match(String(answer.headers['content-type']), /^text\/javascript/);
      assert.ok(answer.rawPayload.length < script.length / 4, `${answer.rawPayload.length} bytes`);
      assert.equal(unpack(answer.rawPayload).toString(), script);
      const etag = String(answer.headers.etag);
      assert.ok(etag.endsWith(`-${encoding}"`), etag);
      const again = await app.inject({
        url: '/assets/room-abc.js',
        headers: { 'accept-encoding': encoding, 'if-none-match': etag },
      });
      assert.equal(again.statusCode, 304);
    });
  }

  it('sends the plain bytes to a browser that takes no packing, and small files as they are', async () => {
    const plain = await app.inject({ url: '/assets/room-abc.js' });
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.equal(plain.body, script);
    assert.ok(!String(plain.headers.etag).includes('-br'));
    const small = await app.inject({ url: '/assets/shared-def.js', headers: { 'accept-encoding': 'br' } });
    assert.equal(small.headers['content-encoding'], undefined);
    assert.equal(small.body, 'export {};\n');
  });

  it('answers 404 for a name the build lacks, and never a file outside it', async () => {
    for (const url of [
      '/assets/nothing.js',
      '/assets/..%2F.vite%2Fmanifest.json',
      '/assets/%2E%2E%2Fmanifest.json',
    ]) {
      const answer = await app.inject({ url, headers: { 'accept-encoding': 'br' } });
      assert.equal(answer.statusCode, 404, url);
    }
  });
});
