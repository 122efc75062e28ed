/**
 * Camera pictures for the automated-flag tests and benchmarks, built from photos that ship inside an
 * npm package we already install (`@vladmandic/human`, MIT): no photo of anyone is committed here,
 * and no new native dependency decodes them. Headless Chromium decodes the JPEGs and draws each
 * scene into a canvas; Node turns the canvas's RGBA into I420 and writes a Y4M file, the format
 * Chromium's `--use-file-for-fake-video-capture` plays as the camera (looped).
 *
 * Sources (all in node_modules/@vladmandic/human/assets/, version 3.3.6). No shipped photo has a
 * clear profile at a usable size, so there is no "face turned away" video.
 * - `screenshot-faceid.jpg` (800×564): a screenshot of Human's face-ID demo with the author's webcam
 *   picture, one man facing the camera against a wall: the "normal candidate".
 * - `screenshot-facedetect.jpg` (800×718): the face-detect demo; its bottom row holds five face
 *   crops, the first two of which side by side make "two faces".
 * - `samples.jpg` (1280×1158): the demo's sample strip and a party photo; the photo's ceiling
 *   (lamps, no people) is the "empty room".
 * - `screenshot-vrm.jpg` (800×653) and `screenshot-facematch.jpg` (1920×954): used by the labelled
 *   set (test/flags/labelled-images.ts).
 *
 * Outputs are cached under test-output/fake-camera/ (git-ignored), keyed by a hash of the scene and
 * of the source files, so a second run costs nothing. `node test/flags/fake-camera.ts` builds them
 * all and prints where they are.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { type Browser, chromium } from 'playwright-core';
import { CHROMIUM_FLAGS, CHROMIUM_PATH } from '../helpers/browser.ts';

/** Where the photos come from: the installed @vladmandic/human package's assets folder. */
export const ASSETS_DIR = path.resolve(import.meta.dirname, '../../node_modules/@vladmandic/human/assets');

/** Where built videos, previews and labelled crops are cached (git-ignored). */
export const OUTPUT_DIR = path.resolve(import.meta.dirname, '../../test-output/fake-camera');

/** The room asks for 640×480; a file of that size is what the candidate's camera would give. */
export const VIDEO_WIDTH = 640;
export const VIDEO_HEIGHT = 480;

/** The photo files used, by the short name scenes refer to them with. */
export const SOURCES = {
  faceid: 'screenshot-faceid.jpg',
  facedetect: 'screenshot-facedetect.jpg',
  vrm: 'screenshot-vrm.jpg',
  facematch: 'screenshot-facematch.jpg',
  samples: 'samples.jpg',
} as const;

export type SourceName = keyof typeof SOURCES;

/** A rectangle: x, y, width, height, in pixels. */
export type Rect = readonly [number, number, number, number];

/** One piece of a photo (`crop`, in the photo's pixels) drawn at `to` (in the output's pixels). */
export interface Layer {
  readonly source: SourceName;
  readonly crop: Rect;
  readonly to: Rect;
}

/** A picture to build: a background colour and the photo pieces drawn over it, in order. */
export interface Scene {
  readonly name: string;
  /** What a person sees, for the docs and the failure messages. */
  readonly description: string;
  /** How many faces a person counts in the picture. */
  readonly faces: number;
  readonly width: number;
  readonly height: number;
  readonly background: string;
  readonly layers: readonly Layer[];
}

/** The webcam picture inside the face-ID screenshot: one man, facing the camera. */
const FACEID_PHOTO: Rect = [15, 142, 138, 139];
/** The first two of the five face crops in the face-detect screenshot's bottom row (150 px square). */
const FACEDETECT_MAN: Rect = [8, 347, 150, 150];
const FACEDETECT_WOMAN: Rect = [165, 347, 150, 150];
/** The ceiling of the party photo in samples.jpg: lamps and a wall, nobody in it (4:3). */
const EMPTY_CEILING: Rect = [860, 195, 320, 240];

function video(name: string, description: string, faces: number, layers: readonly Layer[]): Scene {
  return {
    name,
    description,
    faces,
    width: VIDEO_WIDTH,
    height: VIDEO_HEIGHT,
    background: '#202020',
    layers,
  };
}

/** The fake-camera videos the browser tests use, one Chromium per video. */
export const CAMERA_SCENES = {
  /** A normal candidate: one face, filling the frame like a laptop camera would. */
  face: video('face', 'one man facing the camera (face-ID demo webcam picture)', 1, [
    { source: 'faceid', crop: FACEID_PHOTO, to: [80, 0, 480, 480] },
  ]),
  /** Someone beside the candidate: two faces side by side. */
  two_faces: video('two_faces', 'two faces side by side (face-detect demo crops 1 and 2)', 2, [
    { source: 'facedetect', crop: FACEDETECT_MAN, to: [10, 80, 310, 310] },
    { source: 'facedetect', crop: FACEDETECT_WOMAN, to: [320, 80, 310, 310] },
  ]),
  /** The candidate has left: an empty room. */
  no_face: video('no_face', 'a room with lamps and nobody in it (the ceiling of the party photo)', 0, [
    { source: 'samples', crop: EMPTY_CEILING, to: [0, 0, 640, 480] },
  ]),
} as const satisfies Record<string, Scene>;

