/**
 * `recording-cost` (issue 27): what an hour of a candidate's recording costs at each recording
 * quality, and whether what is recorded is still useful, against the settings the room used before
 * the recording profile (VP8, webcam 0.8 Mbit/s, screen 1.5 Mbit/s, key frame every 2 s), all in
 * one run.
 *
 * 1. A real `invigil serve` (worker included, so recordings finalise) on a temporary SQLite
 *    database and data folder; the web build from WEB_DIST (or dist/web).
 * 2. Headless Debian Chromium with a fake camera: the flags tests' "face" picture (one man facing
 *    the camera, drawn from a photo in @vladmandic/human's assets) turned into a 640×480 Y4M of 30
 *    frames at 15 fps with sensor-like noise added to every frame, so the encoder cannot treat it
 *    as a still. The shared screen is a 1920×1080 canvas handed to the page by getDisplayMedia: a
 *    page of known text at 14 px (DejaVu Sans), with a line below it that is typed and a clock that
 *    ticks, so the screen changes as a candidate's does.
 * 3. Per variant (low, standard, high, and "before": standard with the old settings forced on the
 *    page's MediaRecorder and no track constraints): one candidate opens the real room page, starts,
 *    records for BENCH_RECORDING_SECONDS (60), finishes; the worker finalises both streams.
 * 4. Cost: the finalised file's bytes per second of recording, as MB (10⁶ bytes) per hour, per
 *    stream. Screen legibility: five frames of the finalised screen WebM (ffmpeg), the text block
 *    cropped and scaled ×3 (lanczos), read by Debian's `tesseract`; characters right =
 *    1 − edit distance / length of the known text (whitespace collapsed), the mean of the frames.
 *    The same OCR of the canvas as drawn (lossless) is the ceiling. Face: one frame every 2 s of
 *    the finalised webcam WebM, through the room's face detector (test/flags/detector-page.ts, the
 *    same Human model and settings); a frame counts when the detector raises no `no_face`.
 *
 * Targets: standard ≤ 100 MB per candidate-hour for webcam + screen, OCR ≥ 95 % of characters,
 * face found in ≥ 95 % of frames. scripts/ensure-tools.sh installs ffmpeg and tesseract-ocr.
 */
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { BrowserContext, Page } from 'playwright-core';
import { type Benchmark, type BenchmarkReport, loadAverage, ROOT, type Target } from './benchmark.ts';
import { freePort, INVIGIL, pick, pickNumber, pickString, startServer } from './processes.ts';
import { createTeacher, serviceEnv } from './service.ts';
import { type Credentials, nonceSource, signedParams, v3Headers } from './signed-client.ts';
import {
  CAMERA_SCENES,
  drawScenes,
  launchChromiumWithCamera,
  launchDrawingBrowser,
  OUTPUT_DIR,
  rgbaToI420,
  VIDEO_HEIGHT,
  VIDEO_WIDTH,
} from '../test/flags/fake-camera.ts';
import { detectPicture, FLAG_SETTINGS_DEFAULTS, openDetectorPage } from '../test/flags/detector-page.ts';

const run = promisify(execFile);

const SECONDS = Number(process.env.BENCH_RECORDING_SECONDS ?? 60);
const MB_PER_HOUR_TARGET = 100;
const OCR_TARGET = 0.95;
const FACE_TARGET = 0.95;

/** The variants, in the order they run: today's profile levels, then the settings before it. */
const VARIANTS = [
  { name: 'low', quality: 'low', before: false },
  { name: 'standard', quality: 'standard', before: false },
  { name: 'high', quality: 'high', before: false },
  { name: 'before (VP8 0.8/1.5)', quality: 'standard', before: true },
] as const;
type Variant = (typeof VARIANTS)[number];

/** The screen: its size, the text block's place and the font. */
const SCREEN = { width: 1920, height: 1080, left: 40, top: 40, lineHeight: 20, font: '14px "DejaVu Sans"' };

