/**
 * The camera of the live-capacity benchmark's synthetic candidates: real VP8 frames, 640×360 at
 * 15 frames a second, encoded once by Chromium's own VP8 encoder (WebCodecs VideoEncoder, the
 * libvpx that encodes a candidate's camera for WebRTC) from a drawn picture with the detail and
 * motion of a webcam: a textured backdrop, a moving face, sensor noise. Four seconds (60 frames,
 * a key frame every 2 s) are kept in bench/results/ and played in a loop.
 *
 * Without Chromium (CHROMIUM_PATH, Debian's `chromium`), frames of the same shape are made up
 * instead: a key frame of 25 KB every 2 s and deltas of 3 to 6 KB with real VP8 frame headers
 * (nothing decodes them; the engine only reads the key frame flag). The report says which.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { ROOT } from './benchmark.ts';

export const WIDTH = 640;
export const HEIGHT = 360;
export const FPS = 15;
/** The live client's camera bitrate (web/live/media.ts, the camera encoding). */
const BITRATE = 600_000;
const FRAMES = 60;
const KEY_EVERY = 30;

export interface EncodedFrame {
  readonly key: boolean;
  readonly data: Buffer;
}

export interface FrameSet {
  /** `chromium` (real VP8 from Chromium's encoder) or `synthetic`. */
  readonly source: 'chromium' | 'synthetic';
  readonly frames: readonly EncodedFrame[];
}

const CACHE = path.join(ROOT, 'bench', 'results', `live-vp8-${WIDTH}x${HEIGHT}.json`);

interface CachedFrames {
  readonly width: number;
  readonly height: number;
  readonly bitrate: number;
  readonly frames: { key: boolean; data: string }[];
}

function fromCache(): FrameSet | undefined {
  try {
    const cached = JSON.parse(fs.readFileSync(CACHE, 'utf8')) as CachedFrames;
    if (cached.width !== WIDTH || cached.height !== HEIGHT || cached.bitrate !== BITRATE) return undefined;
    return {
      source: 'chromium',
      frames: cached.frames.map((frame) => ({ key: frame.key, data: Buffer.from(frame.data, 'base64') })),
    };
  } catch {
    return undefined;
  }
}

/** A made-up VP8 frame: the frame tag (and a key frame's start code and size), then filler. */
function syntheticFrame(key: boolean, size: number, seed: number, width = WIDTH, height = HEIGHT): Buffer {
  const frame = Buffer.alloc(size);
  for (let at = 10; at < size; at += 1) frame[at] = (seed * 31 + at * 17) & 0xff;
  const tag = (key ? 0 : 1) | (1 << 4) | (Math.min(size - 10, 0x7ffff) << 5);
  frame.writeUIntLE(tag, 0, 3);
  if (key) {
    frame.set([0x9d, 0x01, 0x2a], 3);
    frame.writeUInt16LE(width, 6);
    frame.writeUInt16LE(height, 8);
  }
  return frame;
}

/**
 * The live client's screen line (SCREEN_FPS, at most 1280 wide, 400 kbit/s): made-up frames of a
 * screen's sizes, a key frame of 60 KB every 10 s and deltas of 15 to 25 KB (about 350 kbit/s).
 */
export const SCREEN_FPS = 2;

export function screenFrames(): FrameSet {
  const frames = Array.from({ length: 20 }, (_, index) => {
    const key = index === 0;
    const size = key ? 60_000 : 15_000 + ((index * 7919) % 10_000);
    return { key, data: syntheticFrame(key, size, index, 1280, 720) };
  });
  return { source: 'synthetic', frames };
}

function syntheticFrames(): FrameSet {
  const frames = Array.from({ length: FRAMES }, (_, index) => {
    const key = index % KEY_EVERY === 0;
    const size = key ? 25_000 : 3_000 + ((index * 7919) % 3_000);
    return { key, data: syntheticFrame(key, size, index) };
  });
  return { source: 'synthetic', frames };
}