export type CameraSceneName = keyof typeof CAMERA_SCENES;

/** Frames per second written in the Y4M header; Chromium loops the file at this rate. */
const FRAME_RATE = 5;
/** Frames per file: a static picture needs few, and each 640×480 frame costs 450 KiB. */
const FRAME_COUNT = 2;

function sourceDigest(): string {
  const hash = crypto.createHash('sha256');
  for (const file of Object.values(SOURCES)) hash.update(fs.readFileSync(path.join(ASSETS_DIR, file)));
  return hash.digest('hex');
}

let cachedSourceDigest: string | undefined;

/** A short hash naming one scene's output: changes when the scene or any source photo changes. */
export function sceneKey(scene: Scene): string {
  cachedSourceDigest ??= sourceDigest();
  return crypto
    .createHash('sha256')
    .update(cachedSourceDigest)
    .update(JSON.stringify(scene))
    .digest('hex')
    .slice(0, 12);
}

/** Starts a headless Chromium for drawing (no camera needed). Throws when Chromium is missing. */
export async function launchDrawingBrowser(): Promise<Browser> {
  if (!fs.existsSync(CHROMIUM_PATH)) throw new Error(`Chromium is not at ${CHROMIUM_PATH}`);
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: CHROMIUM_FLAGS,
    ignoreDefaultArgs: ['--headless'],
  });
}

/** A picture drawn by Chromium: RGBA pixels and the same picture as PNG bytes. */
export interface DrawnPicture {
  readonly width: number;
  readonly height: number;
  readonly rgba: Buffer;
  readonly png: Buffer;
}

/**
 * The page side of drawScenes (plain JavaScript, run by Chromium): decodes the photos, draws each
 * scene in a canvas, and hands back its RGBA pixels and a PNG, both base64.
 */
const DRAW_SCRIPT = `
window.drawScenes = async (images, scenes) => {
  const decoded = {};
  for (const [name, url] of Object.entries(images)) {
    const image = new Image();
    image.src = url;
    await image.decode();
    decoded[name] = image;
  }
  const toBase64 = (bytes) => {
    let text = '';
    for (let i = 0; i < bytes.length; i += 0x8000) text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
    return btoa(text);
  };
  const out = [];
  for (const scene of scenes) {
    const canvas = document.createElement('canvas');
    canvas.width = scene.width;
    canvas.height = scene.height;
    const context = canvas.getContext('2d', { willReadFrequently: true });
    context.fillStyle = scene.background;
    context.fillRect(0, 0, scene.width, scene.height);
    context.imageSmoothingQuality = 'high';
    for (const layer of scene.layers) context.drawImage(decoded[layer.source], ...layer.crop, ...layer.to);
    const pixels = context.getImageData(0, 0, scene.width, scene.height).data;
    const png = canvas.toDataURL('image/png').slice('data:image/png;base64,'.length);
    out.push({ rgba: toBase64(new Uint8Array(pixels.buffer)), png });
  }
  return out;
};`;

/** The drawing page's function, as Node sees it. */
interface DrawingWindow {
  drawScenes(images: Record<string, string>, scenes: Scene[]): Promise<{ rgba: string; png: string }[]>;
}

/**
 * Draws each scene in a canvas in `browser` (Chromium decodes the JPEGs) and returns the pixels.
 * Throws when a source photo cannot be decoded.
 */
export async function drawScenes(browser: Browser, scenes: readonly Scene[]): Promise<DrawnPicture[]> {
  const page = await browser.newPage();
  try {
    const used = [...new Set(scenes.flatMap((scene) => scene.layers.map((layer) => layer.source)))];
    const images = Object.fromEntries(
      used.map((name) => [
        name,
        `data:image/jpeg;base64,${fs.readFileSync(path.join(ASSETS_DIR, SOURCES[name])).toString('base64')}`,
      ]),
    );
    await page.addScriptTag({ content: DRAW_SCRIPT });
    const drawn = await page.evaluate(
      (input) => (globalThis as unknown as DrawingWindow).drawScenes(input.images, input.scenes),
      { images, scenes: scenes as Scene[] },
    );
    return drawn.map((picture, index) => {
      const scene = scenes[index];
      if (scene === undefined) throw new Error('drawScenes: lost a scene');
      return {
        width: scene.width,
        height: scene.height,
        rgba: Buffer.from(picture.rgba, 'base64'),
        png: Buffer.from(picture.png, 'base64'),
      };
    });
  } finally {
    await page.close();
  }
}

/**
 * Converts RGBA pixels to I420 (planar Y, then U and V at half resolution), BT.601 limited range,
 * averaging each 2×2 block for the chroma. Throws when a side is odd.
 */