/** The known text: exam-like prose, digits and punctuation, 30 lines. */
const KNOWN_LINES = [
  'Question 1. A gas at 300 K and 101.3 kPa occupies 2.50 litres. Find the amount of substance in moles.',
  'Use the ideal gas law pV = nRT with R = 8.314 J/(mol K); give your answer to three significant figures.',
  'Question 2. Explain why the entropy of an isolated system never decreases, and name one exception',
  'that is often claimed in popular writing. Your answer should take about 150 words and cite a source.',
  'Question 3. The heat engine below takes 450 J from the hot reservoir at 600 K in each cycle and',
  'gives 270 J to the cold reservoir at 300 K. Compute its efficiency and compare it with Carnot.',
  'Question 4. Sketch the phase diagram of water between 0 and 400 degrees Celsius; mark the triple',
  'point (273.16 K, 611.657 Pa) and the critical point (647.1 K, 22.064 MPa) on both axes.',
  'Question 5. A copper block of 0.75 kg at 95 C is dropped into 1.20 kg of water at 18 C in an',
  'insulated vessel. What is the final temperature? Assume c(Cu) = 385 and c(water) = 4186 J/(kg K).',
  'Question 6. State the first law of thermodynamics for a closed system and explain each symbol.',
  'Question 7. Derive the work done by an ideal gas during an isothermal expansion from V1 to V2.',
  'Question 8. Why does a refrigerator need work to move heat from cold to hot? Refer to Clausius.',
  'Question 9. Estimate the number of molecules in one breath of air (about 0.5 litres at 37 C).',
  'Question 10. Compare conduction, convection and radiation; give one everyday example of each.',
  'Question 11. A 2.0 kW kettle heats 1.7 kg of water from 15 C to 100 C in 5 minutes and 20 seconds.',
  'What fraction of the electrical energy went into the water? Discuss where the rest may have gone.',
  'Question 12. The Stefan-Boltzmann constant is 5.67e-8 W/(m2 K4). Find the power radiated by a',
  'black body of area 0.25 m2 at 1200 K, and the wavelength at which its spectrum peaks (Wien).',
  'Question 13. Define the specific latent heat of vaporisation and describe how you would measure it',
  'in a school laboratory with a balance, a joulemeter, a beaker and an immersion heater of 60 W.',
  'Question 14. A bicycle pump is pushed in quickly. Is the compression closer to isothermal or to',
  'adiabatic? Justify your choice and predict what happens to the temperature of the air inside.',
  'Question 15. Show that the efficiency of a Carnot engine depends only on the two temperatures.',
  'Question 16. What is the zeroth law of thermodynamics, and why was it named after the other three?',
  'Question 17. Calculate the change in internal energy when 500 J of heat is added and 200 J of work',
  'is done by the system. Then repeat the calculation when the same work is done on the system.',
  'Question 18. Give two reasons why real engines fall short of the Carnot efficiency in practice.',
  'Question 19. A balloon of helium rises through the atmosphere. Describe what happens to its volume.',
  'Question 20. Summarise, in your own words, the difference between heat and temperature. End of paper.',
];
const KNOWN_TEXT = KNOWN_LINES.join(' ');
/** The text block's rectangle in screen pixels, with a margin (what the OCR reads). */
const TEXT_BOX = {
  x: SCREEN.left - 10,
  y: SCREEN.top - 6,
  width: 1000,
  height: KNOWN_LINES.length * SCREEN.lineHeight + 16,
};

function progress(message: string): void {
  process.stderr.write(`  [recording-cost] ${message}\n`);
}

/**
 * Page script (runs before the room's code; plain JavaScript, as the bench has no DOM types):
 * getDisplayMedia answers with the canvas screen, a page of the known text with a typed line and a
 * clock below it, repainted twice a second.
 */
