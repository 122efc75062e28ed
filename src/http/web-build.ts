import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { sendStaticAsset, staticAsset, type StaticAsset } from './static-asset.ts';

/**
 * The build of web/ (`npm run build:web`, web/vite.config.ts): the console and the candidate pages'
 * scripts, read into memory once per process. Pages name an entry of web/entries.ts and get the
 * hashed files it needs from Vite's manifest; the files themselves are served at /assets/*.
 */

const brotliCompress = promisify(zlib.brotliCompress);
const gzip = promisify(zlib.gzip);

/**
 * Where the build lands: dist/web in the repository, or WEB_DIST (a development knob beside the
 * build's WEB_OUT_DIR, so several builds can be tried side by side).
 */
export const WEB_DIST = process.env.WEB_DIST ?? path.resolve(import.meta.dirname, '../../dist/web');

/** The files a page loads for one entry: its module script, its style sheets and the modules it preloads. */
export interface EntryFiles {
  readonly script: string;
  readonly styles: readonly string[];
  readonly preloads: readonly string[];
  /** The entry's message catalogue per language (web/i18n/messages-plugin.ts), by locale. */
  readonly messages: ReadonlyMap<string, string>;
}

export interface WebBuild {
  /** Hashed files by name (the part after /assets/). */
  readonly assets: ReadonlyMap<string, StaticAsset>;
  /** A file of the build by its path inside dist/web (e.g. console/index.html); undefined when absent. */
  file(relative: string): StaticAsset | undefined;
  /** The files of entry `name` (web/entries.ts); undefined when the build lacks it. */
  entry(name: string): EntryFiles | undefined;
}

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
  '.wasm': 'application/wasm',
  '.json': 'application/json; charset=utf-8',
};

/** One chunk of Vite's manifest (only the fields read here). */
interface ManifestChunk {
  readonly file: string;
  readonly name?: string;
  readonly isEntry?: boolean;
  readonly imports?: readonly string[];
  readonly css?: readonly string[];
  readonly dynamicImports?: readonly string[];
}

function isManifestChunk(value: unknown): value is ManifestChunk {
  return (
    typeof value === 'object' && value !== null && typeof (value as { file?: unknown }).file === 'string'
  );
}

function readManifest(dist: string): Map<string, ManifestChunk> {
  const file = path.join(dist, '.vite/manifest.json');
  if (!fs.existsSync(file)) return new Map();
  const parsed: unknown = JSON.parse(fs.readFileSync(file, 'utf8'));
  const chunks = new Map<string, ManifestChunk>();
  if (typeof parsed !== 'object' || parsed === null) return chunks;
  for (const [key, chunk] of Object.entries(parsed)) if (isManifestChunk(chunk)) chunks.set(key, chunk);
  return chunks;
}

/**
 * The files of each entry: its script, and the CSS and static imports of it and of every chunk it
 * imports (each once; a chunk's style sheets after those of the chunks it imports).
 */
function entriesOf(manifest: ReadonlyMap<string, ManifestChunk>): Map<string, EntryFiles> {
  const entries = new Map<string, EntryFiles>();
  for (const chunk of manifest.values()) {
    if (chunk.isEntry !== true || chunk.name === undefined) continue;
    const styles = new Set<string>();
    const preloads = new Set<string>();
    const seen = new Set<ManifestChunk>();
    const visit = (current: ManifestChunk, top: boolean) => {
      if (seen.has(current)) return;
      seen.add(current);
      if (!top) preloads.add(`/${current.file}`);
      for (const key of current.imports ?? []) {
        const imported = manifest.get(key);
        if (imported !== undefined) visit(imported, false);
      }
      // After the imports' sheets, as Vite orders them: a page's own rules override a shared base.
      for (const sheet of current.css ?? []) styles.add(`/${sheet}`);
    };
    visit(chunk, true);
    // The catalogues the entry loads by language: `virtual:messages/<page>/<locale>` in the manifest.
    const messages = new Map<string, string>();
    for (const key of chunk.dynamicImports ?? []) {
      const locale = /virtual:messages\/[^/]+\/([^/]+)$/.exec(key)?.[1];
      const file = manifest.get(key)?.file;
      if (locale !== undefined && file !== undefined) messages.set(locale, `/${file}`);
    }
    entries.set(chunk.name, {
      script: `/${chunk.file}`,
      styles: [...styles],
      preloads: [...preloads],
      messages,
    });
  }
  return entries;
}

function readAssets(dist: string): Map<string, StaticAsset> {
  const assets = new Map<string, StaticAsset>();
  const dir = path.join(dist, 'assets');
  for (const name of fs.existsSync(dir) ? fs.readdirSync(dir) : []) {
    const type = CONTENT_TYPES[path.extname(name)];
    if (type !== undefined) assets.set(name, staticAsset(fs.readFileSync(path.join(dir, name)), type));
  }
  return assets;
}

const builds = new Map<string, WebBuild>();

/**
 * The build in `dist` (by default the service's own), read on first use and kept for the process:
 * a new build is picked up by a restart, like any new release. A missing build reads as empty.
 */
export function webBuild(dist: string = WEB_DIST): WebBuild {
  const known = builds.get(dist);
  if (known !== undefined) return known;
  const assets = readAssets(dist);
  const entries = entriesOf(readManifest(dist));
  const files = new Map<string, StaticAsset | undefined>();
  const build: WebBuild = {
    assets,
    file(relative) {
      if (!files.has(relative)) {
        const full = path.join(dist, relative);
        const type = CONTENT_TYPES[path.extname(relative)];
        files.set(
          relative,
          type !== undefined && fs.existsSync(full) ? staticAsset(fs.readFileSync(full), type) : undefined,
        );
      }
      return files.get(relative);
    },
    entry: (name) => entries.get(name),
  };
  builds.set(dist, build);
  return build;
}

