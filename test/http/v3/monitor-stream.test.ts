/**
 * The live monitor's stream runner on its own, with a scripted feed and short timings: what the
 * HTTP suite (test/http/v3/monitor.test.ts) cannot wait for in reasonable time (the 15 s heartbeat,
 * the 10 min lifetime, the access check at each heartbeat) and what it cannot provoke (a client that
 * stops reading, a failing look at the database).
 */
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import pino from 'pino';
import type { MonitorChange, MonitorSnapshot } from '../../../src/domain/monitor/monitor.ts';
import type { MonitorFeed } from '../../../src/domain/monitor/monitor.service.ts';
import { runMonitorStream, type StreamTiming } from '../../../src/http/v3/monitor.stream.ts';

const SNAPSHOT: MonitorSnapshot = {
  examId: 7,
  counts: {
    registered: 0,
    email_sent: 0,
    after_check_req: 0,
    in_setup: 0,
    exam_not_started: 0,
    exam_started: 0,
    exam_finished: 0,
    total: 0,
  },
  sessions: [],
};

const FAST: StreamTiming = {
  pollMs: 10,
  heartbeatMs: 40,
  lifetimeMs: 60_000,
  retryMs: 3000,
  maxBufferedBytes: 1024 * 1024,
};

const log = pino({ level: 'silent' });

/** A feed whose looks answer what `poll` says, counting them and checking they never overlap. */
function scriptedFeed(options: {
  poll?: (look: number) => Promise<MonitorChange[]>;
  visible?: () => Promise<boolean>;
}) {
  const state = { looks: 0, overlapping: false, running: false, closed: 0 };
  const feed: MonitorFeed = {
    snapshot: SNAPSHOT,
    async poll() {
      if (state.running) state.overlapping = true;
      state.running = true;
      state.looks += 1;
      try {
        return await (options.poll?.(state.looks) ?? Promise.resolve([]));
      } finally {
        state.running = false;
      }
    },
    cursor: () => 1000 + state.looks,
    stillVisible: options.visible ?? (() => Promise.resolve(true)),
    close() {
      state.closed += 1;
    },
  };
  return { feed, state };
}

/** Everything written to `out` until it ends (or `ms` pass). */
async function collect(out: PassThrough, ms = 2000): Promise<string> {
  let text = '';
  out.setEncoding('utf8');
  out.on('data', (chunk: string) => {
    text += chunk;
  });
  await Promise.race([
    new Promise((resolve) => out.on('end', resolve)),
    new Promise((resolve) => setTimeout(resolve, ms)),
  ]);
  return text;
}

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('the live monitor stream runner', () => {
  it('opens with the retry delay and the snapshot, then writes each change as an event with the cursor as id', async () => {
    const { feed } = scriptedFeed({
      poll: (look) =>
        Promise.resolve(
          look === 2
            ? [
                { kind: 'removed', id: 5 },
                { kind: 'counts', counts: SNAPSHOT.counts },
              ]
            : [],
        ),
    });
    const out = new PassThrough();
    const stream = runMonitorStream(feed, out, { timing: FAST, log });
    setTimeout(() => stream.stop(), 100);
    const text = await collect(out);
    assert.ok(text.startsWith('retry: 3000\n\nid: 1000\nevent: snapshot\ndata: {"exam_id":7,'), text);
    assert.ok(text.includes('id: 1002\nevent: removed\ndata: {"id":5}\n\n'), text);
    assert.ok(text.includes('id: 1002\nevent: counts\ndata: {"registered":0,'), text);
    assert.ok(!text.includes('event: end'), 'a stop without a reason (the client went) writes nothing more');
  });

  it('writes a heartbeat comment every heartbeatMs and checks access each time', async () => {
    let checks = 0;
    const { feed } = scriptedFeed({
      visible: () => {
        checks += 1;
        return Promise.resolve(true);
      },
    });
    const out = new PassThrough();
    const stream = runMonitorStream(feed, out, { timing: FAST, log });
    setTimeout(() => stream.stop(), 150);
    const text = await collect(out);
    assert.ok((text.match(/^: heartbeat$/gm) ?? []).length >= 2, text);
    assert.ok(checks >= 2);
  });

  it('ends with `not_found` once the exam can no longer be read, and closes the feed once', async () => {
    const { feed, state } = scriptedFeed({ visible: () => Promise.resolve(false) });
    const out = new PassThrough();
    runMonitorStream(feed, out, { timing: FAST, log });
    const text = await collect(out);
    assert.ok(text.endsWith('event: end\ndata: {"reason":"not_found"}\n\n'), text);
    assert.equal(state.closed, 1);
  });

  it('ends with `reconnect` when its lifetime is over', async () => {
    const { feed } = scriptedFeed({});
    const out = new PassThrough();
    runMonitorStream(feed, out, { timing: { ...FAST, lifetimeMs: 80 }, log });
    const text = await collect(out);
    assert.ok(text.endsWith('event: end\ndata: {"reason":"reconnect"}\n\n'), text);
  });

  it('ends with `unavailable` when the database is away, and `error` for anything else', async () => {
    const outage = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    for (const [error, reason] of [
      [outage, 'unavailable'],
      [new Error('a bug'), 'error'],
    ] as const) {
      const { feed, state } = scriptedFeed({ poll: () => Promise.reject(error) });
      const out = new PassThrough();
      runMonitorStream(feed, out, { timing: FAST, log });
      const text = await collect(out);
      assert.ok(text.endsWith(`event: end\ndata: {"reason":"${reason}"}\n\n`), text);
      assert.equal(state.looks, 1, 'no look after the failed one');
    }
  });

  it('never runs two looks at once, and stops looking once stopped', async () => {
    const { feed, state } = scriptedFeed({ poll: () => wait(30).then(() => []) });
    const out = new PassThrough();
    out.resume();
    const stream = runMonitorStream(feed, out, { timing: { ...FAST, pollMs: 1 }, log });
    await wait(200);
    stream.stop();
    const looks = state.looks;
    await wait(100);
    assert.equal(state.overlapping, false);
    assert.ok(looks >= 3, `${looks} looks`);
    assert.ok(state.looks <= looks + 1, 'at most the look under way finishes after the stop');
    assert.equal(state.closed, 1);
  });

  it('drops a client that stops reading (`too_slow`) instead of holding its events', async () => {
    const big: MonitorChange = {
      kind: 'session',
      session: {
        id: 1,
        name: 'x'.repeat(4000),
        email: 'a@b.c',
        attempt: 0,
        status: 'registered',
        checks: {
          screenshareCheck: 'not_started',
          microphoneCheck: 'not_started',
          speakersCheck: 'not_started',
          webcamCheck: 'not_started',
          mobileCheck: 'not_started',
          bandwidthCheck: 'not_started',
        },
        incidentsCount: 0,
        proctorId: null,
        liveStatus: 'offline',
        clockPaused: false,
        accommodations: null,
        onBreak: false,
        breakEndsAt: null,
        breaksTaken: 0,
        updatedAt: 0,
      },
    };
    const { feed, state } = scriptedFeed({ poll: () => Promise.resolve([big]) });
    const out = new PassThrough({ highWaterMark: 1024 });
    const stream = runMonitorStream(feed, out, { timing: { ...FAST, maxBufferedBytes: 64 * 1024 }, log });
    await wait(500);
    assert.equal(stream.stopped, true);
    assert.equal(state.closed, 1);
    assert.ok(out.destroyed, 'the stream is destroyed, so the connection goes with it');
  });
});
