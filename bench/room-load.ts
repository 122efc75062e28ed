/**
 * The load generator of the room-capacity benchmark, run as its own process (never in the server's,
 * nor in the orchestrator's event loop): `node bench/room-load.ts PLAN.json RESULT.json`.
 *
 * Each simulated candidate does what the room page (web/room: web/room/state/room.svelte.ts and web/room/exam/) does while an exam
 * runs: a webcam and a screen recorder each produce one chunk every CHUNK_MS (MediaRecorder's
 * timeslice), queued and sent one after another per recorder, the next only once the previous one
 * is acknowledged; the view is polled every POLL_MS; and now and then an event is reported. Start
 * times are spread over one chunk interval, so the chunks arrive evenly.
 *
 * Efficiency: raw node:http over keep-alive connections; each chunk's payload is one buffer
 * allocated once per source and shared by every request, and the multipart framing around it is a
 * few hundred bytes built per request (its sequence differs); the three pieces are written corked,
 * so the kernel gets them in one writev without a copy into a joined body.
 */
import fs from 'node:fs';
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { chunkPayload, PAYLOAD_SEEDS } from './room-payload.ts';

/** What one run of the generator is asked to do. */
export interface LoadPlan {
  readonly url: string;
  readonly tokens: readonly string[];
  /** The sequence each candidate's recorders continue from: [webcam, screen] per token. */
  readonly nextSequences: readonly (readonly [number, number])[];
  /** How long chunks are produced, in ms (the last ones are then sent, within graceMs). */
  readonly durationMs: number;
  readonly graceMs: number;
  readonly chunkMs: number;
  readonly pollMs: number;
  readonly eventMs: number;
  readonly webcamBytes: number;
  readonly screenBytes: number;
  /** True against Invigil: a chunk's answer must name the next sequence. */
  readonly checkAnswers: boolean;
}

/** What it measured. */
export interface LoadResult {
  /** Chunk acknowledgement times (request written → answer read), ms, in completion order. */
  chunkLatencies: number[];
  pollLatencies: number[];
  eventLatencies: number[];
  chunksProduced: number;
  chunksAcknowledged: number;
  /** Chunks still queued or unanswered when the grace period ended. */
  chunksUnsent: number;
  bytesAcknowledged: number;
  /** Failures by kind: `status 409`, `connection ECONNRESET`, `answer ...`. */
  failures: Record<string, number>;
  /** The acknowledged chunks per token: [webcam, screen] sequences acknowledged, in order. */
  acknowledged: [number[], number[]][];
  /** How late the chunk timers fired at worst (the generator's own event-loop lag), ms. */
  timerLagMaxMs: number;
  elapsedMs: number;
}

const SOURCES = ['webcam', 'screen'] as const;
type Source = (typeof SOURCES)[number];
const BOUNDARY = '----invigil-bench-boundary-7d2f0c';
const SUFFIX = Buffer.from(`\r\n--${BOUNDARY}--\r\n`);

