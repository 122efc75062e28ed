/**
 * `GET /room/models/:hash/:file`: the automated flags' detectors and models, served by the service
 * itself under one content hash with immutable caching (docs/automated-flags.md), gzip-compressed
 * when the browser accepts it, 404 for anything outside the set or under another hash.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import zlib from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import { flagModelSet, flagModelsPath, quantiseToUint8 } from '../../../src/http/room/flag-models.ts';
import { acceptsGzip } from '../../../src/http/room/models.routes.ts';
import { httpRequest } from '../../helpers/http.ts';
import { DIALECTS, startTestServer, type TestServer } from '../../helpers/server.ts';

const IMMUTABLE = 'public, max-age=31536000, immutable';

/** Every file the room may ask for, with its content type. */
const SERVED: Readonly<Record<string, string>> = {
  'human.esm.js': 'text/javascript; charset=utf-8',
  'blazeface.json': 'application/json; charset=utf-8',
  'blazeface.bin': 'application/octet-stream',
  'facemesh.json': 'application/json; charset=utf-8',
  'facemesh.bin': 'application/octet-stream',
  'faceres.json': 'application/json; charset=utf-8',
  'faceres.bin': 'application/octet-stream',
  'tfjs-backend-wasm-simd.wasm': 'application/wasm',
  'tfjs-backend-wasm.wasm': 'application/wasm',
  'vad.bundle.min.js': 'text/javascript; charset=utf-8',
  'vad.worklet.bundle.min.js': 'text/javascript; charset=utf-8',
  'silero_vad_legacy.onnx': 'application/octet-stream',
  'ort.wasm.min.mjs': 'text/javascript; charset=utf-8',
  'ort-wasm-simd-threaded.mjs': 'text/javascript; charset=utf-8',
  'ort-wasm-simd-threaded.wasm': 'application/wasm',
};

const MB = 1_000_000;

function packageFile(relative: string): Buffer {
  return fs.readFileSync(new URL(`../../../node_modules/${relative}`, import.meta.url));
}