function fakeScreenScript(): string {
  return `(() => {
  const lines = ${JSON.stringify(KNOWN_LINES)};
  const screen = ${JSON.stringify(SCREEN)};
  navigator.mediaDevices.getDisplayMedia = async () => {
    const canvas = document.createElement('canvas');
    canvas.width = screen.width;
    canvas.height = screen.height;
    const context = canvas.getContext('2d');
    const typed = 'The answer to question 1 is n = pV / RT = 101300 * 0.0025 / (8.314 * 300) = 0.1015 mol. ';
    let step = 0;
    const paint = () => {
      step += 1;
      context.fillStyle = '#ffffff';
      context.fillRect(0, 0, screen.width, screen.height);
      context.fillStyle = '#202020';
      context.font = screen.font;
      context.textBaseline = 'top';
      lines.forEach((line, index) => context.fillText(line, screen.left, screen.top + index * screen.lineHeight));
      const below = screen.top + lines.length * screen.lineHeight + 60;
      context.fillText(typed.repeat(3).slice(0, step % 240), screen.left, below);
      context.fillText(new Date().toISOString(), screen.width - 260, screen.height - 40);
      context.fillStyle = '#d0d8e8';
      context.fillRect(0, screen.height - 60, screen.width, 4);
    };
    paint();
    window.setInterval(paint, 500);
    window.__screenCanvas = canvas;
    return canvas.captureStream(5);
  };
})();`;
}

/**
 * Page script for the "before" variant: the room's MediaRecorder takes the old settings (VP8,
 * 0.8 Mbit/s for the camera, 1.5 for the screen, a key frame every 2 s), and no track is shaped.
 */
const SETTINGS_BEFORE = `(() => {
  const Original = window.MediaRecorder;
  class Before extends Original {
    constructor(stream) {
      const camera = stream.getAudioTracks().length > 0;
      super(stream, {
        mimeType: camera ? 'video/webm;codecs=vp8,opus' : 'video/webm;codecs=vp8',
        videoBitsPerSecond: camera ? 800000 : 1500000,
        videoKeyFrameIntervalDuration: 2000,
      });
    }
  }
  window.MediaRecorder = Before;
  MediaStreamTrack.prototype.applyConstraints = () => Promise.resolve();
})();`;

/** Builds (once, cached) the noisy face video: 30 frames, each the face picture with its own noise. */
async function noisyFaceVideo(): Promise<string> {
  const file = path.join(OUTPUT_DIR, 'face-noisy-15fps.y4m');
  if (fs.existsSync(file)) return file;
  fs.mkdirSync(OUTPUT_DIR, { recursive: true });
  const browser = await launchDrawingBrowser();
  let i420: Buffer;
  try {
    const [picture] = await drawScenes(browser, [CAMERA_SCENES.face]);
    if (picture === undefined) throw new Error('the face scene was not drawn');
    i420 = rgbaToI420(picture.rgba, VIDEO_WIDTH, VIDEO_HEIGHT);
  } finally {
    await browser.close();
  }
  const ySize = VIDEO_WIDTH * VIDEO_HEIGHT;
  const parts: Buffer[] = [
    Buffer.from(`YUV4MPEG2 W${VIDEO_WIDTH} H${VIDEO_HEIGHT} F15:1 Ip A1:1 C420jpeg\n`),
  ];
  let seed = 1;
  const random = () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x7fffffff;
  };
  for (let frame = 0; frame < 30; frame += 1) {
    const noisy = Buffer.from(i420);
    for (let index = 0; index < noisy.length; index += 1) {
      // Roughly Gaussian (sum of three uniforms), σ ≈ 3 levels on luma, less on chroma.
      const amplitude = index < ySize ? 6 : 2;
      const noise = (random() + random() + random() - 1.5) * amplitude;
      noisy[index] = Math.max(0, Math.min(255, Math.round((noisy[index] ?? 0) + noise)));
    }
    parts.push(Buffer.from('FRAME\n'), noisy);
  }
  fs.writeFileSync(file, Buffer.concat(parts));
  return file;
}