/** Encodes the frames in headless Chromium. Returns them; throws when Chromium cannot. */
async function encodeInChromium(): Promise<EncodedFrame[]> {
  const { launchChromium } = await import('../test/helpers/browser.ts');
  // WebCodecs needs a secure context: a page of its own on loopback.
  const server = http.createServer((_request, response) => response.end('<!doctype html><title>vp8</title>'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const browser = await launchChromium();
  try {
    const page = await browser.browser.newPage();
    await page.goto(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
    // Browser code as text: this file is compiled without the DOM's types.
    const encoded = await page.evaluate<{ key: boolean; data: string }[]>(`(async () => {
      const [width, height, fps, bitrate, frames, keyEvery] = ${JSON.stringify([WIDTH, HEIGHT, FPS, BITRATE, FRAMES, KEY_EVERY])};
      const chunks = [];
      const encoder = new VideoEncoder({
        output: (chunk) => {
          const bytes = new Uint8Array(chunk.byteLength);
          chunk.copyTo(bytes);
          let binary = '';
          for (const byte of bytes) binary += String.fromCharCode(byte);
          chunks.push({ key: chunk.type === 'key', data: btoa(binary) });
        },
        error: (error) => { throw error; },
      });
      encoder.configure({ codec: 'vp8', width, height, bitrate, framerate: fps, latencyMode: 'realtime', bitrateMode: 'variable' });
      const canvas = new OffscreenCanvas(width, height);
      const context = canvas.getContext('2d');
      // A textured backdrop (a shelf, a wall): the detail a key frame carries.
      const backdrop = context.createImageData(width, height);
      for (let at = 0; at < backdrop.data.length; at += 4) {
        const x = (at / 4) % width;
        const y = Math.floor(at / 4 / width);
        const value = 120 + 60 * Math.sin(x / 7) * Math.cos(y / 9) + Math.random() * 50;
        backdrop.data.set([value, value * 0.9, value * 0.8, 255], at);
      }
      const noise = context.createImageData(160, 120);
      for (let index = 0; index < frames; index += 1) {
        context.putImageData(backdrop, 0, 0);
        // A face that moves a little, shoulders, and a patch of sensor noise.
        context.fillStyle = '#e0ac8a';
        context.beginPath();
        context.ellipse(320 + 12 * Math.sin(index / 5), 170 + 6 * Math.cos(index / 7), 80, 105, 0, 0, 2 * Math.PI);
        context.fill();
        context.fillStyle = '#30343a';
        context.fillRect(200 + 8 * Math.sin(index / 4), 280, 240, 80);
        for (let at = 0; at < noise.data.length; at += 4) {
          const value = Math.random() * 255;
          noise.data.set([value, value, value, 40], at);
        }
        context.putImageData(noise, 20 + (index % 20) * 20, 20);
        const frame = new VideoFrame(canvas, { timestamp: Math.round((index * 1e6) / fps) });
        encoder.encode(frame, { keyFrame: index % keyEvery === 0 });
        frame.close();
      }
      await encoder.flush();
      return chunks;
    })()`);
    if (encoded.length !== FRAMES) throw new Error(`Chromium encoded ${encoded.length} of ${FRAMES} frames`);
    const cached: CachedFrames = { width: WIDTH, height: HEIGHT, bitrate: BITRATE, frames: encoded };
    fs.mkdirSync(path.dirname(CACHE), { recursive: true });
    fs.writeFileSync(CACHE, JSON.stringify(cached));
    return encoded.map((frame) => ({ key: frame.key, data: Buffer.from(frame.data, 'base64') }));
  } finally {
    await browser.close();
    server.close();
  }
}

/**
 * The camera frames: from the cache, else encoded in Chromium (and cached), else made up. Returns
 * them with their source; `note` hears why Chromium could not be used.
 */
export async function cameraFrames(note: (message: string) => void): Promise<FrameSet> {
  const cached = fromCache();
  if (cached !== undefined) return cached;
  try {
    return { source: 'chromium', frames: await encodeInChromium() };
  } catch (error) {
    note(
      `no Chromium VP8 frames (${error instanceof Error ? error.message : String(error)}): synthetic ones`,
    );
    return syntheticFrames();
  }
}

/** Writes frames to `file` for a child process (base64 JSON). */
export function writeFrames(file: string, set: FrameSet): void {
  fs.writeFileSync(
    file,
    JSON.stringify({
      source: set.source,
      frames: set.frames.map((f) => ({ key: f.key, data: f.data.toString('base64') })),
    }),
  );
}

/** Reads what writeFrames wrote. */
export function readFrames(file: string): FrameSet {
  const parsed = JSON.parse(fs.readFileSync(file, 'utf8')) as {
    source: FrameSet['source'];
    frames: { key: boolean; data: string }[];
  };
  return {
    source: parsed.source,
    frames: parsed.frames.map((frame) => ({ key: frame.key, data: Buffer.from(frame.data, 'base64') })),
  };
}
