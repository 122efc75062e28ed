import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { addressKey } from '../../src/http/connection-guard.ts';
import { multipartBody } from '../helpers/multipart.ts';
import { DIALECTS, startTestServer, type TestServer } from '../helpers/server.ts';

/** A raw connection: what it received, and when (ms after opening) the server closed it. */
interface Raw {
  readonly socket: net.Socket;
  readonly connected: Promise<void>;
  readonly closed: Promise<number>;
  readonly received: () => string;
}

function openRaw(port: number, head: string, localAddress = '127.0.0.1'): Raw {
  const started = performance.now();
  const socket = net.connect({ port, host: '127.0.0.1', localAddress });
  let text = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    text += chunk;
  });
  socket.on('error', () => {});
  const connected = new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  const closed = new Promise<number>((resolve) =>
    socket.once('close', () => resolve(performance.now() - started)),
  );
  if (head !== '') socket.write(head);
  return { socket, connected, closed, received: () => text };
}

/** Request headers announcing a JSON body of `length` bytes that never comes (a V2 path: no pre-body check). */
function silentHead(length = 1000): string {
  return (
    'POST /api/exams HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n' +
    `Content-Length: ${length}\r\n\r\n`
  );
}

/** GET /healthz from `localAddress`. Returns the status, or throws when the connection fails. */
function health(baseUrl: string, localAddress = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = http.get(
      `${baseUrl}/healthz`,
      { localAddress, agent: false, timeout: 5000 },
      (answer) => {
        answer.resume();
        answer.on('end', () => resolve(answer.statusCode ?? 0));
      },
    );
    request.on('timeout', () => request.destroy(new Error('no answer within 5 s')));
    request.on('error', reject);
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Resolves with `promise`'s value, or `fallback` after `ms`. */
function within<T>(promise: Promise<T>, ms: number, fallback: T): Promise<T> {
  return Promise.race([promise, sleep(ms).then(() => fallback)]);
}

describe('addressKey: what the per-address connection cap counts under', () => {
  it('counts an IPv4 address (also IPv4-mapped) as itself', () => {
    assert.equal(addressKey('127.0.0.1'), '127.0.0.1');
    assert.equal(addressKey('::ffff:127.0.0.1'), '::ffff:127.0.0.1');
  });
  it('counts IPv6 addresses by their /64 network, however they are written', () => {
    assert.equal(addressKey('2001:db8:1:2:3:4:5:6'), '2001:db8:1:2::/64');
    assert.equal(addressKey('2001:0DB8:1:2::9'), '2001:db8:1:2::/64');
    assert.equal(addressKey('fe80::1%eth0'), 'fe80:0:0:0::/64');
    assert.equal(addressKey('::1'), '0:0:0:0::/64');
    assert.notEqual(addressKey('2001:db8:1:3::1'), addressKey('2001:db8:1:2::1'));
  });
});

for (const dialect of DIALECTS) {
  describe(`slow and silent request bodies are cut (docs/security.md, H3) [${dialect}]`, () => {
    let server: TestServer;
    let port: number;
    let upload: { path: string; token: string };

    before(async () => {
      server = await startTestServer(dialect, {
        env: {
          BODY_IDLE_TIMEOUT_MS: '1000',
          REQUEST_TIMEOUT_MS: '2500',
          UPLOAD_GRACE_MS: '1000',
          UPLOAD_MIN_BYTES_PER_SECOND: '4096',
          MAX_CONNECTIONS_PER_ADDRESS: '0',
        },
      });
      port = Number(new URL(server.baseUrl).port);
      const institute = await server.institute();
      const teacher = await server.user(institute, 'teacher');
      const exam = await server.app.services.exams.create(
        { id: teacher.id, instituteId: institute, role: 'teacher' },
        { name: 'Slow uploads', type: 'record_review', duration_minutes: 60 },
      );
      const examId = exam.id;
      upload = { path: `/api/v3/exams/${examId}/attachments`, token: teacher.credentials.apiToken };
    });
    after(async () => {
      await server.close();
    });

    it('holds 300 connections silent after their headers, answers /healthz meanwhile, and cuts each with 408 after BODY_IDLE_TIMEOUT_MS', async () => {
      const silent = Array.from({ length: 300 }, () => openRaw(port, silentHead()));
      await Promise.all(silent.map((raw) => raw.connected));
      await sleep(300);
      assert.equal(await health(server.baseUrl), 200, '/healthz while 300 connections are held');
      const closedAfter = await Promise.all(silent.map((raw) => within(raw.closed, 8000, Number.NaN)));
      const open = closedAfter.filter((ms) => Number.isNaN(ms)).length;
      assert.equal(
        open,
        0,
        `${open} of 300 silent connections still open 8 s after BODY_IDLE_TIMEOUT_MS=1000`,
      );
      for (const [index, raw] of silent.entries()) {
        assert.match(raw.received(), /^HTTP\/1\.1 408 Request Timeout\r\n/, `connection ${index}`);
        assert.match(raw.received(), /\r\nX-Content-Type-Options: nosniff\r\n/);
        assert.ok((closedAfter[index] ?? 0) >= 900, `connection ${index} cut after ${closedAfter[index]} ms`);
      }
      assert.equal(await health(server.baseUrl), 200, '/healthz after');
    });

    it('cuts a body trickling a byte every 200 ms (never silent) at REQUEST_TIMEOUT_MS', async () => {
      const raw = openRaw(port, silentHead());
      const drip = setInterval(() => raw.socket.write('x'), 200);
      try {
        const closedAfter = await within(raw.closed, 8000, Number.NaN);
        assert.ok(closedAfter >= 2400 && closedAfter < 6000, `cut after ${closedAfter} ms`);
        assert.match(raw.received(), /^HTTP\/1\.1 408 /);
      } finally {
        clearInterval(drip);
        raw.socket.destroy();
      }
    });

    /**
     * Sends a V3 multipart upload (the teacher's token, no signature: refused 403 once the whole body
     * is read) of `chunks` pieces of `chunkBytes`, one every `everyMs`. Returns the raw exchange.
     */
    function sendSlowUpload(
      chunks: number,
      chunkBytes: number,
      everyMs: number,
    ): { raw: Raw; stop: () => void } {
      const { body, contentType } = multipartBody({}, [
        {
          field: 'document',
          fileName: 'slow.pdf',
          contentType: 'application/pdf',
          bytes: Buffer.alloc(chunks * chunkBytes - 400, 0x41),
        },
      ]);
      const raw = openRaw(
        port,
        `POST ${upload.path} HTTP/1.1\r\nHost: test\r\nAccept: application/vnd.procwise.v3\r\n` +
          `Authorization: Token token=${upload.token}\r\nContent-Type: ${contentType}\r\n` +
          `Content-Length: ${body.length}\r\n\r\n`,
      );
      let offset = 0;
      const timer = setInterval(() => {
        if (offset >= body.length) return;
        raw.socket.write(body.subarray(offset, offset + chunkBytes));
        offset += chunkBytes;
      }, everyMs);
      return {
        raw,
        stop: () => {
          clearInterval(timer);
          raw.socket.destroy();
        },
      };
    }

    it('lets an upload take longer than REQUEST_TIMEOUT_MS while it averages at least UPLOAD_MIN_BYTES_PER_SECOND', async () => {
      // 2 KiB every 200 ms: 10 KiB/s for 4 s.
      const started = performance.now();
      const { raw, stop } = sendSlowUpload(20, 2048, 200);
      try {
        for (let wait = 0; !raw.received().includes('\r\n\r\n') && wait < 200; wait += 1) await sleep(50);
        const answeredAfter = performance.now() - started;
        const text = raw.received();
        assert.match(text, /^HTTP\/1\.1 403 /, text);
        assert.ok(answeredAfter >= 3500, `answered after ${answeredAfter} ms, once the whole body was in`);
      } finally {
        stop();
      }
    });

    it('cuts an upload averaging less than UPLOAD_MIN_BYTES_PER_SECOND once UPLOAD_GRACE_MS has passed', async () => {
      // 200 bytes every 200 ms: 1 KB/s, never silent, far below 4 KiB/s.
      const { raw, stop } = sendSlowUpload(50, 200, 200);
      try {
        const closedAfter = await within(raw.closed, 8000, Number.NaN);
        assert.ok(closedAfter >= 900 && closedAfter < 4000, `cut after ${closedAfter} ms`);
        assert.match(raw.received(), /^HTTP\/1\.1 408 /);
      } finally {
        stop();
      }
    });

    it('times nothing once a request without a body is in: a keep-alive connection idle past every limit still serves', async () => {
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      try {
        const get = () =>
          new Promise<number>((resolve, reject) => {
            http
              .get(`${server.baseUrl}/healthz`, { agent }, (answer) => {
                answer.resume();
                answer.on('end', () => resolve(answer.statusCode ?? 0));
              })
              .on('error', reject);
          });
        assert.equal(await get(), 200);
        await sleep(3000);
        assert.equal(await get(), 200);
      } finally {
        agent.destroy();
      }
    });
  });

  describe(`MAX_CONNECTIONS_PER_ADDRESS closes connections past the cap at once [${dialect}]`, () => {
    let server: TestServer;
    let port: number;

    before(async () => {
      server = await startTestServer(dialect, { env: { MAX_CONNECTIONS_PER_ADDRESS: '20' } });
      port = Number(new URL(server.baseUrl).port);
    });
    after(async () => {
      await server.close();
    });

    it('closes the 21st connection from 127.0.0.1 unanswered, serves another address meanwhile, and takes a new one once one closes', async () => {
      // Twenty keep-alive connections, each proven accepted by an answer, then left open.
      const held = Array.from({ length: 20 }, () =>
        openRaw(port, 'GET /healthz HTTP/1.1\r\nHost: test\r\n\r\n'),
      );
      for (const raw of held) {
        for (let wait = 0; !raw.received().includes('"status"') && wait < 100; wait += 1) await sleep(50);
        assert.match(raw.received(), /^HTTP\/1\.1 200 /);
      }
      const extra = openRaw(port, 'GET /healthz HTTP/1.1\r\nHost: test\r\n\r\n');
      const closedAfter = await within(extra.closed, 3000, Number.NaN);
      assert.ok(closedAfter < 3000, 'the 21st connection was closed at once');
      assert.equal(extra.received(), '', 'and not answered');
      assert.equal(await health(server.baseUrl, '127.0.0.2'), 200, 'another address is served');

      held[0]?.socket.destroy();
      await sleep(200);
      assert.equal(await health(server.baseUrl), 200, 'a place freed is taken again');
      for (const raw of held) raw.socket.destroy();
    });
  });
}