/**
 * The `<head>` tags that load `entry`: style sheets first, then the module script and the chunks it
 * imports as module preloads, so the browser fetches them in parallel rather than one after another;
 * with `locale`, the catalogue of that language too (the page loads it before it draws anything).
 */
export function entryHeadTags(entry: EntryFiles, locale?: string): string {
  const catalogue = locale === undefined ? undefined : entry.messages.get(locale);
  return [
    ...entry.styles.map((href) => `<link rel="stylesheet" href="${href}">`),
    ...entry.preloads.map((href) => `<link rel="modulepreload" href="${href}">`),
    ...(catalogue === undefined ? [] : [`<link rel="modulepreload" href="${catalogue}">`]),
    `<script type="module" src="${entry.script}"></script>`,
  ].join('\n');
}

/**
 * The policy sent with every built file. A document's own policy governs the scripts it loads; this
 * one matters for a Web Worker, whose script's response sets the worker's rules: its own modules and
 * WebAssembly (the flags' detectors), fetches from the service only.
 */
export const ASSET_POLICY = "default-src 'none'; script-src 'self' 'wasm-unsafe-eval'; connect-src 'self'";

/** The encodings the built files are offered in, the browser's preference first. */
type Encoding = 'br' | 'gzip';

/** What is worth packing: text, JSON, WebAssembly and SVG (images and fonts come packed), from 1 KiB up. */
const PACKABLE_TYPE = /^(text\/|application\/(json|wasm)|image\/svg)/;
const MIN_PACKED_BYTES = 1024;

/** Each file's packed forms, made on first request (in zlib's thread pool) and kept with the build. */
const packed = new WeakMap<StaticAsset, Map<Encoding, Promise<StaticAsset | undefined>>>();

/** The best encoding `header` (Accept-Encoding) allows: brotli, then gzip; undefined for neither. */
export function chosenEncoding(header: string | undefined): Encoding | undefined {
  const allowed = new Set<string>();
  for (const item of (header ?? '').slice(0, 1000).split(',')) {
    const [token = '', ...params] = item.split(';').map((part) => part.trim().toLowerCase());
    const refused = params.some((param) => /^q=0(\.0*)?$/.test(param));
    if (!refused) allowed.add(token);
  }
  if (allowed.has('br')) return 'br';
  if (allowed.has('gzip')) return 'gzip';
  return undefined;
}

function pack(file: StaticAsset, encoding: Encoding): Promise<StaticAsset | undefined> {
  let forms = packed.get(file);
  if (forms === undefined) {
    forms = new Map();
    packed.set(file, forms);
  }
  let form = forms.get(encoding);
  if (form === undefined) {
    const bytes =
      encoding === 'br'
        ? brotliCompress(file.body, {
            params: {
              [zlib.constants.BROTLI_PARAM_QUALITY]: zlib.constants.BROTLI_MAX_QUALITY,
              [zlib.constants.BROTLI_PARAM_SIZE_HINT]: file.body.length,
            },
          })
        : gzip(file.body, { level: zlib.constants.Z_BEST_COMPRESSION });
    form = bytes.then(
      (body) =>
        body.length < file.body.length
          ? { body, contentType: file.contentType, etag: `${file.etag.slice(0, -1)}-${encoding}"` }
          : undefined,
      () => undefined,
    );
    forms.set(encoding, form);
  }
  return form;
}

/**
 * Answers with `name` from `build` at a year's immutable caching (its name changes with its content),
 * packed with brotli or gzip when the browser takes it, or 404. Returns the reply.
 */
export async function sendBuiltAsset(
  request: Parameters<typeof sendStaticAsset>[0],
  reply: FastifyReply,
  build: WebBuild,
  name: string,
): Promise<FastifyReply> {
  reply.header('x-content-type-options', 'nosniff').header('content-security-policy', ASSET_POLICY);
  const file = build.assets.get(name);
  if (file === undefined) return reply.code(404).type('text/plain; charset=utf-8').send('Not Found');
  const cache = 'public, max-age=31536000, immutable';
  if (!PACKABLE_TYPE.test(file.contentType) || file.body.length < MIN_PACKED_BYTES) {
    return sendStaticAsset(request, reply, file, cache);
  }
  reply.header('vary', 'accept-encoding');
  const encoding = chosenEncoding(request.headers['accept-encoding']);
  const form = encoding === undefined ? undefined : await pack(file, encoding);
  if (encoding === undefined || form === undefined) return sendStaticAsset(request, reply, file, cache);
  return sendStaticAsset(request, reply.header('content-encoding', encoding), form, cache);
}

/** Registers /assets/:name, the hashed files of the web build. */
export function registerWebAssets(app: FastifyInstance, build: WebBuild = webBuild()): void {
  app.get<{ Params: { name: string } }>('/assets/:name', { schema: { hide: true } }, (request, reply) =>
    sendBuiltAsset(request, reply, build, request.params.name),
  );
}

/**
 * Redirects `address` (an old, unhashed script address kept for clients and pages that import it by
 * name) to the current hashed file of `entryName`, revalidated each time so a new release is followed.
 */
export function registerEntryAlias(
  app: FastifyInstance,
  address: string,
  entryName: string,
  build: WebBuild = webBuild(),
): void {
  app.get(address, { schema: { hide: true } }, (_request, reply) => {
    const entry = build.entry(entryName);
    if (entry === undefined) return reply.code(404).type('text/plain; charset=utf-8').send('Not Found');
    return reply.header('cache-control', 'no-cache').redirect(entry.script, 302);
  });
}