describe('flag model set', () => {
  it('holds exactly the allow-list, under a 16-hex-digit hash the path names', () => {
    const set = flagModelSet();
    assert.deepEqual([...set.files.keys()].sort(), Object.keys(SERVED).sort());
    assert.match(set.hash, /^[0-9a-f]{16}$/);
    assert.equal(flagModelsPath(), `/room/models/${set.hash}/`);
  });

  it('serves the TensorFlow.js WebAssembly binaries of the version Human bundles', () => {
    // Human's bundle carries the backend's JavaScript; it must match the binaries byte for byte.
    const human = packageFile('@vladmandic/human/dist/human.esm.js').toString('utf8');
    const name = /"tfjs-backend-wasm": (\w+)/.exec(human)?.[1];
    assert.ok(name, 'the bundle names its tfjs-backend-wasm version');
    const bundled = new RegExp(`var ${name} = "([^"]+)"`).exec(human)?.[1];
    const installed = (
      JSON.parse(packageFile('@tensorflow/tfjs-backend-wasm/package.json').toString('utf8')) as {
        version: string;
      }
    ).version;
    assert.equal(installed, bundled);
  });

  it('keeps each configuration of detectors under 10 MB compressed', () => {
    const set = flagModelSet();
    const compressed = (names: readonly string[]): number =>
      names.reduce((sum, name) => {
        const body = set.files.get(name)?.body;
        assert.ok(body, name);
        return sum + zlib.gzipSync(body, { level: 9 }).length;
      }, 0);
    // The detectors' own code is part of the web build (web/room/flags/), not of this set.
    const modules: string[] = [];
    const face = [
      'human.esm.js',
      'blazeface.json',
      'blazeface.bin',
      'facemesh.json',
      'facemesh.bin',
      'tfjs-backend-wasm-simd.wasm',
    ];
    const match = ['faceres.json', 'faceres.bin'];
    const speech = [
      'vad.bundle.min.js',
      'vad.worklet.bundle.min.js',
      'silero_vad_legacy.onnx',
      'ort.wasm.min.mjs',
      'ort-wasm-simd-threaded.mjs',
      'ort-wasm-simd-threaded.wasm',
    ];
    // What a browser with WebAssembly SIMD fetches: the non-SIMD binary is for the others only.
    const configurations = {
      'face, no photo to compare with': [...modules, ...face],
      'face with the photo comparison': [...modules, ...face, ...match],
      'face and speech, no comparison': [...modules, ...face, ...speech],
      'every detector on': [...modules, ...face, ...match, ...speech],
    };
    for (const [what, names] of Object.entries(configurations)) {
      const bytes = compressed(names);
      assert.ok(bytes < 10 * MB, `${what}: ${bytes} bytes compressed`);
    }
  });

  it('serves the package files byte for byte, scripts without their source-map comment', () => {
    const set = flagModelSet();
    assert.deepEqual(
      set.files.get('blazeface.bin')?.body,
      packageFile('@vladmandic/human/models/blazeface.bin'),
    );
    assert.deepEqual(
      set.files.get('tfjs-backend-wasm-simd.wasm')?.body,
      packageFile('@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm-simd.wasm'),
    );
    assert.deepEqual(
      set.files.get('ort-wasm-simd-threaded.wasm')?.body,
      packageFile('onnxruntime-web/dist/ort-wasm-simd-threaded.wasm'),
    );
    const human = set.files.get('human.esm.js')?.body.toString('utf8') ?? '';
    assert.ok(human.includes('Human as default'));
    assert.doesNotMatch(human, /sourceMappingURL/);
  });

  it('serves FaceMesh and FaceRes re-quantised to 8 bits a weight', () => {
    const set = flagModelSet();
    for (const model of ['facemesh', 'faceres']) {
      const original = packageFile(`@vladmandic/human/models/${model}.bin`);
      const served = set.files.get(`${model}.bin`)?.body;
      assert.ok(served && served.length < original.length * 0.51, `${model}: ${served?.length} bytes`);
      assert.match(set.files.get(`${model}.json`)?.body.toString('utf8') ?? '', /"dtype":"uint8"/);
    }
  });

  it('re-quantises FaceRes to 8 bits a weight, within half a step of each float16 weight', () => {
    const json = packageFile('@vladmandic/human/models/faceres.json');
    const bin = packageFile('@vladmandic/human/models/faceres.bin');
    const quantised = quantiseToUint8(json, bin);
    assert.ok(quantised.bin.length < bin.length * 0.51, `${quantised.bin.length} of ${bin.length} bytes`);
    const manifest = JSON.parse(quantised.json.toString('utf8')) as {
      weightsManifest: {
        weights: { shape: number[]; quantization?: { dtype: string; min: number; scale: number } }[];
      }[];
    };
    const first = manifest.weightsManifest[0]?.weights.find((spec) => spec.quantization?.dtype === 'uint8');
    assert.ok(first?.quantization, 'a uint8-quantised tensor');
    // The first float16 weight of that tensor, decoded from the original, against its byte.
    const original = JSON.parse(json.toString('utf8')) as typeof manifest;
    let offset = 0;
    for (const spec of original.weightsManifest[0]?.weights ?? []) {
      const count = spec.shape.reduce((a, b) => a * b, 1);
      if (spec.quantization?.dtype === 'float16') break;
      offset += count * 4;
    }
    const half = bin.readUInt16LE(offset);
    const exponent = (half >> 10) & 0x1f;
    const value = (half & 0x8000 ? -1 : 1) * 2 ** (exponent - 15) * (1 + (half & 0x3ff) / 1024);
    // Tensors before it are copied as they are, so it starts at the same offset in both files.
    const byte = quantised.bin[offset] ?? 0;
    const decoded = byte * first.quantization.scale + first.quantization.min;
    assert.ok(Math.abs(decoded - value) <= first.quantization.scale / 2 + 1e-6, `${decoded} for ${value}`);
  });

  it('reads Accept-Encoding: gzip accepted unless refused with q=0', () => {
    assert.equal(acceptsGzip('gzip, deflate, br'), true);
    assert.equal(acceptsGzip('br;q=1, gzip;q=0.5'), true);
    assert.equal(acceptsGzip('*'), true);
    assert.equal(acceptsGzip('gzip;q=0'), false);
    assert.equal(acceptsGzip('identity'), false);
    assert.equal(acceptsGzip(undefined), false);
  });
});

