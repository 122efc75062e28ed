/**
 * `console-typing`: how long a key takes to reach the screen in the console's instructions editor
 * (TipTap in Svelte) on a 2 000-character document, against a plain `<textarea>` of the same
 * console (the exam settings' "Instructions for the reviewer", 2 000 characters too) in the same
 * run and the same Chromium.
 *
 * Key-to-paint, measured in the page: a capturing `keydown` listener notes the event's time stamp;
 * the next animation frame posts a message to itself, and the message's arrival (the frame has been
 * produced) ends the measurement. Keys are typed one at a time at the end of the text through
 * Chromium's input pipeline (DevTools `Input.dispatchKeyEvent`), each after the previous one was
 * measured, after WARMUP_KEYS unmeasured ones. Any page error while typing is reported as a problem.
 *
 * `BENCH_CONSOLE_DIST=<dir>` serves the console's files from another build (e.g. one made from an
 * older commit) to the same pages, for before/after figures from one service.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Page, Route } from 'playwright-core';
import { type Benchmark, type BenchmarkReport, loadAverage, type Target } from './benchmark.ts';
import { freePort } from './processes.ts';

const DOCUMENT_CHARACTERS = 2000;
const WARMUP_KEYS = 15;
const MEASURED_KEYS = 120;
/** The issue's goal for the editor, per key (median). */
const EDITOR_LIMIT_MS = 30;
const PASSWORD = 'console typing benchmark passphrase';

/** Installed before any page script: the key-to-paint recorder (browser code as text, see above). */
const RECORDER = `
  window.__keyPaint = [];
  window.addEventListener('keydown', (event) => {
    const start = event.timeStamp;
    requestAnimationFrame(() => {
      const channel = new MessageChannel();
      channel.port1.onmessage = () => window.__keyPaint.push(performance.now() - start);
      channel.port2.postMessage(null);
    });
  }, { capture: true });
`;

/** Text of about `length` characters in sentences, without the letters typed (so typing is visible). */
function filler(length: number): string {
  const sentence = 'Read every question before you begin, then answer them in any order you like. ';
  return sentence.repeat(Math.ceil(length / sentence.length)).slice(0, length);
}

/** The same text as paragraphs of HTML, 2 000 characters of text in all. */
function fillerHtml(length: number): string {
  const text = filler(length);
  const paragraphs: string[] = [];
  for (let at = 0; at < text.length; at += 200) paragraphs.push(`<p>${text.slice(at, at + 200)}</p>`);
  return paragraphs.join('');
}

function percentile(sorted: readonly number[], share: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(share * sorted.length))] ?? Number.NaN;
}

interface Timing {
  readonly median: number;
  readonly p95: number;
  readonly mean: number;
  readonly keys: number;
}

function summarise(samples: readonly number[]): Timing {
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    median: percentile(sorted, 0.5),
    p95: percentile(sorted, 0.95),
    mean: sorted.reduce((sum, value) => sum + value, 0) / Math.max(1, sorted.length),
    keys: sorted.length,
  };
}

function shown(timing: Timing): string {
  return (
    `median ${timing.median.toFixed(1)} ms, p95 ${timing.p95.toFixed(1)} ms, ` +
    `mean ${timing.mean.toFixed(1)} ms over ${timing.keys} keys`
  );
}

/** Serves /console/* from `dir` (another build) instead of the service's own build. */
async function serveConsoleFrom(page: Page, baseUrl: string, dir: string): Promise<void> {
  const types: Record<string, string> = {
    '.js': 'text/javascript; charset=utf-8',
    '.css': 'text/css; charset=utf-8',
    '.html': 'text/html; charset=utf-8',
    '.svg': 'image/svg+xml',
    '.woff2': 'font/woff2',
  };
  await page.route(`${baseUrl}/console/**`, async (route: Route) => {
    const { pathname } = new URL(route.request().url());
    const asset = pathname.startsWith('/console/assets/')
      ? path.join(dir, pathname.slice('/console/'.length))
      : '';
    const file = asset !== '' && fs.existsSync(asset) ? asset : path.join(dir, 'index.html');
    await route.fulfill({
      status: 200,
      body: fs.readFileSync(file),
      headers: { 'content-type': types[path.extname(file)] ?? 'application/octet-stream' },
    });
  });
}

/** Types MEASURED_KEYS keys (after WARMUP_KEYS) into the focused field; returns each key's time. */
async function typeAndMeasure(page: Page): Promise<number[]> {
  const letters = 'abcdefghij klmnopqrstuvwxyz';
  // Keys pressed to place the cursor were recorded too: start from none.
  await page.evaluate('window.__keyPaint = []');
  for (let index = 0; index < WARMUP_KEYS + MEASURED_KEYS; index += 1) {
    await page.keyboard.press(letters[index % letters.length] ?? 'a');
    // A function, not a string: the console's CSP forbids evaluating strings.
    // (Serialised into the page, so self-contained; typed without the DOM's types.)
    await page.waitForFunction(
      (count) => (globalThis as unknown as { __keyPaint: number[] }).__keyPaint.length >= count,
      index + 1,
      { polling: 'raf' },
    );
  }
  const all = await page.evaluate<number[]>('window.__keyPaint');
  return all.slice(WARMUP_KEYS);
}

