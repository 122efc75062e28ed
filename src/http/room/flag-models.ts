import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The files the room's automated-flag detectors load (docs/automated-flags.md), served by Invigil
 * itself under `/room/models/<content hash>/<file>` (src/http/room/models.routes.ts): Human's browser
 * bundle (face detection on TensorFlow.js) with the three face models it runs and TensorFlow.js's
 * WebAssembly binaries, and for speech vad-web's bundle, its audio worklet, the Silero voice-activity
 * model and onnxruntime-web's WebAssembly build. The detectors' own code (web/room/flags/) is part of
 * the web build and served with it at /assets/*; only these installed packages' files are served here. The set is read once per process and
 * named by one hash of every file's content, so the browser may keep each file for a year: a release
 * that changes any byte changes every address.
 */

/** A served file: its bytes and its content type. */
export interface FlagModelFile {
  readonly body: Buffer;
  readonly contentType: string;
}

/** The served files by name, with the hash that names this set. */
export interface FlagModelSet {
  readonly hash: string;
  readonly files: ReadonlyMap<string, FlagModelFile>;
}

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.bin': 'application/octet-stream',
  '.onnx': 'application/octet-stream',
};

/** The directory of an installed package (its package.json's folder); throws when it is missing. */
function packageDir(name: string): string {
  let dir = path.dirname(fileURLToPath(import.meta.resolve(name)));
  while (!fs.existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`Cannot find the package directory of ${name}`);
    dir = parent;
  }
  return dir;
}

/**
 * Where each served name comes from: [served name, package, path inside it]. Human's face models:
 * BlazeFace finds faces (and their boxes count them), FaceMesh gives the head's yaw and pitch for
 * looking away, FaceRes the descriptor compared with the face photo. Nothing else of Human's
 * (body, hands, emotion, iris) is served: its configuration in web/room/flags/detector.worker.ts
 * turns those off.
 */
const PACKAGE_FILES: readonly (readonly [string, string, string])[] = [
  ['human.esm.js', '@vladmandic/human', 'dist/human.esm.js'],
  ['blazeface.json', '@vladmandic/human', 'models/blazeface.json'],
  ['blazeface.bin', '@vladmandic/human', 'models/blazeface.bin'],
  ['facemesh.json', '@vladmandic/human', 'models/facemesh.json'],
  ['facemesh.bin', '@vladmandic/human', 'models/facemesh.bin'],
  ['faceres.json', '@vladmandic/human', 'models/faceres.json'],
  ['faceres.bin', '@vladmandic/human', 'models/faceres.bin'],
  // TensorFlow.js's WebAssembly backend, the version Human bundles (its JavaScript is in Human's
  // bundle, which fetches the binary from `wasmPath`): on a device without a real graphics card it
  // runs the face models some 50 times faster than WebGL drawn in software or the plain processor
  // backend. The SIMD build is the one today's browsers take; the plain one is for those without
  // WebAssembly SIMD. The threaded build is not served: it needs cross-origin isolation, which the
  // room does not have (the detector's worker tells TensorFlow.js so).
  ['tfjs-backend-wasm-simd.wasm', '@tensorflow/tfjs-backend-wasm', 'dist/tfjs-backend-wasm-simd.wasm'],
  ['tfjs-backend-wasm.wasm', '@tensorflow/tfjs-backend-wasm', 'dist/tfjs-backend-wasm.wasm'],
  ['vad.bundle.min.js', '@ricky0123/vad-web', 'dist/bundle.min.js'],
  ['vad.worklet.bundle.min.js', '@ricky0123/vad-web', 'dist/vad.worklet.bundle.min.js'],
  ['silero_vad_legacy.onnx', '@ricky0123/vad-web', 'dist/silero_vad_legacy.onnx'],
  // onnxruntime's WebAssembly-only build; it imports its Emscripten loader from the same path.
  ['ort.wasm.min.mjs', 'onnxruntime-web', 'dist/ort.wasm.min.mjs'],
  ['ort-wasm-simd-threaded.mjs', 'onnxruntime-web', 'dist/ort-wasm-simd-threaded.mjs'],
  ['ort-wasm-simd-threaded.wasm', 'onnxruntime-web', 'dist/ort-wasm-simd-threaded.wasm'],
];

