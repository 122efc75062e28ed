import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { NOT_AUTHORIZED } from '../helpers/answers.ts';
import { V3_ACCEPT } from '../helpers/client.ts';
import { httpRequest } from '../helpers/http.ts';
import { DIALECTS, startTestServer, type TestServer } from '../helpers/server.ts';

/** A raw request whose headers are sent at once and whose body is sent only when asked. */
function rawRequest(baseUrl: string, head: string): { socket: net.Socket; received: () => string } {
  const socket = net.connect(Number(new URL(baseUrl).port), '127.0.0.1');
  let text = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    text += chunk;
  });
  socket.on('error', () => {});
  socket.write(head);
  return { socket, received: () => text };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Waits up to `ms` for a whole answer (headers and a body of its Content-Length). Returns the text. */
async function answerWithin(received: () => string, ms: number): Promise<string> {
  for (let waited = 0; waited < ms; waited += 25) {
    const text = received();
    const end = text.indexOf('\r\n\r\n');
    const length = Number(/\r\ncontent-length: *(\d+)/i.exec(text)?.[1] ?? '0');
    if (end !== -1 && Buffer.byteLength(text.slice(end + 4)) >= length) return text;
    await sleep(25);
  }
  return received();
}

/** Headers of a V3 POST announcing a JSON body of `length` bytes, plus `extra` header lines. */
function v3Head(length: number, extra: string): string {
  return (
    `POST /api/v3/exams HTTP/1.1\r\nHost: test\r\nAccept: ${V3_ACCEPT}\r\n` +
    `Content-Type: application/json\r\nContent-Length: ${length}\r\n${extra}\r\n`
  );
}