export function rgbaToI420(rgba: Uint8Array, width: number, height: number): Buffer {
  if (width % 2 !== 0 || height % 2 !== 0) throw new Error(`I420 needs even sides, got ${width}×${height}`);
  const ySize = width * height;
  const out = Buffer.alloc(ySize + ySize / 2);
  const uOffset = ySize;
  const vOffset = ySize + ySize / 4;
  const clamp = (value: number): number => (value < 0 ? 0 : value > 255 ? 255 : Math.round(value));
  for (let y = 0; y < height; y += 1) {
    for (let x = 0; x < width; x += 1) {
      const i = (y * width + x) * 4;
      const r = rgba[i] ?? 0;
      const g = rgba[i + 1] ?? 0;
      const b = rgba[i + 2] ?? 0;
      out[y * width + x] = clamp(16 + 0.257 * r + 0.504 * g + 0.098 * b);
    }
  }
  for (let y = 0; y < height; y += 2) {
    for (let x = 0; x < width; x += 2) {
      let r = 0;
      let g = 0;
      let b = 0;
      for (const [dx, dy] of [
        [0, 0],
        [1, 0],
        [0, 1],
        [1, 1],
      ] as const) {
        const i = ((y + dy) * width + x + dx) * 4;
        r += rgba[i] ?? 0;
        g += rgba[i + 1] ?? 0;
        b += rgba[i + 2] ?? 0;
      }
      r /= 4;
      g /= 4;
      b /= 4;
      const chroma = (y / 2) * (width / 2) + x / 2;
      out[uOffset + chroma] = clamp(128 - 0.148 * r - 0.291 * g + 0.439 * b);
      out[vOffset + chroma] = clamp(128 + 0.439 * r - 0.368 * g - 0.071 * b);
    }
  }
  return out;
}

/** A Y4M file (`C420jpeg`, progressive, square pixels) repeating one I420 frame `frames` times. */
export function y4mFile(i420: Buffer, width: number, height: number, frames = FRAME_COUNT): Buffer {
  const header = Buffer.from(`YUV4MPEG2 W${width} H${height} F${FRAME_RATE}:1 Ip A1:1 C420jpeg\n`);
  const frameHeader = Buffer.from('FRAME\n');
  const parts: Buffer[] = [header];
  for (let index = 0; index < frames; index += 1) parts.push(frameHeader, i420);
  return Buffer.concat(parts);
}

/** Cached paths of one built scene: the Y4M video and a PNG preview to look at. */
export interface BuiltVideo {
  readonly scene: Scene;
  readonly y4m: string;
  readonly png: string;
}

function outputPaths(scene: Scene): { y4m: string; png: string } {
  const base = path.join(OUTPUT_DIR, `${scene.name}-${sceneKey(scene)}`);
  return { y4m: `${base}.y4m`, png: `${base}.png` };
}

/**
 * Builds (or finds in the cache) the Y4M video of each named camera scene, drawing any missing ones
 * in one headless Chromium. Returns the paths by name. Throws when Chromium or a source is missing.
 */
export async function fakeCameraVideos(
  names: readonly CameraSceneName[] = Object.keys(CAMERA_SCENES) as CameraSceneName[],
): Promise<Record<CameraSceneName, BuiltVideo>> {
  fs.mkdirSync(OUTPUT_DIR, { recursive: true });
  const scenes: Scene[] = names.map((name) => CAMERA_SCENES[name]);
  const missing = scenes.filter((scene) => !fs.existsSync(outputPaths(scene).y4m));
  if (missing.length > 0) {
    const browser = await launchDrawingBrowser();
    try {
      const pictures = await drawScenes(browser, missing);
      missing.forEach((scene, index) => {
        const picture = pictures[index];
        if (picture === undefined) throw new Error(`scene ${scene.name} was not drawn`);
        const paths = outputPaths(scene);
        fs.writeFileSync(paths.png, picture.png);
        // Written under a temporary name first, so a run stopped half-way leaves no broken cache entry.
        const partial = `${paths.y4m}.partial`;
        fs.writeFileSync(
          partial,
          y4mFile(rgbaToI420(picture.rgba, picture.width, picture.height), picture.width, picture.height),
        );
        fs.renameSync(partial, paths.y4m);
      });
    } finally {
      await browser.close();
    }
  }
  const built: Partial<Record<CameraSceneName, BuiltVideo>> = {};
  for (const name of names) {
    const scene = CAMERA_SCENES[name];
    built[name] = { scene, ...outputPaths(scene) };
  }
  return built as Record<CameraSceneName, BuiltVideo>;
}

/**
 * Starts Chromium (the test flags: headless, fake microphone and screen, no prompts) whose camera
 * plays `y4m`. One browser per video: the flag is per process. Throws when Chromium is missing.
 */
export async function launchChromiumWithCamera(y4m: string): Promise<Browser> {
  if (!fs.existsSync(CHROMIUM_PATH)) throw new Error(`Chromium is not at ${CHROMIUM_PATH}`);
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [...CHROMIUM_FLAGS, `--use-file-for-fake-video-capture=${y4m}`],
    ignoreDefaultArgs: ['--headless'],
  });
}

if (import.meta.main) {
  const built = await fakeCameraVideos();
  for (const video of Object.values(built)) {
    process.stdout.write(`${video.scene.name}: ${video.y4m}\n  preview ${video.png}\n`);
  }
}