/** A signed V3 call; GET sends the parameters in the query. Returns the parsed JSON; throws unless 2xx. */
async function v3(
  baseUrl: string,
  credentials: Credentials,
  nonce: () => string,
  method: 'GET' | 'POST',
  route: string,
  params: Record<string, string>,
): Promise<unknown> {
  const signed = signedParams(credentials, params, nonce());
  const pathname = route.replace(/:(\w+)/g, (_match, name: string) => params[name] ?? '');
  const url = new URL(`/api/v3${pathname}`, baseUrl);
  const init: RequestInit = { method, headers: { ...v3Headers(credentials) } };
  if (method === 'GET') {
    for (const [name, value] of Object.entries(signed)) url.searchParams.set(name, value);
  } else {
    init.headers = { ...v3Headers(credentials), 'content-type': 'application/json' };
    init.body = JSON.stringify(signed);
  }
  const answer = await fetch(url, init);
  const text = await answer.text();
  if (answer.status >= 300) throw new Error(`${method} ${route} answered ${answer.status}: ${text}`);
  return JSON.parse(text) as unknown;
}

/** Characters needed to turn `a` into `b` (insertions, deletions, substitutions). */
export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_unused, index) => index);
  for (let i = 1; i <= a.length; i += 1) {
    const current = [i];
    for (let j = 1; j <= b.length; j += 1) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost);
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}