for (const dialect of DIALECTS) {
  describe(`a V3 body is read only after the credential in its headers checks out [${dialect}]`, () => {
    let server: TestServer;
    let apiToken: string;

    before(async () => {
      server = await startTestServer(dialect);
      const institute = await server.institute();
      apiToken = (await server.user(institute, 'teacher')).credentials.apiToken;
    });
    after(() => server.close());

    for (const [name, header] of [
      ['a token that names no user', 'Authorization: Token token=nobody\r\n'],
      ['no credential at all', ''],
      ['a session cookie that names no session', 'Cookie: invigil_session=nosuchsession\r\n'],
    ] as const) {
      it(`answers 403 to ${name} without waiting for the megabyte it announces`, async () => {
        const request = rawRequest(server.baseUrl, v3Head(1_000_000, header));
        try {
          const text = await answerWithin(request.received, 5000);
          assert.match(text, /^HTTP\/1\.1 403 /, text);
          assert.deepEqual(JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)), NOT_AUTHORIZED);
        } finally {
          request.socket.destroy();
        }
      });
    }

    it('closes the connection after that answer when the announced body is over MAX_BODY_BYTES', async () => {
      const request = rawRequest(server.baseUrl, v3Head(5_000_000, 'Authorization: Token token=nobody\r\n'));
      try {
        const text = await answerWithin(request.received, 5000);
        assert.match(text, /^HTTP\/1\.1 403 /);
        assert.match(text, /\r\nconnection: close\r\n/i);
      } finally {
        request.socket.destroy();
      }
    });

    it('waits for the body of a known token, then answers as before (400 for malformed JSON)', async () => {
      const body = '{"name": "x",';
      const request = rawRequest(
        server.baseUrl,
        v3Head(Buffer.byteLength(body), `Authorization: Token token=${apiToken}\r\n`),
      );
      try {
        await sleep(700);
        assert.equal(request.received(), '', 'nothing answered before the body');
        request.socket.write(body);
        const text = await answerWithin(request.received, 5000);
        assert.match(text, /^HTTP\/1\.1 400 /, text);
      } finally {
        request.socket.destroy();
      }
    });
  });

  describe(`every answer says X-Content-Type-Options: nosniff [${dialect}]`, () => {
    let server: TestServer;

    before(async () => {
      server = await startTestServer(dialect);
    });
    after(() => server.close());

    it('on success, refusals, not-found answers and unreadable bodies, V3 and V2', async () => {
      const answers = {
        health: await httpRequest({ url: `${server.baseUrl}/healthz` }),
        notAcceptable: await httpRequest({ url: `${server.baseUrl}/api/v3/exams` }),
        refused: await httpRequest({ url: `${server.baseUrl}/api/v3/exams`, headers: { accept: V3_ACCEPT } }),
        v3NotFound: await httpRequest({
          url: `${server.baseUrl}/api/v3/nothing`,
          headers: { accept: V3_ACCEPT },
        }),
        v2NotFound: await httpRequest({ url: `${server.baseUrl}/api/nothing` }),
        v2Malformed: await httpRequest({
          url: `${server.baseUrl}/api/exams`,
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{"api_token": ',
        }),
      };
      const expected = {
        health: 200,
        notAcceptable: 406,
        refused: 403,
        v3NotFound: 404,
        v2NotFound: 404,
        v2Malformed: 400,
      };
      for (const [name, answer] of Object.entries(answers)) {
        assert.equal(answer.status, expected[name as keyof typeof expected], name);
        assert.equal(answer.headers['x-content-type-options'], 'nosniff', name);
      }
    });
  });

  describe(`deprecated exam endpoints link their successor without echoing input [${dialect}]`, () => {
    let server: TestServer;

    before(async () => {
      server = await startTestServer(dialect);
    });
    after(() => server.close());

    it('links the collection, not the text sent, for a student_session_id that is no id', async () => {
      const sent = encodeURIComponent(`${'<x>'.repeat(2000)}`);
      const answer = await httpRequest({
        url: `${server.baseUrl}/api/v3/exams/1/show_student?student_session_id=${sent}`,
        headers: { accept: V3_ACCEPT },
      });
      assert.equal(answer.status, 403);
      assert.equal(answer.headers.link, '</api/v3/student_sessions>; rel="successor-version"');
    });

    it('links the exam list for an exam path id that is no id', async () => {
      const answer = await httpRequest({
        url: `${server.baseUrl}/api/v3/exams/${'a'.repeat(90)}/index_students`,
        headers: { accept: V3_ACCEPT },
      });
      assert.equal(answer.status, 403);
      assert.equal(answer.headers.link, '</api/v3/exams>; rel="successor-version"');
    });
  });

  describe(`temporary .part files of interrupted writes are swept at start [${dialect}]`, () => {
    it('removes stale ones and leaves young ones (another process may be writing them)', async () => {
      // Local storage whatever TEST_STORAGE says: the .part files are the local disk's.
      const probe = await startTestServer(dialect, { env: { STORAGE_URL: '' } });
      const dataDir = probe.database.dataDir;
      await probe.close();
      const tmp = path.join(dataDir, 'files', '.tmp');
      fs.mkdirSync(tmp, { recursive: true });
      const stale = path.join(tmp, `${'a'.repeat(30)}.part`);
      const young = path.join(tmp, `${'b'.repeat(30)}.part`);
      const other = path.join(tmp, 'notes.txt');
      for (const file of [stale, young, other]) fs.writeFileSync(file, 'half a file');
      const twoHoursAgo = new Date(Date.now() - 2 * 60 * 60 * 1000);
      fs.utimesSync(stale, twoHoursAgo, twoHoursAgo);
      fs.utimesSync(other, twoHoursAgo, twoHoursAgo);
      const server = await startTestServer(dialect, { env: { DATA_DIR: dataDir, STORAGE_URL: '' } });
      try {
        assert.equal(fs.existsSync(stale), false, 'the stale .part file is removed');
        assert.equal(fs.existsSync(young), true, 'the young .part file stays');
        assert.equal(fs.existsSync(other), true, 'a file of another name stays');
      } finally {
        await server.close();
        fs.rmSync(dataDir, { recursive: true, force: true });
      }
    });
  });
}