for (const dialect of DIALECTS) {
  describe(`GET /room/models/:hash/:file [${dialect}]`, () => {
    let server: TestServer;
    let base: string;

    before(async () => {
      server = await startTestServer(dialect);
      base = `${server.baseUrl}${flagModelsPath()}`;
    });

    after(async () => {
      await server?.close();
    });

    for (const [name, type] of Object.entries(SERVED)) {
      it(`answers ${name} as ${type}, immutable for a year`, async () => {
        const answer = await httpRequest({ url: `${base}${name}` });
        assert.equal(answer.status, 200);
        assert.equal(answer.headers['content-type'], type);
        assert.equal(answer.headers['cache-control'], IMMUTABLE);
        assert.equal(answer.headers['x-content-type-options'], 'nosniff');
        assert.equal(answer.headers['content-encoding'], undefined, 'not compressed unasked');
        assert.deepEqual(answer.bytes, flagModelSet().files.get(name)?.body);
      });
    }

    for (const [name, source] of [
      ['ort-wasm-simd-threaded.wasm', 'onnxruntime-web/dist/ort-wasm-simd-threaded.wasm'],
      ['tfjs-backend-wasm-simd.wasm', '@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm-simd.wasm'],
    ] as const) {
      it(`sends ${name} gzip-compressed to a browser that accepts it, the same bytes once inflated`, async () => {
        const answer = await httpRequest({
          url: `${base}${name}`,
          headers: { 'accept-encoding': 'gzip, deflate, br, zstd' },
        });
        assert.equal(answer.status, 200);
        assert.equal(answer.headers['content-encoding'], 'gzip');
        assert.equal(answer.headers.vary, 'accept-encoding');
        assert.equal(answer.headers['content-type'], 'application/wasm');
        assert.equal(answer.headers['cache-control'], IMMUTABLE);
        const inflated = zlib.gunzipSync(answer.bytes);
        const expected = packageFile(source);
        assert.equal(
          crypto.createHash('sha256').update(inflated).digest('hex'),
          crypto.createHash('sha256').update(expected).digest('hex'),
        );
        assert.ok(answer.bytes.length < expected.length / 2.5, `${answer.bytes.length} bytes sent`);
      });
    }

    for (const [what, path] of [
      ['a package file outside the allow-list', 'iris.json'],
      ['a source map', 'human.esm.js.map'],
      ['a path climbing out', '..%2Fpackage.json'],
      ['the room script', 'room.js'],
      ['an empty name', ''],
    ] as const) {
      it(`answers 404 for ${what}`, async () => {
        const answer = await httpRequest({ url: `${base}${path}` });
        assert.equal(answer.status, 404);
        assert.notEqual(answer.headers['cache-control'], IMMUTABLE);
      });
    }

    it('answers 404 for an allowed file under another hash (an old release)', async () => {
      const answer = await httpRequest({
        url: `${server.baseUrl}/room/models/0123456789abcdef/blazeface.json`,
      });
      assert.equal(answer.status, 404);
      assert.deepEqual(answer.json, { error: 'Not Found' });
      assert.notEqual(answer.headers['cache-control'], IMMUTABLE);
    });
  });
}
