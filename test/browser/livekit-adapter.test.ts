/**
 * The LiveKit adapter (web/live/livekit.ts, at its old address /live/assets/livekit.js) in Chromium, without a LiveKit server (none
 * runs in the test suite): it loads livekit-client from the service under a strict CSP, reports
 * `connecting` while LiveKit cannot be joined, keeps trying while LiveKit is down and stops when the
 * token is refused or the caller closes, never stops the caller's camera, and answers unknown stats
 * as nulls. Media through a real LiveKit is not tested here (docs: what is and is not tested).
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import type { Page } from 'playwright-core';
import { registerLiveAssets } from '../../src/http/live/assets.routes.ts';
import { registerWebAssets } from '../../src/http/web-build.ts';
import { liveConnectSources } from '../../src/live/csp.ts';
import { launchChromium, type TestBrowser } from '../helpers/browser.ts';

/** What the fake LiveKit does: refuse every token (401), or fail as a server that is down (503). */
type FakeMode = 'refuse' | 'down';

/** A LiveKit address that answers only failures, counting the join attempts (WebSocket upgrades). */
class FailingLivekit {
  mode: FakeMode = 'refuse';
  joins = 0;
  validations = 0;
  private readonly server = http.createServer((request, response) => {
    if ((request.url ?? '').startsWith('/rtc/v1/validate')) this.validations += 1;
    const status = this.mode === 'refuse' ? 401 : 503;
    response.writeHead(status, { 'access-control-allow-origin': '*', 'content-type': 'text/plain' });
    response.end(this.mode === 'refuse' ? 'invalid token' : 'unavailable');
  });