function prefix(source: Source, sequence: number): Buffer {
  return Buffer.from(
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="sequence"\r\n\r\n${sequence}\r\n` +
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="source"\r\n\r\n${source}\r\n` +
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="${source}-${sequence}.webm"\r\n` +
      'Content-Type: video/webm\r\n\r\n',
    'latin1',
  );
}

function run(plan: LoadPlan): Promise<LoadResult> {
  const target = new URL(plan.url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity, maxFreeSockets: 100_000 });
  const payloads: Record<Source, Buffer> = {
    webcam: chunkPayload(plan.webcamBytes, PAYLOAD_SEEDS.webcam),
    screen: chunkPayload(plan.screenBytes, PAYLOAD_SEEDS.screen),
  };
  const eventBody = Buffer.from('{"type":"focus_lost"}');
  const result: LoadResult = {
    chunkLatencies: [],
    pollLatencies: [],
    eventLatencies: [],
    chunksProduced: 0,
    chunksAcknowledged: 0,
    chunksUnsent: 0,
    bytesAcknowledged: 0,
    failures: {},
    acknowledged: plan.tokens.map(() => [[], []]),
    timerLagMaxMs: 0,
    elapsedMs: 0,
  };
  const fail = (what: string) => {
    result.failures[what] = (result.failures[what] ?? 0) + 1;
  };

  /** One request; resolves with the status and body text, or rejects on a connection failure. */
  function send(
    method: string,
    path: string,
    headers: http.OutgoingHttpHeaders,
    pieces: readonly Buffer[],
  ): Promise<{ status: number; text: string }> {
    return new Promise((resolve, reject) => {
      const request = http.request(
        { agent, host: target.hostname, port: target.port, method, path, headers },
        (response) => {
          const parts: Buffer[] = [];
          response.on('data', (part: Buffer) => parts.push(part));
          response.on('end', () =>
            resolve({ status: response.statusCode ?? 0, text: Buffer.concat(parts).toString('utf8') }),
          );
          response.on('error', reject);
        },
      );
      request.on('error', reject);
      request.cork();
      for (const piece of pieces) request.write(piece);
      request.end();
      process.nextTick(() => request.uncork());
    });
  }

  const started = performance.now();
  const stopProducingAt = started + plan.durationMs;
  const timers: NodeJS.Timeout[] = [];
  let outstanding = 0;
  let finish: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => {
    finish = resolve;
  });
  let producing = true;

  /** A recorder: its queue of produced chunks and the single send loop draining it. */
  function recorder(candidate: number, sourceIndex: 0 | 1) {
    const source = SOURCES[sourceIndex];
    const token = plan.tokens[candidate] ?? '';
    const path = `/api/room/${token}/recordings`;
    const body = payloads[source];
    let sequence = plan.nextSequences[candidate]?.[sourceIndex] ?? 0;
    let queued = 0;
    let sending = false;

    async function drain(): Promise<void> {
      sending = true;
      while (queued > 0) {
        const head = prefix(source, sequence);
        const length = head.length + body.length + SUFFIX.length;
        const sentAt = performance.now();
        try {
          const answer = await send(
            'POST',
            path,
            { 'content-type': `multipart/form-data; boundary=${BOUNDARY}`, 'content-length': length },
            [head, body, SUFFIX],
          );
          const took = performance.now() - sentAt;
          if (answer.status !== 201) {
            fail(`status ${answer.status}: ${answer.text.slice(0, 120)}`);
            // As the page does: a 200 or a 409 names the sequence the server expects, which the
            // recorder continues from; anything else is sent again after a pause.
            const expected = /"next_sequence":(\d+)|chunk (\d+)/.exec(answer.text);
            if (answer.status === 200 || answer.status === 409) {
              const named = Number(expected?.[1] ?? expected?.[2] ?? Number.NaN);
              if (Number.isInteger(named) && named > sequence) {
                sequence = named;
                queued -= 1;
                outstanding -= 1;
                continue;
              }
              if (Number.isInteger(named) && named < sequence) {
                sequence = named;
                continue;
              }
            }
            await new Promise((resolve) => setTimeout(resolve, 1000));
            if (!producing && performance.now() > stopProducingAt + plan.graceMs) break;
            continue;
          }
          if (plan.checkAnswers && answer.text !== `{"next_sequence":${sequence + 1}}`) {
            fail(`answer ${answer.text.slice(0, 80)}`);
          }
          result.chunkLatencies.push(took);
          result.chunksAcknowledged += 1;
          result.bytesAcknowledged += length;
          result.acknowledged[candidate]?.[sourceIndex].push(sequence);
          sequence += 1;
          queued -= 1;
          outstanding -= 1;
        } catch (error) {
          fail(`connection ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
          await new Promise((resolve) => setTimeout(resolve, 1000));
          if (!producing && performance.now() > stopProducingAt + plan.graceMs) break;
        }
      }
      sending = false;
      if (!producing && outstanding === 0) finish();
    }

    return {
      produce() {
        result.chunksProduced += 1;
        queued += 1;
        outstanding += 1;
        if (!sending) void drain();
      },
    };
  }

  async function poll(token: string): Promise<void> {
    const sentAt = performance.now();
    try {
      const answer = await send('GET', `/api/room/${token}`, {}, []);
      if (answer.status !== 200) fail(`poll status ${answer.status}`);
      else result.pollLatencies.push(performance.now() - sentAt);
    } catch (error) {
      fail(`poll connection ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
    }
  }

  async function reportEvent(token: string): Promise<void> {
    const sentAt = performance.now();
    try {
      const answer = await send(
        'POST',
        `/api/room/${token}/events`,
        { 'content-type': 'application/json', 'content-length': eventBody.length },
        [eventBody],
      );
      if (answer.status !== 201) fail(`event status ${answer.status}`);
      else result.eventLatencies.push(performance.now() - sentAt);
    } catch (error) {
      fail(`event connection ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
    }
  }

  plan.tokens.forEach((token, candidate) => {
    const recorders = [recorder(candidate, 0), recorder(candidate, 1)];
    // Spread over one interval: candidates started their exams at different moments.
    const offset = (candidate / plan.tokens.length) * plan.chunkMs;
    let due = started + offset + plan.chunkMs;
    const tick = () => {
      const now = performance.now();
      result.timerLagMaxMs = Math.max(result.timerLagMaxMs, now - due);
      if (now >= stopProducingAt) return;
      for (const each of recorders) each.produce();
      due += plan.chunkMs;
      timers.push(setTimeout(tick, Math.max(0, due - performance.now())));
    };
    timers.push(setTimeout(tick, offset + plan.chunkMs));
    const pollOffset = (candidate / plan.tokens.length) * plan.pollMs;
    timers.push(
      setTimeout(() => {
        void poll(token);
        timers.push(setInterval(() => void poll(token), plan.pollMs));
      }, pollOffset),
    );
    const eventOffset = ((candidate * 7919) % plan.tokens.length) / plan.tokens.length;
    timers.push(
      setTimeout(() => {
        void reportEvent(token);
        timers.push(setInterval(() => void reportEvent(token), plan.eventMs));
      }, eventOffset * plan.eventMs),
    );
  });

  return new Promise((resolve) => {
    const end = () => {
      for (const timer of timers) clearTimeout(timer);
      result.chunksUnsent = outstanding;
      result.elapsedMs = performance.now() - started;
      agent.destroy();
      resolve(result);
    };
    setTimeout(() => {
      producing = false;
      for (const timer of timers) clearTimeout(timer);
      if (outstanding === 0) finish();
      const grace = setTimeout(finish, plan.graceMs);
      void finished.then(() => {
        clearTimeout(grace);
        end();
      });
    }, plan.durationMs + 50);
  });
}

const [planFile, resultFile] = process.argv.slice(2);
if (planFile === undefined || resultFile === undefined) {
  process.stderr.write('usage: room-load.ts PLAN.json RESULT.json\n');
  process.exit(2);
}
const plan = JSON.parse(fs.readFileSync(planFile, 'utf8')) as LoadPlan;
const result = await run(plan);
fs.writeFileSync(resultFile, JSON.stringify(result));
