/**
 * The labelled picture set for the accuracy benchmark: crops of photos shipped in
 * `@vladmandic/human` 3.3.6 (node_modules/@vladmandic/human/assets/, MIT), each labelled by a person
 * with the number of faces in it (0, 1 or 2). The labels were set by looking at every crop
 * (`node test/flags/labelled-images.ts` writes them to test-output/fake-camera/labelled/).
 *
 * - One face (108): every cell of the 6 × 18 grid of face crops in `screenshot-facematch.jpg`
 *   (the face-match demo's "extracted faces"; each cell about 104 × 106 px, with the demo's
 *   similarity figure printed over its top and age/gender over its bottom). Men and women,
 *   several skin tones, sunglasses, a painted face, heads tilted and turned, blurry cells.
 * - Two faces (18): two neighbouring cells of the same grid side by side (rows 1–6, columns 1+2,
 *   7+8 and 13+14).
 * - No face (14): parts of the same screenshots with no person in them: the party photo's ceiling
 *   and lamps (`samples.jpg`), the empty kitchen and the black floor grid of the VRM demo
 *   (`screenshot-vrm.jpg`), the demos' text panels (`screenshot-faceid.jpg`,
 *   `screenshot-facedetect.jpg`) and the black band of `samples.jpg` (a covered camera).
 *
 * Every picture is drawn into a 320 × 240 frame (the camera's 4:3), the crop scaled to fit.
 */
import fs from 'node:fs';
import path from 'node:path';
import {
  drawScenes,
  launchDrawingBrowser,
  OUTPUT_DIR,
  type Rect,
  type Scene,
  type SourceName,
} from './fake-camera.ts';

const FRAME_WIDTH = 320;
const FRAME_HEIGHT = 240;

/** The face grid in screenshot-facematch.jpg: first cell's corner, the step between cells, a cell's size. */
const GRID = { left: 2, top: 281, stepX: 106.3, stepY: 112.8, width: 103, height: 105, rows: 6, columns: 18 };

function cell(row: number, column: number, span = 1): Rect {
  return [
    Math.round(GRID.left + column * GRID.stepX),
    Math.round(GRID.top + row * GRID.stepY),
    Math.round(GRID.width + (span - 1) * GRID.stepX),
    GRID.height,
  ];
}

/** Scales `crop` to fit the frame, centred, keeping its shape. */
function fitted(crop: Rect): Rect {
  const scale = Math.min(FRAME_WIDTH / crop[2], FRAME_HEIGHT / crop[3]);
  const width = Math.round(crop[2] * scale);
  const height = Math.round(crop[3] * scale);
  return [Math.round((FRAME_WIDTH - width) / 2), Math.round((FRAME_HEIGHT - height) / 2), width, height];
}

function picture(name: string, description: string, faces: number, source: SourceName, crop: Rect): Scene {
  return {
    name,
    description,
    faces,
    width: FRAME_WIDTH,
    height: FRAME_HEIGHT,
    background: '#808080',
    layers: [{ source, crop, to: fitted(crop) }],
  };
}

const NO_FACE_CROPS: readonly [string, SourceName, Rect][] = [
  ['ceiling lamps, left', 'samples', [150, 200, 240, 180]],
  ['ceiling lamps, middle', 'samples', [400, 200, 240, 180]],
  ['ceiling lamps, right of middle', 'samples', [650, 200, 240, 180]],
  ['ceiling lamps, right', 'samples', [900, 200, 240, 180]],
  ['ceiling and red wall', 'samples', [1040, 200, 240, 180]],
  ['black band (covered camera)', 'samples', [300, 150, 400, 30]],
  ['empty kitchen, top left', 'vrm', [476, 2, 112, 84]],
  ['kitchen, right of the person', 'vrm', [722, 2, 75, 56]],
  ['black floor grid', 'vrm', [260, 390, 520, 250]],
  ['black floor grid, close', 'vrm', [500, 450, 240, 180]],
  ['face-ID demo log text', 'faceid', [10, 300, 600, 160]],
  ['face-ID demo check list', 'faceid', [668, 8, 120, 290]],
  ['face-detect demo caption', 'facedetect', [180, 520, 440, 190]],
  ['face-detect demo heading', 'facedetect', [200, 0, 400, 60]],
];

/** Every labelled picture, in a fixed order: one-face cells, two-face pairs, then no-face crops. */
export const LABELLED_IMAGES: readonly Scene[] = [
  ...Array.from({ length: GRID.rows * GRID.columns }, (_unused, index) => {
    const row = Math.floor(index / GRID.columns);
    const column = index % GRID.columns;
    return picture(
      `face-r${row + 1}c${column + 1}`,
      `face-match grid row ${row + 1}, column ${column + 1}`,
      1,
      'facematch',
      cell(row, column),
    );
  }),
  ...Array.from({ length: GRID.rows }, (_unused, row) =>
    [0, 6, 12].map((column) =>
      picture(
        `two-r${row + 1}c${column + 1}`,
        `face-match grid row ${row + 1}, columns ${column + 1} and ${column + 2}`,
        2,
        'facematch',
        cell(row, column, 2),
      ),
    ),
  ).flat(),
  ...NO_FACE_CROPS.map(([description, source, crop], index) =>
    picture(`none-${index + 1}`, description, 0, source, crop),
  ),
];

/** A labelled picture drawn: its scene (name, label) and PNG bytes. */
export interface LabelledPicture {
  readonly scene: Scene;
  readonly png: Buffer;
}

/**
 * Draws every labelled picture in a headless Chromium (or reads them from the cache under
 * test-output/fake-camera/labelled/) and returns them in LABELLED_IMAGES order.
 */
export async function labelledPictures(): Promise<LabelledPicture[]> {
  const dir = path.join(OUTPUT_DIR, 'labelled');
  fs.mkdirSync(dir, { recursive: true });
  const file = (scene: Scene): string => path.join(dir, `${scene.name}.png`);
  const index = path.join(dir, 'labels.json');
  const expected = JSON.stringify(LABELLED_IMAGES);
  const fresh =
    fs.existsSync(index) &&
    fs.readFileSync(index, 'utf8') === expected &&
    LABELLED_IMAGES.every((scene) => fs.existsSync(file(scene)));
  if (!fresh) {
    const browser = await launchDrawingBrowser();
    try {
      const drawn = await drawScenes(browser, LABELLED_IMAGES);
      drawn.forEach((picture, position) => {
        const scene = LABELLED_IMAGES[position];
        if (scene !== undefined) fs.writeFileSync(file(scene), picture.png);
      });
      fs.writeFileSync(index, expected);
    } finally {
      await browser.close();
    }
  }
  return LABELLED_IMAGES.map((scene) => ({ scene, png: fs.readFileSync(file(scene)) }));
}

if (import.meta.main) {
  const pictures = await labelledPictures();
  const count = (faces: number): number => pictures.filter((p) => p.scene.faces === faces).length;
  process.stdout.write(
    `${pictures.length} labelled pictures in ${path.join(OUTPUT_DIR, 'labelled')}: ` +
      `${count(1)} with one face, ${count(2)} with two, ${count(0)} with none\n`,
  );
}