  constructor() {
    this.server.on('upgrade', (_request, socket) => {
      this.joins += 1;
      const status = this.mode === 'refuse' ? '401 Unauthorized' : '503 Service Unavailable';
      socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
    });
  }

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `ws://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** The page's policy: scripts only from the service (no eval), connections to it and to LiveKit. */
function pagePolicy(livekitUrl: string): string {
  const connect = [
    "'self'",
    ...liveConnectSources({
      publicUrl: 'http://127.0.0.1',
      live: { engine: 'livekit', url: livekitUrl, apiKey: 'k', apiSecret: 's', iceServers: [] },
    }),
  ];
  return [
    "default-src 'none'",
    "script-src 'self'",
    `connect-src ${connect.join(' ')}`,
    "media-src 'self' blob:",
    "base-uri 'none'",
  ].join('; ');
}

async function sleep(ms: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms));
}

/** Waits until `check` holds, polling; fails after `limitMs`. */
async function until(check: () => boolean | Promise<boolean>, limitMs: number, what: string): Promise<void> {
  const end = Date.now() + limitMs;
  while (!(await check())) {
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

describe('LiveKit adapter in Chromium, without a LiveKit server', () => {
  const livekit = new FailingLivekit();
  let livekitUrl: string;
  let app: FastifyInstance;
  let chromium: TestBrowser;
  let page: Page;
  const pageErrors: string[] = [];

  before(async () => {
    livekitUrl = await livekit.start();
    app = Fastify();
    registerLiveAssets(app);
    registerWebAssets(app);
    app.get('/', (_request, reply) =>
      reply
        .header('content-security-policy', pagePolicy(livekitUrl))
        .type('text/html; charset=utf-8')
        .send(
          '<!DOCTYPE html><html lang="en"><head><title>LiveKit adapter</title></head><body></body></html>',
        ),
    );
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as AddressInfo;
    chromium = await launchChromium();
    page = await chromium.browser.newPage();
    page.on('pageerror', (error) => pageErrors.push(error.message));
    await page.goto(`http://127.0.0.1:${port}/`);
    // Everything the page's policy refuses is collected, so the test can say none was.
    await page.evaluate(() => {
      const violations: string[] = [];
      Object.assign(window, { violations });
      document.addEventListener('securitypolicyviolation', (event) =>
        violations.push(`${event.violatedDirective} ${event.blockedURI}`),
      );
    });
  });

  after(async () => {
    await chromium?.close();
    await app?.close();
    await livekit.stop();
  });

  /** The page's join for the fake LiveKit. */
  function join(): { engine: 'livekit'; url: string; token: string; room: string; iceServers: never[] } {
    return {
      engine: 'livekit',
      url: livekitUrl,
      token: 'not-a-real-token',
      room: 'invigil-exam-1',
      iceServers: [],
    };
  }

  /**
   * Publishes the page's camera through the adapter (the camera is opened the first time and kept
   * on `window.camera`), collecting the states it reports.
   */
  async function publish(): Promise<void> {
    await page.evaluate(async (joinInfo) => {
      const adapter = '/live/assets/livekit.js';
      const { publishLivekit } = (await import(adapter)) as {
        publishLivekit: (
          join: unknown,
          media: { camera: MediaStream | null; screen: MediaStream | null },
          onState: (state: string) => void,
        ) => { close(): void };
      };
      const held = (window as unknown as { camera?: MediaStream }).camera;
      const camera = held ?? (await navigator.mediaDevices.getUserMedia({ video: true, audio: true }));
      const states: string[] = [];
      const publication = publishLivekit(joinInfo, { camera, screen: null }, (state) => states.push(state));
      Object.assign(window, { camera, states, publication });
    }, join());
  }

  /** Closes the publication publish() started; returns the states it reported and the camera's tracks' states. */
  async function closePublication(): Promise<{ states: string[]; tracks: string[] }> {
    return page.evaluate(() => {
      const { camera, states, publication } = window as unknown as {
        camera: MediaStream;
        states: string[];
        publication: { close(): void };
      };
      publication.close();
      return { states, tracks: camera.getTracks().map((track) => track.readyState) };
    });
  }

  it('publishes nothing with a refused token: stays connecting, stops trying, leaves the camera on', async () => {
    livekit.mode = 'refuse';
    livekit.joins = 0;
    livekit.validations = 0;
    await publish();
    await until(() => livekit.validations >= 1, 15000, 'the refused join');
    await sleep(3000);
    const refusedJoins = livekit.joins;
    assert.ok(refusedJoins >= 1 && refusedJoins <= 2, `joins tried: ${refusedJoins}`);
    const result = await closePublication();
    assert.deepEqual(result.states, ['connecting']);
    assert.deepEqual(result.tracks, ['live', 'live'], "the caller's camera and microphone keep running");
  });

  it('keeps trying while LiveKit is down, and stops when closed', async () => {
    livekit.mode = 'down';
    livekit.joins = 0;
    await publish();
    await until(() => livekit.joins >= 3, 30000, 'three join attempts');
    const { states } = await closePublication();
    assert.deepEqual(states, ['connecting']);
    await sleep(1000);
    const afterClose = livekit.joins;
    await sleep(6000);
    assert.equal(livekit.joins, afterClose, 'no join after close()');
  });

  it('watches a candidate with a refused token: connecting, no streams, stats unknown', async () => {
    livekit.mode = 'refuse';
    livekit.joins = 0;
    livekit.validations = 0;
    const result = await page.evaluate(async (joinInfo) => {
      const adapter = '/live/assets/livekit.js';
      const { watchLivekit } = (await import(adapter)) as {
        watchLivekit: (
          join: unknown,
          sessionId: number,
          handlers: {
            onStream: (kind: string, stream: MediaStream) => void;
            onState: (state: string) => void;
          },
        ) => { stop(): void; stats(): Promise<unknown> };
      };
      const states: string[] = [];
      const streams: string[] = [];
      const watch = watchLivekit(joinInfo, 5, {
        onStream: (kind) => streams.push(kind),
        onState: (state) => states.push(state),
      });
      await new Promise((resolve) => setTimeout(resolve, 3000));
      const stats = await watch.stats();
      watch.stop();
      return { states, streams, stats };
    }, join());
    assert.deepEqual(result.states, ['connecting']);
    assert.deepEqual(result.streams, []);
    assert.deepEqual(result.stats, { fps: null, lossPercent: null, rttMs: null });
    assert.ok(livekit.joins >= 1, 'it tried to join');
  });

  it('ran under the strict policy without errors or refusals', async () => {
    const violations = await page.evaluate(() => (window as unknown as { violations: string[] }).violations);
    assert.deepEqual(violations, []);
    assert.deepEqual(pageErrors, []);
  });
});