/** Whitespace collapsed to single spaces. */
function normalised(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** Share of the known text's characters the OCR got right: 1 − distance / length (never below 0). */
export function charactersRight(ocr: string, known: string = KNOWN_TEXT): number {
  const expected = normalised(known);
  return Math.max(0, 1 - editDistance(normalised(ocr), expected) / expected.length);
}

/** OCR of the text block of `image` (PNG), scaled ×3 first. */
async function ocrTextBlock(image: string, scale: number, work: string): Promise<string> {
  const box = TEXT_BOX;
  const crop = `crop=${box.width * scale}:${box.height * scale}:${box.x * scale}:${box.y * scale}`;
  const out = path.join(work, `${path.basename(image, '.png')}-ocr.png`);
  await run('ffmpeg', [
    '-v',
    'error',
    '-y',
    '-i',
    image,
    '-vf',
    `${crop},scale=iw*3/${scale}:ih*3/${scale}:flags=lanczos,format=gray`,
    out,
  ]);
  const { stdout } = await run('tesseract', [out, 'stdout', '-l', 'eng', '--psm', '6'], {
    maxBuffer: 1 << 24,
  });
  return stdout;
}

interface StreamFigures {
  readonly bytes: number;
  readonly seconds: number;
  readonly mbPerHour: number;
  readonly codec: string;
  readonly size: string;
}

interface VariantFigures {
  readonly variant: Variant;
  readonly webcam: StreamFigures;
  readonly screen: StreamFigures;
  readonly ocr: readonly number[];
  readonly faces: number;
  readonly frames: number;
}

/** Codec and picture size of the first video stream of `file` (ffprobe). */
async function probe(file: string): Promise<{ codec: string; size: string }> {
  const { stdout } = await run('ffprobe', [
    '-v',
    'error',
    '-select_streams',
    'v:0',
    '-show_entries',
    'stream=codec_name,width,height',
    '-of',
    'csv=p=0',
    file,
  ]);
  const [codec = '?', width = '?', height = '?'] = stdout.trim().split(',');
  return { codec, size: `${width}×${height}` };
}

/** Runs one candidate through the room at `variant`; returns the finalised files. */
async function recordVariant(
  context: BrowserContext,
  baseUrl: string,
  credentials: Credentials,
  nonce: () => string,
  variant: Variant,
  work: string,
): Promise<{ webcam: string; screen: string; webcamSeconds: number; screenSeconds: number }> {
  const exam = await v3(baseUrl, credentials, nonce, 'POST', '/exams', {
    name: `Recording cost ${variant.name}`,
    type: 'record_review',
    duration_minutes: '30',
    web_cam: 'true',
    screen_share: 'true',
    recording_quality: variant.quality,
  });
  const examId = String(pickNumber(exam, 'exam.id'));
  const student = await v3(baseUrl, credentials, nonce, 'POST', '/exams/:exam_id/student_sessions', {
    exam_id: examId,
    name: 'Bench Candidate',
    email: 'candidate@example.org',
    skip_requirements: 'true',
  });
  const sessionId = String(pickNumber(student, 'student.id'));
  const token = pickString(student, 'student.token');

  const page: Page = await context.newPage();
  await page.addInitScript({ content: fakeScreenScript() });
  if (variant.before) await page.addInitScript({ content: SETTINGS_BEFORE });
  await page.goto(`${baseUrl}/room/${token}`);
  await page.getByRole('button', { name: 'Start the exam' }).click();
  await page.getByRole('heading', { name: 'Exam in progress' }).waitFor();
  await page.getByRole('button', { name: 'Start recording' }).click();
  await page.locator('#recording-state', { hasText: 'Recording your camera and screen' }).waitFor();
  progress(`${variant.name}: recording ${SECONDS} s`);
  await page.waitForTimeout(SECONDS * 1000);
  await page.getByRole('button', { name: 'Finish the exam' }).click();
  await page.getByRole('button', { name: 'Yes, finish now' }).click();
  await page.getByRole('heading', { name: 'Your exam is finished' }).waitFor({ timeout: 5 * 60_000 });
  await page.close();

  progress(`${variant.name}: waiting for the finalisation`);
  const deadline = Date.now() + 5 * 60_000;
  for (;;) {
    const answer = await v3(baseUrl, credentials, nonce, 'GET', '/student_sessions/:id/recordings', {
      id: sessionId,
    });
    const recordings = pick(answer, 'recordings') as Record<string, unknown>[];
    const done = recordings.filter((recording) => recording.status === 'completed');
    const failed = recordings.filter((recording) => recording.status === 'failed');
    if (failed.length > 0) throw new Error(`${variant.name}: a recording failed: ${JSON.stringify(failed)}`);
    if (done.length === 2) {
      const files: Record<string, { file: string; seconds: number }> = {};
      for (const recording of done) {
        const source = String(recording.source);
        const file = path.join(work, `${variant.quality}${variant.before ? '-before' : ''}-${source}.webm`);
        const bytes = await fetch(new URL(String(recording.url), baseUrl));
        fs.writeFileSync(file, Buffer.from(await bytes.arrayBuffer()));
        files[source] = { file, seconds: Number(recording.duration_seconds) };
      }
      const webcam = files.webcam;
      const screen = files.screen;
      if (webcam === undefined || screen === undefined) throw new Error('webcam or screen missing');
      return {
        webcam: webcam.file,
        screen: screen.file,
        webcamSeconds: webcam.seconds,
        screenSeconds: screen.seconds,
      };
    }
    if (Date.now() > deadline)
      throw new Error(`${variant.name}: not finalised: ${JSON.stringify(recordings)}`);
    await new Promise((resolve) => setTimeout(resolve, 2000));
  }
}

function streamFigures(
  file: string,
  seconds: number,
  probed: { codec: string; size: string },
): StreamFigures {
  const bytes = fs.statSync(file).size;
  return { bytes, seconds, mbPerHour: ((bytes / Math.max(seconds, 1)) * 3600) / 1e6, ...probed };
}

/** Frames of `file` at `times` seconds, as PNGs in `work`. */
async function frames(file: string, times: readonly number[], work: string, tag: string): Promise<string[]> {
  const out: string[] = [];
  for (const time of times) {
    const png = path.join(work, `${tag}-${String(time).padStart(3, '0')}.png`);
    await run('ffmpeg', ['-v', 'error', '-y', '-ss', String(time), '-i', file, '-frames:v', '1', png]);
    if (fs.existsSync(png)) out.push(png);
  }
  return out;
}

function percent(value: number): string {
  return `${(value * 100).toFixed(1)}%`;
}

export const recordingCost: Benchmark = {
  name: 'recording-cost',
  title: 'MB per candidate-hour per quality level, screen OCR and face detection on the finalised files',
  async run(): Promise<BenchmarkReport> {
    execFileSync('bash', [path.join(ROOT, 'scripts', 'ensure-tools.sh')], { stdio: 'inherit' });
    const loadBefore = loadAverage();
    const work = fs.mkdtempSync(path.join(os.tmpdir(), 'invigil-recording-cost-'));
    const y4m = await noisyFaceVideo();
    const port = await freePort();
    const env: NodeJS.ProcessEnv = {
      ...serviceEnv(`sqlite:${path.join(work, 'invigil.sqlite')}`, path.join(work, 'data'), port),
      WEB_DIST: process.env.WEB_DIST ?? path.join(ROOT, 'dist', 'web'),
    };
    fs.mkdirSync(path.join(work, 'data'), { recursive: true });
    progress('creating an institute and a teacher');
    const credentials = await createTeacher(env);
    const server = await startServer({
      label: 'invigil serve',
      command: INVIGIL,
      args: ['serve'],
      env,
      port,
      readyPath: '/healthz',
    });
    const nonce = nonceSource();
    const results: VariantFigures[] = [];
    let ceiling: number | undefined;
    const browser = await launchChromiumWithCamera(y4m);
    const detectorBrowser = await launchDrawingBrowser();
    try {
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      const detectorContext = await detectorBrowser.newContext();
      const detector = await openDetectorPage(detectorContext, FLAG_SETTINGS_DEFAULTS);
      // The ceiling: OCR of the screen as drawn, without any video coding (a page of the service's
      // origin, a secure context, so the page has mediaDevices).
      const drawing = await context.newPage();
      await drawing.addInitScript({ content: fakeScreenScript() });
      await drawing.goto(`${server.url}/healthz`);
      const dataUrl = String(
        await drawing.evaluate(
          '(async () => { await navigator.mediaDevices.getDisplayMedia(); return window.__screenCanvas.toDataURL("image/png"); })()',
        ),
      );
      await drawing.close();
      const drawn = path.join(work, 'drawn.png');
      fs.writeFileSync(drawn, Buffer.from(dataUrl.split(',')[1] ?? '', 'base64'));
      ceiling = charactersRight(await ocrTextBlock(drawn, 1, work));
      for (const variant of VARIANTS) {
        const files = await recordVariant(context, server.url, credentials, nonce, variant, work);
        const webcam = streamFigures(files.webcam, files.webcamSeconds, await probe(files.webcam));
        const screen = streamFigures(files.screen, files.screenSeconds, await probe(files.screen));
        const screenScale = Number(screen.size.split('×')[0]) / SCREEN.width || 1;
        const last = Math.max(2, Math.floor(Math.min(files.screenSeconds, SECONDS)) - 2);
        const screenTimes = [0.2, 0.4, 0.6, 0.8, 0.95].map((share) => Math.round(last * share * 10) / 10);
        const ocr: number[] = [];
        for (const png of await frames(
          files.screen,
          screenTimes,
          work,
          `${variant.quality}${variant.before ? 'b' : ''}-screen`,
        )) {
          ocr.push(charactersRight(await ocrTextBlock(png, screenScale, work)));
        }
        const faceTimes = Array.from({ length: Math.floor(last / 2) }, (_unused, index) => 1 + index * 2);
        let faces = 0;
        const facePngs = await frames(
          files.webcam,
          faceTimes,
          work,
          `${variant.quality}${variant.before ? 'b' : ''}-webcam`,
        );
        for (const png of facePngs) {
          const detection = await detectPicture(detector.page, fs.readFileSync(png));
          if (!('no_face' in detection.signals)) faces += 1;
        }
        const figures = { variant, webcam, screen, ocr, faces, frames: facePngs.length };
        results.push(figures);
        progress(
          `${variant.name}: webcam ${webcam.mbPerHour.toFixed(1)} MB/h, screen ${screen.mbPerHour.toFixed(1)} MB/h, ` +
            `OCR ${ocr.map(percent).join(' ')}, face ${faces}/${facePngs.length}`,
        );
      }
    } finally {
      await browser.close();
      await detectorBrowser.close();
      await server.stop();
    }

    const loadAfter = loadAverage();
    if (process.env.BENCH_KEEP_FILES === undefined) fs.rmSync(work, { recursive: true, force: true });
    else progress(`files kept in ${work}`);

    const lines = [
      `load average before ${JSON.stringify(loadBefore)}, after ${JSON.stringify(loadAfter)}`,
      `${SECONDS} s per variant through the room page and a real invigil serve (SQLite), Chromium ${chromiumVersion()}`,
      `OCR of the screen as drawn (no video coding): ${percent(ceiling)} of characters right`,
      'variant               webcam MB/h (codec, size)        screen MB/h (codec, size)         total MB/h  kbit/s  OCR mean (min)    face',
    ];
    for (const result of results) {
      const total = result.webcam.mbPerHour + result.screen.mbPerHour;
      const mean = meanOf(result.ocr);
      const min = Math.min(...result.ocr);
      lines.push(
        `${result.variant.name.padEnd(21)} ${result.webcam.mbPerHour.toFixed(1).padStart(6)} (${result.webcam.codec}, ${result.webcam.size})`.padEnd(
          55,
        ) +
          `${result.screen.mbPerHour.toFixed(1).padStart(6)} (${result.screen.codec}, ${result.screen.size})`.padEnd(
            34,
          ) +
          `${total.toFixed(1).padStart(10)}  ${((total * 1e6 * 8) / 3600 / 1000).toFixed(0).padStart(6)}  ` +
          `${percent(mean).padStart(6)} (${percent(min)})`.padEnd(18) +
          `${result.faces}/${result.frames} (${percent(result.faces / Math.max(result.frames, 1))})`,
      );
    }
    const standard = results.find((result) => result.variant.name === 'standard');
    const targets: Target[] = [];
    if (standard !== undefined) {
      const total = standard.webcam.mbPerHour + standard.screen.mbPerHour;
      targets.push(
        {
          name: 'standard MB/h',
          met: total <= MB_PER_HOUR_TARGET,
          measured: round(total),
          limit: MB_PER_HOUR_TARGET,
        },
        {
          name: 'standard OCR',
          met: meanOf(standard.ocr) >= OCR_TARGET,
          measured: round(meanOf(standard.ocr)),
          limit: OCR_TARGET,
        },
        {
          name: 'standard face',
          met: faceShare(standard) >= FACE_TARGET,
          measured: round(faceShare(standard)),
          limit: FACE_TARGET,
        },
      );
    }
    for (const result of results.filter((other) => other !== standard)) {
      const tag = `${result.variant.quality}${result.variant.before ? '-before' : ''}`;
      targets.push(
        {
          name: `${tag} OCR`,
          met: meanOf(result.ocr) >= OCR_TARGET,
          measured: round(meanOf(result.ocr)),
          limit: OCR_TARGET,
        },
        {
          name: `${tag} face`,
          met: faceShare(result) >= FACE_TARGET,
          measured: round(faceShare(result)),
          limit: FACE_TARGET,
        },
      );
    }
    return { lines, targets, problems: [], figures: { results, ceiling, loadBefore, loadAfter } };
  },
};

function meanOf(values: readonly number[]): number {
  return values.reduce((sum, value) => sum + value, 0) / Math.max(values.length, 1);
}

function faceShare(result: VariantFigures): number {
  return result.faces / Math.max(result.frames, 1);
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}

function chromiumVersion(): string {
  try {
    return execFileSync('/usr/bin/chromium', ['--version'], { encoding: 'utf8' }).trim();
  } catch {
    return '(version unknown)';
  }
}
