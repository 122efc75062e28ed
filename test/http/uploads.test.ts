import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { MAX_MULTIPART_FIELDS, spoolDirectory } from '../../src/http/uploads.ts';
import { NOT_AUTHORIZED } from '../helpers/answers.ts';
import { V3_ACCEPT } from '../helpers/client.ts';
import { httpRequest } from '../helpers/http.ts';
import { SAMPLE, v3Multipart } from '../helpers/multipart.ts';
import { v2Multipart } from '../helpers/v2-multipart.ts';
import { canonical, hmac, nextNonce } from '../helpers/signing.ts';
import { DIALECTS, startTestServer, type TestServer } from '../helpers/server.ts';

/** What a raw exchange got back: the status and the body text (empty when the server sent none). */
interface RawAnswer {
  readonly status: number;
  readonly body: string;
}

/**
 * One request over a bare socket, so the test decides how much of the body is ever sent. `answer`
 * settles with the first response the server writes; `send` writes more bytes (ignored once the
 * server has closed); `cut` destroys the socket as a client that goes away mid-body does.
 */
interface RawRequest {
  readonly answer: Promise<RawAnswer>;
  send(bytes: Buffer | string): Promise<void>;
  cut(): void;
}

/** True once the request's connection is gone (its answer settled or failed). */
async function isClosed(request: RawRequest): Promise<boolean> {
  const pending = Symbol('pending');
  const state = await Promise.race([
    request.answer.then(
      () => true,
      () => true,
    ),
    Promise.resolve(pending),
  ]);
  return state !== pending;
}

function rawRequest(baseUrl: string, head: string): RawRequest {
  const url = new URL(baseUrl);
  const socket = net.connect(Number(url.port), url.hostname);
  socket.on('error', () => undefined); // the server may close while we still write: expected here
  let received = Buffer.alloc(0);
  const answer = new Promise<RawAnswer>((resolve, reject) => {
    const settle = (): boolean => {
      const text = received.toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      if (end === -1) return false;
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(text.slice(0, end))?.[1] ?? 0);
      const body = received.subarray(end + 4);
      if (body.length < length) return false;
      resolve({ status, body: body.subarray(0, length).toString('utf8') });
      return true;
    };
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      settle();
    });
    socket.on('close', () => {
      if (!settle()) reject(new Error('connection closed without an answer'));
    });
  });
  answer.catch(() => undefined);
  socket.write(head);
  return {
    answer,
    async send(bytes) {
      if (socket.destroyed || socket.writableEnded) return;
      if (!socket.write(bytes)) {
        await Promise.race([
          new Promise((resolve) => socket.once('drain', resolve)),
          new Promise((resolve) => socket.once('close', resolve)),
        ]);
      }
    },
    cut() {
      socket.destroy();
    },
  };
}

const BOUNDARY = 'invigil-upload-test-boundary';

function requestHead(method: string, target: string, headers: Record<string, string>): string {
  const lines = [`${method} ${target} HTTP/1.1`, 'Host: 127.0.0.1'];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  return `${lines.join('\r\n')}\r\n\r\n`;
}

/** The multipart bytes up to a file part's content: the text fields, then the file part's header. */
function multipartPrefix(fields: Readonly<Record<string, string>>, fileField: string): string {
  let text = '';
  for (const [name, value] of Object.entries(fields)) {
    text += `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
  }
  return (
    text +
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${fileField}"; filename="big.pdf"\r\n` +
    'Content-Type: application/pdf\r\n\r\n'
  );
}

/** The headers of a multipart upload that announces `declared` bytes (far more than the test sends). */
function multipartHeaders(declared: number, extra: Record<string, string> = {}): Record<string, string> {
  return {
    'Content-Type': `multipart/form-data; boundary=${BOUNDARY}`,
    'Content-Length': String(declared),
    ...extra,
  };
}

const MEGABYTE = 1024 * 1024;

function spoolFiles(server: TestServer): string[] {
  const directory = spoolDirectory(server.database.dataDir);
  return fs.existsSync(directory) ? fs.readdirSync(directory) : [];
}

/** Waits until `check` holds, polling; fails after a generous bound (a hang, not a slow machine). */
async function eventually(what: string, check: () => boolean): Promise<void> {
  for (let attempt = 0; attempt < 1000; attempt += 1) {
    if (check()) return;
    await delay(20);
  }
  assert.fail(`never happened: ${what}`);
}