/** A script without its closing source-map comment: the maps are not served. */
function withoutSourceMap(body: Buffer): Buffer {
  return Buffer.from(body.toString('utf8').replace(/\n?\/\/# sourceMappingURL=\S+\s*$/, '\n'));
}

/** A float16 (IEEE 754 half precision) as a number. */
function halfToNumber(half: number): number {
  const sign = half & 0x8000 ? -1 : 1;
  const exponent = (half >> 10) & 0x1f;
  const fraction = half & 0x3ff;
  if (exponent === 0) return sign * 2 ** -14 * (fraction / 1024);
  if (exponent === 0x1f) return fraction === 0 ? sign * Infinity : Number.NaN;
  return sign * 2 ** (exponent - 15) * (1 + fraction / 1024);
}

interface WeightSpec {
  name: string;
  shape: number[];
  dtype: string;
  quantization?: { dtype: string; min?: number; scale?: number };
}

interface GraphModelJson {
  weightsManifest: { paths: string[]; weights: WeightSpec[] }[];
}

/**
 * The face models served re-quantised to 8 bits a weight (quantiseToUint8): FaceRes (6.98 MB of
 * float16 as shipped) and FaceMesh (1.48 MB). Halving them keeps what the room downloads with
 * every detector on under 10 MB compressed. On the 140 labelled pictures of the accuracy benchmark
 * the 8-bit FaceMesh moved the head angles by 0.6° (median; at most 1.4°) and changed no face
 * count and no looking-away decision.
 */
const QUANTISED = ['faceres', 'facemesh'] as const;

/**
 * A TensorFlow.js graph model whose float16 weights are re-quantised to 8 bits per weight (affine:
 * value = byte × scale + min, one scale per tensor, which TensorFlow.js decodes itself): half the
 * bytes (see QUANTISED). Other tensors are copied as they are. Returns the new manifest and weights.
 */
export function quantiseToUint8(modelJson: Buffer, weights: Buffer): { json: Buffer; bin: Buffer } {
  const model = JSON.parse(modelJson.toString('utf8')) as GraphModelJson;
  const parts: Buffer[] = [];
  let offset = 0;
  for (const group of model.weightsManifest) {
    for (const spec of group.weights) {
      const count = spec.shape.reduce((product, size) => product * size, 1);
      if (spec.quantization?.dtype !== 'float16') {
        const bytes = spec.quantization?.dtype === 'uint8' ? 1 : spec.quantization ? 2 : 4;
        parts.push(weights.subarray(offset, offset + count * bytes));
        offset += count * bytes;
        continue;
      }
      const values = new Float32Array(count);
      let min = Infinity;
      let max = -Infinity;
      for (let index = 0; index < count; index += 1) {
        const value = halfToNumber(weights.readUInt16LE(offset + index * 2));
        values[index] = value;
        if (value < min) min = value;
        if (value > max) max = value;
      }
      offset += count * 2;
      const scale = max > min ? (max - min) / 255 : 1;
      const bytes = Buffer.alloc(count);
      for (let index = 0; index < count; index += 1) {
        bytes[index] = Math.round(((values[index] ?? 0) - min) / scale);
      }
      parts.push(bytes);
      spec.quantization = { dtype: 'uint8', min, scale };
    }
  }
  return { json: Buffer.from(JSON.stringify(model)), bin: Buffer.concat(parts) };
}

function contentTypeOf(name: string): string {
  const type = CONTENT_TYPES[path.extname(name)];
  if (type === undefined) throw new Error(`No content type for ${name}`);
  return type;
}

function readSet(): FlagModelSet {
  const bodies = new Map<string, Buffer>();
  for (const [name, pkg, file] of PACKAGE_FILES) {
    const body = fs.readFileSync(path.join(packageDir(pkg), file));
    bodies.set(name, /\.m?js$/.test(name) ? withoutSourceMap(body) : body);
  }
  for (const model of QUANTISED) {
    const quantised = quantiseToUint8(
      bodies.get(`${model}.json`) ?? Buffer.alloc(0),
      bodies.get(`${model}.bin`) ?? Buffer.alloc(0),
    );
    bodies.set(`${model}.json`, quantised.json);
    bodies.set(`${model}.bin`, quantised.bin);
  }
  const digest = crypto.createHash('sha256');
  const files = new Map<string, FlagModelFile>();
  for (const [name, body] of [...bodies].sort(([a], [b]) => a.localeCompare(b))) {
    digest.update(`${name}\n${crypto.createHash('sha256').update(body).digest('hex')}\n`);
    files.set(name, { body, contentType: contentTypeOf(name) });
  }
  return { hash: digest.digest('hex').slice(0, 16), files };
}

let loaded: FlagModelSet | undefined;

/**
 * The served set, read from the packages on first use and kept for the life of the process.
 * Returns it; throws when a package is not installed.
 */
export function flagModelSet(): FlagModelSet {
  loaded ??= readSet();
  return loaded;
}

/**
 * The base path the room's detectors load their models and vendor bundles from, with the content hash:
 * `/room/models/<hash>/` (ending in a slash; the room appends file names). The room view answers it
 * as `automated_flags.models`. Throws when a package is not installed.
 */
export function flagModelsPath(): string {
  return `/room/models/${flagModelSet().hash}/`;
}