export const consoleTyping: Benchmark = {
  name: 'console-typing',
  title: 'console instructions editor: key-to-paint on a 2,000-character document vs a plain field',
  async run(): Promise<BenchmarkReport> {
    const { startTestServer } = await import('../test/helpers/server.ts');
    const { launchChromiumBrowser } = await import('../test/helpers/browser.ts');
    const otherBuild = process.env.BENCH_CONSOLE_DIST;
    if (otherBuild !== undefined && !fs.existsSync(path.join(otherBuild, 'index.html'))) {
      throw new Error(`BENCH_CONSOLE_DIST=${otherBuild} holds no index.html`);
    }
    const port = await freePort();
    const baseUrl = `http://127.0.0.1:${port}`;
    const server = await startTestServer('sqlite', { port, env: { PUBLIC_URL: baseUrl } });
    const chromium = await launchChromiumBrowser();
    /** Page errors, each message once with how many times it came. */
    const pageErrors = new Map<string, number>();
    try {
      const instituteId = await server.institute('Benchmark University');
      const email = 'office@example.org';
      const user = await server.user(instituteId, 'administrator', email);
      await server.app.services.staffAuth.setPassword(user.id, PASSWORD);
      const created = await user.client.v3('POST', '/exams', {
        name: 'Typing benchmark',
        type: 'record_review',
        use_duration: false,
        restrictions: filler(DOCUMENT_CHARACTERS),
      });
      if (created.status !== 201) throw new Error(`creating the exam: ${created.status} ${created.text}`);
      const examId = (created.json as { exam: { id: number } }).exam.id;
      const document = await user.client.v3('POST', '/exams/:exam_id/documents', {
        exam_id: examId,
        exam_content: fillerHtml(DOCUMENT_CHARACTERS),
      });
      if (document.status !== 201)
        throw new Error(`creating the document: ${document.status} ${document.text}`);

      const context = await chromium.newContext({ viewport: { width: 1280, height: 900 } });
      const page = await context.newPage();
      page.on('pageerror', (error) =>
        pageErrors.set(error.message, (pageErrors.get(error.message) ?? 0) + 1),
      );
      await page.addInitScript(RECORDER);
      if (otherBuild !== undefined) await serveConsoleFrom(page, baseUrl, otherBuild);
      await page.goto(`${baseUrl}/console/sign-in`);
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL((url) => !url.pathname.startsWith('/console/sign-in'));

      // The yardstick: the plain textarea, cursor at the end of its 2 000 characters.
      await page.goto(`${baseUrl}/console/exams/${examId}`);
      const plainField = page.locator('#exam-restrictions');
      await plainField.waitFor();
      await plainField.focus();
      await page.keyboard.press('Control+End');
      const plain = summarise(await typeAndMeasure(page));

      // The subject: the instructions editor, cursor at the end of its 2 000 characters.
      await page.goto(`${baseUrl}/console/exams/${examId}/instructions`);
      const editor = page.getByRole('textbox', { name: 'Instructions for students' });
      await editor.waitFor();
      await editor.click();
      await page.keyboard.press('Control+End');
      const rich = summarise(await typeAndMeasure(page));
      const typed = await editor.innerText();
      const problems = [...pageErrors].map(([message, times]) => `page error ${times}×: ${message}`);
      if (typed.length < DOCUMENT_CHARACTERS + MEASURED_KEYS) {
        problems.push(`the editor holds ${typed.length} characters after typing: keys were lost`);
      }
      await context.close();

      const ratio = rich.median / plain.median;
      const load = loadAverage();
      const targets: Target[] = [
        {
          name: 'editor key-to-paint (median, ms)',
          met: rich.median <= EDITOR_LIMIT_MS,
          measured: Number(rich.median.toFixed(1)),
          limit: EDITOR_LIMIT_MS,
        },
      ];
      return {
        lines: [
          `console build: ${otherBuild ?? 'dist/web (the service’s own)'}`,
          `plain textarea (${DOCUMENT_CHARACTERS} chars): ${shown(plain)}`,
          `instructions editor (${DOCUMENT_CHARACTERS} chars): ${shown(rich)}`,
          `editor / plain field: ${ratio.toFixed(2)}× (median)`,
          `load average at the end of typing ${JSON.stringify(load)}`,
        ],
        figures: {
          build: otherBuild ?? 'dist/web',
          plain,
          editor: rich,
          ratio,
          documentCharacters: DOCUMENT_CHARACTERS,
        },
        targets,
        problems,
      };
    } finally {
      await chromium.close();
      await server.close();
    }
  },
};