/** Sends `megabytes` of file content in 64 KB writes. */
async function sendContent(request: RawRequest, megabytes: number): Promise<void> {
  const chunk = Buffer.concat([Buffer.from('%PDF-1.4\n'), crypto.randomBytes(64 * 1024 - 9)]);
  for (let sent = 0; sent < megabytes * 16; sent += 1) await request.send(chunk);
}

/** Signed V2 fields for a multipart body, `api_token` among them. */
function signedV2Fields(
  apiToken: string,
  secretKey: string,
  route: Record<string, string>,
): Record<string, string> {
  const fields: Record<string, string> = {
    api_token: apiToken,
    timestamp: String(Date.now()),
    nonce: nextNonce(),
  };
  fields.signature = hmac(secretKey, canonical({ ...fields, ...route }));
  return fields;
}

for (const dialect of DIALECTS) {
  describe(`multipart uploads and body limits [${dialect}]`, () => {
    let server: TestServer;
    let apiToken: string;
    let secretKey: string;
    let admin: Awaited<ReturnType<TestServer['user']>>;

    before(async () => {
      server = await startTestServer(dialect);
      const institute = await server.institute();
      admin = await server.user(institute, 'administrator');
      apiToken = admin.credentials.apiToken;
      secretKey = admin.credentials.secretKey;
    });
    after(() => server.close());

    describe('an unauthenticated multipart upload is refused before a byte of it is written', () => {
      const cases: readonly (readonly [
        string,
        string,
        Record<string, string>,
        Record<string, string>,
        number,
        unknown,
      ])[] = [
        [
          'V3 with an unknown token',
          '/api/v3/exams/1/documents/1/attachments',
          { Accept: V3_ACCEPT, Authorization: 'Token token=nobody' },
          {},
          403,
          NOT_AUTHORIZED,
        ],
        [
          'V3 without a token',
          '/api/v3/exams/1/documents/1/attachments',
          { Accept: V3_ACCEPT },
          {},
          403,
          NOT_AUTHORIZED,
        ],
        [
          'the room with a token that names no session',
          '/api/room/no-such-room/uploads',
          {},
          {},
          404,
          { error: "Couldn't find the exam room" },
        ],
        [
          'V2 with an unknown api_token in the query',
          '/api/documents/1/add_attachment?api_token=nobody',
          {},
          {},
          403,
          NOT_AUTHORIZED,
        ],
        [
          'V2 with an unknown api_token among the fields',
          '/api/documents/1/add_attachment',
          {},
          { api_token: 'nobody', timestamp: '1', nonce: '1', signature: '0'.repeat(64) },
          403,
          NOT_AUTHORIZED,
        ],
        [
          'V2 with its file ahead of any api_token',
          '/api/documents/1/add_attachment',
          {},
          {},
          403,
          NOT_AUTHORIZED,
        ],
      ];
      for (const [name, target, headers, fields, status, body] of cases) {
        it(`answers ${status} to ${name}, keeps nothing on disk, and the cut-off upload leaves nothing`, async () => {
          const request = rawRequest(
            server.baseUrl,
            requestHead('POST', target, multipartHeaders(200 * MEGABYTE, headers)),
          );
          await request.send(multipartPrefix(fields, 'document'));
          // Part of a 200 MB file; the answer must come without the rest, so the body was never awaited.
          const sending = sendContent(request, 1);
          const answer = await request.answer;
          request.cut();
          await sending;
          assert.equal(answer.status, status);
          assert.deepEqual(JSON.parse(answer.body), body);
          assert.deepEqual(spoolFiles(server), []);
        });
      }
    });

    it('removes the half-written spool file of an authenticated V3 upload whose client goes away', async () => {
      const request = rawRequest(
        server.baseUrl,
        requestHead(
          'POST',
          '/api/v3/exams/1/documents/1/attachments',
          multipartHeaders(40 * MEGABYTE, { Accept: V3_ACCEPT, Authorization: `Token token=${apiToken}` }),
        ),
      );
      await request.send(
        multipartPrefix({ timestamp: '1', nonce: '1', signature: '0'.repeat(64) }, 'document'),
      );
      await sendContent(request, 2);
      await eventually('the upload is being spooled', () => spoolFiles(server).length > 0);
      request.cut();
      await eventually('the spool directory is empty again', () => spoolFiles(server).length === 0);
    });

    it('removes the spool file of an authenticated V2 upload (api_token in the body) cut off mid-file', async () => {
      const request = rawRequest(
        server.baseUrl,
        requestHead('POST', '/api/documents/1/add_attachment', multipartHeaders(40 * MEGABYTE)),
      );
      await request.send(multipartPrefix(signedV2Fields(apiToken, secretKey, { id: '1' }), 'file'));
      await sendContent(request, 2);
      await eventually('the upload is being spooled', () => spoolFiles(server).length > 0);
      request.cut();
      await eventually('the spool directory is empty again', () => spoolFiles(server).length === 0);
    });

    it('cuts a V2 upload whose fields run past MAX_BODY_BYTES before any file part shows a credential', async () => {
      const request = rawRequest(
        server.baseUrl,
        requestHead('POST', '/api/documents/1/add_attachment', multipartHeaders(40 * MEGABYTE)),
      );
      await request.send(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="padding"\r\n\r\n`);
      const sending = (async () => {
        for (let sent = 0; sent < 64 && !(await isClosed(request)); sent += 1)
          await request.send('x'.repeat(64 * 1024));
      })();
      await assert.rejects(request.answer, /closed without an answer/);
      await sending;
      assert.deepEqual(spoolFiles(server), []);
    });

    describe('the text fields of a multipart body with a checked credential', () => {
      /** A whole multipart body: the text fields (each `[name, value]`), then one small PDF part. */
      function multipartBytes(fields: readonly (readonly [string, string])[], fileField: string): Buffer {
        const chunks: Buffer[] = [];
        for (const [name, value] of fields) {
          chunks.push(
            Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n`),
            Buffer.from(value),
            Buffer.from('\r\n'),
          );
        }
        chunks.push(
          Buffer.from(
            `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${fileField}"; filename="a.pdf"\r\n` +
              'Content-Type: application/pdf\r\n\r\n',
          ),
          SAMPLE.pdf,
          Buffer.from(`\r\n--${BOUNDARY}--\r\n`),
        );
        return Buffer.concat(chunks);
      }

      /** Sends a whole body over a bare socket (the server may answer and close before its end). */
      async function sendWhole(target: string, headers: Record<string, string>, body: Buffer) {
        const request = rawRequest(
          server.baseUrl,
          requestHead('POST', target, {
            'Content-Type': `multipart/form-data; boundary=${BOUNDARY}`,
            'Content-Length': String(body.length),
            ...headers,
          }),
        );
        for (let at = 0; at < body.length && !(await isClosed(request)); at += 64 * 1024) {
          await request.send(body.subarray(at, at + 64 * 1024));
        }
        const answer = await request.answer;
        request.cut();
        return answer;
      }

      const signedLooking = [
        ['timestamp', '1'],
        ['nonce', '1'],
        ['signature', '0'.repeat(64)],
      ] as const;
      const tooMuch: readonly (readonly [string, () => (readonly [string, string])[]])[] = [
        ['one text field over MAX_BODY_BYTES', () => [...signedLooking, ['note', 'x'.repeat(MEGABYTE + 1)]]],
        [
          'text fields that together pass MAX_BODY_BYTES',
          () => [
            ...signedLooking,
            ...Array.from({ length: 17 }, (_v, index) => [`note${index}`, 'x'.repeat(64 * 1024)] as const),
          ],
        ],
        [
          `more than ${MAX_MULTIPART_FIELDS} text fields`,
          () => [
            ...signedLooking,
            ...Array.from({ length: MAX_MULTIPART_FIELDS }, (_v, index) => [`f${index}`, '1'] as const),
          ],
        ],
      ];
      const wires: readonly (readonly [string, () => string, () => Record<string, string>, unknown])[] = [
        [
          'V3 (JSON)',
          () => '/api/v3/exams/1/documents/1/attachments',
          () => ({ Accept: V3_ACCEPT, Authorization: `Token token=${apiToken}` }),
          { error: 'Payload Too Large' },
        ],
        ['V2 (empty)', () => `/api/documents/1/add_attachment?api_token=${apiToken}`, () => ({}), undefined],
      ];
      for (const [wire, target, headers, body] of wires) {
        for (const [name, fields] of tooMuch) {
          it(`answers 413 in ${wire} to ${name}, and keeps nothing`, async () => {
            const answer = await sendWhole(target(), headers(), multipartBytes(fields(), 'document'));
            assert.equal(answer.status, 413, answer.body);
            if (body === undefined) assert.equal(answer.body, '');
            else assert.deepEqual(JSON.parse(answer.body), body);
            // A file part read before the refusal (busboy hands on files past the field limit) goes
            // with the request.
            await eventually('the spool directory is empty again', () => spoolFiles(server).length === 0);
            const health = await httpRequest({ url: `${server.baseUrl}/healthz` });
            assert.equal(health.status, 200);
          });
        }
      }

      it('answers 413 in V2 (empty) to a text field over MAX_BODY_BYTES after the file part that cleared api_token', async () => {
        const fields = signedV2Fields(apiToken, secretKey, { id: '1' });
        const body = Buffer.concat([
          Buffer.from(multipartPrefix(fields, 'file')),
          SAMPLE.pdf,
          Buffer.from(
            `\r\n--${BOUNDARY}\r\nContent-Disposition: form-data; name="note"\r\n\r\n${'x'.repeat(MEGABYTE + 1)}` +
              `\r\n--${BOUNDARY}--\r\n`,
          ),
        ]);
        const answer = await sendWhole('/api/documents/1/add_attachment', {}, body);
        assert.equal(answer.status, 413, answer.body);
        assert.equal(answer.body, '');
        // The file spooled before the field goes with the request.
        await eventually('the spool directory is empty again', () => spoolFiles(server).length === 0);
      });

      it('takes text fields up to the limits beside a file, signed, in V3 and V2', async () => {
        const exam = await admin.client.v3('POST', '/exams', {
          name: 'Exam with long notes',
          type: 'classroom',
          duration_minutes: 60,
        });
        assert.equal(exam.status, 201, exam.text);
        const examId = (exam.json as { exam: { id: number } }).exam.id;
        const pdf = {
          field: 'document',
          fileName: 'a.pdf',
          contentType: 'application/pdf',
          bytes: SAMPLE.pdf,
        };
        const many = Object.fromEntries(
          Array.from({ length: MAX_MULTIPART_FIELDS - 10 }, (_v, index) => [`f${index}`, '1']),
        );
        const v3 = await v3Multipart(
          admin.client,
          'POST',
          '/exams/:exam_id/attachments',
          { exam_id: examId, note: 'x'.repeat(MEGABYTE - 8 * 1024), ...many },
          [pdf],
        );
        assert.equal(v3.status, 201, v3.text.slice(0, 300));
        const document = await admin.client.v3('GET', '/exams/:exam_id/documents', { exam_id: examId });
        const documentId = (document.json as { documents: { id: number }[] }).documents[0]?.id;
        assert.ok(documentId !== undefined, document.text);
        const v2 = await v2Multipart(
          admin.client,
          'POST',
          '/documents/:id/add_attachment',
          { id: documentId, note: 'x'.repeat(MEGABYTE / 2) },
          [{ ...pdf, field: 'file' }],
        );
        assert.equal(v2.status, 200, v2.text.slice(0, 300));
      });
    });

    it('answers a request line over the header limit with 431 and Connection: close, so the next call works', async () => {
      const long = await httpRequest({ url: `${server.baseUrl}/api/v3/exams?filter=${'x'.repeat(20_000)}` });
      assert.equal(long.status, 431);
      assert.equal(long.headers.connection, 'close');
      assert.deepEqual(long.json, { error: 'Request Header Fields Too Large' });
      const next = await httpRequest({ url: `${server.baseUrl}/healthz` });
      assert.equal(next.status, 200);
    });

    // The body limits below apply to a caller whose token names an active user: without one, a V3
    // body is refused 403 before it is read (docs/security.md, "Large JSON bodies and authentication
    // order"), so these requests carry a known token and no signature.
    it('answers 413 from Content-Length alone for a JSON body over MAX_BODY_BYTES, never reading it', async () => {
      const request = rawRequest(
        server.baseUrl,
        requestHead('POST', '/api/v3/exams', {
          Accept: V3_ACCEPT,
          Authorization: `Token token=${apiToken}`,
          'Content-Type': 'application/json',
          'Content-Length': String(MEGABYTE + 1),
        }),
      );
      const answer = await request.answer;
      request.cut();
      assert.equal(answer.status, 413);
      assert.deepEqual(JSON.parse(answer.body), { error: 'Payload Too Large' });
    });

    it('answers 413 while reading a chunked JSON body that grows past MAX_BODY_BYTES', async () => {
      const request = rawRequest(
        server.baseUrl,
        requestHead('POST', '/api/v3/exams', {
          Accept: V3_ACCEPT,
          Authorization: `Token token=${apiToken}`,
          'Content-Type': 'application/json',
          'Transfer-Encoding': 'chunked',
        }),
      );
      const piece = `{"name":"${'x'.repeat(64 * 1024)}`;
      const sending = (async () => {
        for (let sent = 0; sent < 40; sent += 1) {
          await request.send(`${Buffer.byteLength(piece).toString(16)}\r\n${piece}\r\n`);
        }
      })();
      const answer = await request.answer;
      request.cut();
      await sending;
      assert.equal(answer.status, 413);
    });

    it('answers 413 to a GET whose JSON body is over MAX_BODY_BYTES', async () => {
      const answer = await httpRequest({
        url: `${server.baseUrl}/api/v3/exams`,
        method: 'GET',
        headers: {
          accept: V3_ACCEPT,
          authorization: `Token token=${apiToken}`,
          'content-type': 'application/json',
        },
        body: `{"filter":"${'x'.repeat(MEGABYTE)}"}`,
      });
      assert.equal(answer.status, 413);
    });

    /** A JSON body of exactly `size` bytes: `{"k0":0,"k1":0,...}` padded with spaces. */
    function manyKeys(size: number): string {
      let text = '{"k0":0';
      for (let key = 1; text.length < size - 32; key += 1) text += `,"k${key}":0`;
      return `${text}}`.padEnd(size, ' ');
    }

    /** A JSON body of `size` bytes: one parameter nested as deep as the size allows. */
    function deeplyNested(size: number): string {
      const depth = Math.floor((size - 8) / 2);
      return `{"a":${'['.repeat(depth)}${']'.repeat(depth)}}`;
    }

    const hostile: readonly (readonly [string, (size: number) => string, string, number])[] = [
      ['JSON with as many keys as fit', manyKeys, 'application/json', 413],
      ['JSON nested as deep as fits', deeplyNested, 'application/json', 400],
      [
        'one JSON number with every byte a digit',
        (size) => `{"n":${'9'.repeat(size - 6)}}`,
        'application/json',
        403,
      ],
      [
        'a form with as many pairs as fit',
        (size) => 'a=1&'.repeat(Math.floor(size / 4)),
        'application/x-www-form-urlencoded',
        413,
      ],
      [
        'a form hash with as many keys as fit',
        (size) =>
          Array.from({ length: Math.floor(size / 12) }, (_v, key) => `h[${key}]=1`)
            .join('&')
            .slice(0, size),
        'application/x-www-form-urlencoded',
        413,
      ],
    ];
    for (const [name, build, contentType, status] of hostile) {
      it(`answers ${status} to ${name} just under MAX_BODY_BYTES while /healthz keeps answering`, async () => {
        const body = Buffer.from(build(MEGABYTE - 1), 'utf8');
        assert.ok(body.length <= MEGABYTE, `${body.length} bytes`);
        const request = rawRequest(
          server.baseUrl,
          requestHead('POST', '/api/v3/exams', {
            Accept: V3_ACCEPT,
            Authorization: `Token token=${apiToken}`,
            'Content-Type': contentType,
            'Content-Length': String(body.length),
          }),
        );
        // The whole body but its last byte: the service holds the request open, and health answers meanwhile.
        await request.send(body.subarray(0, body.length - 1));
        const health = await httpRequest({ url: `${server.baseUrl}/healthz` });
        assert.equal(health.status, 200);
        await request.send(body.subarray(body.length - 1));
        const answer = await request.answer;
        request.cut();
        assert.equal(answer.status, status, answer.body);
        // While the hostile body was parsed and answered, health answered too.
        const again = await httpRequest({ url: `${server.baseUrl}/healthz` });
        assert.equal(again.status, 200);
      });
    }
  });

  describe(`the upload spool at start [${dialect}]`, () => {
    it('removes stale spool files and leaves young ones (another process may own them)', async () => {
      const probe = await startTestServer(dialect);
      const dataDir = probe.database.dataDir;
      await probe.close();
      fs.mkdirSync(spoolDirectory(dataDir), { recursive: true });
      const stale = path.join(spoolDirectory(dataDir), `${'a'.repeat(32)}.upload`);
      const young = path.join(spoolDirectory(dataDir), `${'b'.repeat(32)}.upload`);
      fs.writeFileSync(stale, 'left by a crashed process');
      fs.writeFileSync(young, 'a request in flight elsewhere');
      const twoHoursAgo = new Date(Date.now() - 2 * 60 * 60 * 1000);
      fs.utimesSync(stale, twoHoursAgo, twoHoursAgo);
      const server = await startTestServer(dialect, { env: { DATA_DIR: dataDir } });
      try {
        assert.equal(fs.existsSync(stale), false);
        assert.equal(fs.existsSync(young), true);
      } finally {
        await server.close();
        fs.rmSync(dataDir, { recursive: true, force: true });
      }
    });
  });
}
