/**
 * The phone's pairing pages over HTTP: the PIN form at /m and what it refuses (a wrong PIN, the PIN
 * of a finished exam, guessing beyond the limit per IP and per email), the phone page at
 * /m/<pairing token> and its 404 for a token that names no session (unknown, replaced, or a room
 * token), and the page's assets. PIN tries come from several loopback addresses (127.0.0.x), so the
 * limit per IP and the limit per email can be told apart.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { NO_PHONE, PHONE_NOT_NEEDED, WRONG_PIN } from '../../../src/domain/mobile/mobile.ts';
import { PIN_IP_RATE_LIMIT, PIN_RATE_LIMIT } from '../../../src/http/mobile/pages.routes.ts';
import { escapeHtml } from '../../../src/security/html.ts';
import { webBuild } from '../../../src/http/web-build.ts';
import { type HttpAnswer, httpRequest } from '../../helpers/http.ts';
import { object } from '../../helpers/json.ts';
import { DIALECTS, startTestServer, type TestServer } from '../../helpers/server.ts';
import { freePort } from '../../mail/support.ts';

type TestUser = Awaited<ReturnType<TestServer['user']>>;

/** The phone page's script and style sheets in the web build (web/phone). */
function phoneFiles() {
  const files = webBuild().entry('phone');
  assert.ok(files, 'the web build has the phone entry (npm run build:web)');
  return files;
}

/** A pairing token: 32 hex characters. */
const TOKEN_PATTERN = /^\/m\/([0-9a-f]{32})$/;

/** One HTTP exchange from the loopback address `from` (127.0.0.x: a different client IP each). */
function requestFrom(
  from: string,
  options: { url: string; method?: string; headers?: Record<string, string>; body?: string },
): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const url = new URL(options.url);
    const headers: Record<string, string> = { ...options.headers };
    if (options.body !== undefined) headers['content-length'] = String(Buffer.byteLength(options.body));
    const request = http.request(
      {
        hostname: url.hostname,
        port: url.port,
        path: url.pathname,
        method: options.method ?? 'GET',
        headers,
        localAddress: from,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          const bytes = Buffer.concat(chunks);
          const text = bytes.toString('utf8');
          let json: unknown;
          try {
            json = text === '' ? undefined : JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: response.statusCode ?? 0, headers: response.headers, text, bytes, json });
        });
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    if (options.body !== undefined) request.write(options.body);
    request.end();
  });
}

for (const dialect of DIALECTS) {
  describe(`phone pairing pages: /m and /m/<token> [${dialect}]`, () => {
    let server: TestServer;
    let owner: TestUser;
    let phoneExamId: number;
    let plainExamId: number;
    let address = 1;

    before(async () => {
      const port = await freePort();
      server = await startTestServer(dialect, { port, env: { PUBLIC_URL: `http://127.0.0.1:${port}` } });
      owner = await server.user(await server.institute(), 'teacher');
      phoneExamId = await exam('Statistics with a phone', true);
      plainExamId = await exam('Statistics without a phone', false);
    });

    after(async () => {
      await server?.close();
    });

    /** A fresh loopback address: a client IP no test has used yet. */
    function newIp(): string {
      address += 1;
      return `127.0.0.${address}`;
    }

    async function exam(name: string, mobileCam: boolean): Promise<number> {
      const answer = await owner.client.v3('POST', '/exams', {
        name,
        type: 'record_review',
        duration_minutes: 30,
        web_cam: true,
        mobile_cam: mobileCam,
      });
      assert.equal(answer.status, 201, answer.text);
      return object(object(answer.json, 'body').exam, 'exam').id as number;
    }

    /** A student of `examId`; returns the room token and the six-digit PIN as the room shows it. */
    async function student(
      examId: number,
      email: string,
      extra: Record<string, boolean> = {},
    ): Promise<{ token: string; pin: string; id: number }> {
      const answer = await owner.client.v3('POST', '/exams/:exam_id/student_sessions', {
        exam_id: examId,
        name: 'Grace Hopper',
        email,
        ...extra,
      });
      assert.equal(answer.status, 201, answer.text);
      const record = object(object(answer.json, 'body').student, 'student');
      return {
        id: record.id as number,
        token: record.token as string,
        pin: String(record.pin_code).padStart(6, '0'),
      };
    }

    function postPin(
      from: string,
      fields: { pin: string; email: string },
      json = false,
    ): Promise<HttpAnswer> {
      return requestFrom(from, {
        url: `${server.baseUrl}/m`,
        method: 'POST',
        headers: json
          ? { 'content-type': 'application/json', accept: 'application/json' }
          : { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' },
        body: json ? JSON.stringify(fields) : new URLSearchParams(fields).toString(),
      });
    }

    function roomCall(token: string, path: string, method = 'POST'): Promise<HttpAnswer> {
      return httpRequest({
        url: `${server.baseUrl}/api/room/${token}${path}`,
        method,
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
    }

    it('serves the PIN form as a page that works without JavaScript', async () => {
      const answer = await httpRequest({ url: `${server.baseUrl}/m` });
      assert.equal(answer.status, 200);
      assert.match(answer.headers['content-type'] ?? '', /^text\/html/);
      assert.match(answer.text, /<form class="pin-form" method="post" action="\/m">/);
      assert.match(answer.text, /<label for="pin">PIN<\/label>/);
      assert.match(answer.text, /<input id="pin" name="pin" type="text" inputmode="numeric"/);
      assert.match(answer.text, /<label for="email">Email address<\/label>/);
      assert.ok(!answer.text.includes('<script'), 'no script on the PIN page');
      const policy = String(answer.headers['content-security-policy']);
      assert.ok(policy.includes("form-action 'self'"), policy);
      assert.ok(policy.includes("script-src 'self'"), policy);
      // The phone runs no detector: no WebAssembly compiling on its pages (the room alone has it).
      assert.ok(!policy.includes('wasm-unsafe-eval'), policy);
      assert.ok(policy.includes("frame-ancestors 'none'"), policy);
      assert.equal(answer.headers['referrer-policy'], 'no-referrer');
      assert.equal(answer.headers['cache-control'], 'no-store');
    });

    it('pairs by PIN and email (spaces in the PIN, the email in any case) and sends the phone on', async () => {
      const { pin, token } = await student(phoneExamId, 'Pair.Me@example.org');
      const answer = await postPin(newIp(), {
        pin: `${pin.slice(0, 3)} ${pin.slice(3)}`,
        email: 'pair.me@EXAMPLE.org',
      });
      assert.equal(answer.status, 303, answer.text);
      const location = answer.headers.location ?? '';
      const mobileToken = TOKEN_PATTERN.exec(location)?.[1];
      assert.ok(mobileToken, `redirected to the phone page: ${location}`);
      assert.notEqual(mobileToken, token, 'the pairing token is not the room token');
      const room = object(object((await roomCall(token, '', 'GET')).json, 'room view').mobile, 'mobile');
      assert.equal(room.pairing_url, `${server.baseUrl}${location}`, 'the QR code holds the same link');
      const page = await httpRequest({ url: `${server.baseUrl}${location}` });
      assert.equal(page.status, 200);
      assert.match(page.text, /<h1 id="exam-name">Statistics with a phone<\/h1>/);
      assert.ok(page.text.includes(`<script type="module" src="${phoneFiles().script}"></script>`));
      assert.ok(
        String(page.headers['content-security-policy']).includes("form-action 'none'"),
        'the phone page posts no form',
      );
      assert.match(String(page.headers['permissions-policy']), /camera=\(self\)/);
      const view = await httpRequest({ url: `${server.baseUrl}/api/mobile/${mobileToken}` });
      assert.equal(view.status, 200, view.text);
      // The same PIN again answers the same link (no new token, the QR code stays valid).
      const again = await postPin(newIp(), { pin, email: 'pair.me@example.org' }, true);
      assert.equal(again.status, 303);
      assert.equal(again.headers.location, location);
    });

    it('answers a wrong PIN with 422 and the form again, the email kept', async () => {
      const { pin } = await student(phoneExamId, 'wrong.pin@example.org');
      const wrong = pin === '000000' ? '000001' : '000000';
      const answer = await postPin(newIp(), { pin: wrong, email: 'wrong.pin@example.org' });
      assert.equal(answer.status, 422, answer.text);
      assert.match(answer.headers['content-type'] ?? '', /^text\/html/);
      assert.ok(
        answer.text.includes(
          `<div class="alert" role="alert" id="pin-error"><p>${escapeHtml(WRONG_PIN)}</p></div>`,
        ),
      );
      assert.match(answer.text, /<title>Error: connect your phone<\/title>/);
      assert.match(answer.text, /value="wrong\.pin@example\.org"/);
      assert.match(answer.text, /aria-invalid="true"/);
      // The right PIN with another student's email, and the PIN of an exam that uses no phone.
      const other = await postPin(newIp(), { pin, email: 'someone.else@example.org' });
      assert.equal(other.status, 422);
      const plain = await student(plainExamId, 'no.phone@example.org');
      const noPhone = await postPin(newIp(), { pin: plain.pin, email: 'no.phone@example.org' }, true);
      assert.equal(noPhone.status, 422);
      assert.deepEqual(noPhone.json, { error: WRONG_PIN });
      const empty = await postPin(newIp(), { pin: '', email: 'wrong.pin@example.org' });
      assert.equal(empty.status, 422);
      assert.match(empty.text, /Type the six-digit PIN shown in your exam room\./);
    });

    it('answers the PIN of a finished exam with 409: the phone is no longer needed', async () => {
      const done = await student(phoneExamId, 'finished@example.org', { skip_requirements: true });
      for (const step of ['/enter', '/start', '/finish']) {
        const answer = await roomCall(done.token, step);
        assert.equal(answer.status, 200, `${step}: ${answer.text}`);
      }
      const answer = await postPin(newIp(), { pin: done.pin, email: 'finished@example.org' });
      assert.equal(answer.status, 409, answer.text);
      assert.ok(answer.text.includes(escapeHtml(PHONE_NOT_NEEDED)), answer.text);
      const json = await postPin(newIp(), { pin: done.pin, email: 'finished@example.org' }, true);
      assert.equal(json.status, 409);
      assert.deepEqual(json.json, { error: PHONE_NOT_NEEDED });
    });

    it('refuses guessing beyond 10 tries per email and IP in 10 minutes, with 429 and Retry-After', async () => {
      const target = await student(phoneExamId, 'Guessed@example.org');
      const wrong = target.pin === '999999' ? '999998' : '999999';
      const ip = newIp();
      for (let attempt = 0; attempt < PIN_RATE_LIMIT.max; attempt += 1) {
        const answer = await postPin(ip, { pin: wrong, email: 'guessed@example.org' });
        assert.equal(answer.status, 422, `try ${attempt + 1}`);
      }
      // Now even the right PIN, from the same IP, in another case of the same email.
      const limited = await postPin(ip, { pin: target.pin, email: 'GUESSED@example.org' });
      assert.equal(limited.status, 429, limited.text);
      const retryAfter = Number(limited.headers['retry-after']);
      assert.ok(retryAfter >= 1 && retryAfter <= PIN_RATE_LIMIT.windowMs / 1000, `Retry-After ${retryAfter}`);
      assert.match(limited.headers['content-type'] ?? '', /^text\/html/);
      assert.match(limited.text, /Too many tries\. Please wait \d+ minutes? and try again/);
      const json = await postPin(ip, { pin: target.pin, email: 'guessed@example.org' }, true);
      assert.equal(json.status, 429);
      assert.match(String(object(json.json, 'body').error), /^Too many tries/);
      // Another student's email is not held back, even from that IP.
      const other = await student(phoneExamId, 'not-guessed@example.org');
      assert.equal((await postPin(ip, { pin: other.pin, email: 'not-guessed@example.org' })).status, 303);
    });

    it('lets the student pair from their own address while someone elsewhere used up the tries of their email', async () => {
      const target = await student(phoneExamId, 'blocked-elsewhere@example.org');
      const wrong = target.pin === '999999' ? '999998' : '999999';
      const attacker = newIp();
      for (let attempt = 0; attempt < PIN_RATE_LIMIT.max; attempt += 1) {
        await postPin(attacker, { pin: wrong, email: 'blocked-elsewhere@example.org' });
      }
      assert.equal(
        (await postPin(attacker, { pin: target.pin, email: 'blocked-elsewhere@example.org' })).status,
        429,
      );
      // The student's own phone, on another address, pairs at once.
      const paired = await postPin(newIp(), { pin: target.pin, email: 'blocked-elsewhere@example.org' });
      assert.equal(paired.status, 303, paired.text);
    });

    it('refuses more than 60 tries per IP in 10 minutes, whatever the emails', async () => {
      const ip = newIp();
      for (let attempt = 0; attempt < PIN_IP_RATE_LIMIT.max; attempt += 1) {
        const answer = await postPin(ip, { pin: '123456', email: `nobody${attempt}@example.org` });
        assert.notEqual(answer.status, 429, `try ${attempt + 1}`);
      }
      const right = await student(phoneExamId, 'same-ip@example.org');
      const limited = await postPin(ip, { pin: right.pin, email: 'same-ip@example.org' });
      assert.equal(limited.status, 429, limited.text);
      assert.ok(Number(limited.headers['retry-after']) >= 1);
      // The email itself was not counted against: from another IP it pairs at once.
      assert.equal((await postPin(newIp(), { pin: right.pin, email: 'same-ip@example.org' })).status, 303);
    });

    it('counts the tries in the shared table every process reads', async () => {
      await student(phoneExamId, 'shared@example.org');
      const ip = newIp();
      await postPin(ip, { pin: '111111', email: 'Shared@example.org' });
      // The counts are flushed every second; wait for this one's.
      let rows: { key: string; hits: number }[] = [];
      for (let round = 0; round < 50 && rows.length === 0; round += 1) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        rows = await server.app.database.db
          .selectFrom('room_rate_limits')
          .select(['key', 'hits'])
          .where('key', '=', `pin-email:${ip} shared@example.org`)
          .execute();
      }
      assert.deepEqual(
        rows.map((row) => [row.key, Number(row.hits)]),
        [[`pin-email:${ip} shared@example.org`, 1]],
      );
      const ipRows = await server.app.database.db
        .selectFrom('room_rate_limits')
        .select('key')
        .where('key', 'like', 'pin-ip:%')
        .execute();
      assert.ok(ipRows.length > 0, 'the IP counts are shared too');
    });

    it('answers a readable 404 page for a pairing token that names no session', async () => {
      const unknown = await httpRequest({ url: `${server.baseUrl}/m/${'0'.repeat(32)}` });
      assert.equal(unknown.status, 404);
      assert.match(unknown.headers['content-type'] ?? '', /^text\/html/);
      assert.match(unknown.text, /<h1>Phone link not found<\/h1>/);
      assert.ok(unknown.text.includes(escapeHtml(NO_PHONE)));
      assert.match(unknown.text, /<a href="\/m">connect with the PIN<\/a>/);
      assert.match(String(unknown.headers['content-security-policy']), /default-src 'none'/);
    });

    it('never takes a room token as a pairing token, nor the other way round', async () => {
      const { token } = await student(phoneExamId, 'two.tokens@example.org');
      const room = object(object((await roomCall(token, '', 'GET')).json, 'room view').mobile, 'mobile');
      const mobileToken = TOKEN_PATTERN.exec(new URL(String(room.pairing_url)).pathname)?.[1];
      assert.ok(mobileToken);
      assert.equal((await httpRequest({ url: `${server.baseUrl}/m/${token}` })).status, 404);
      assert.equal((await httpRequest({ url: `${server.baseUrl}/api/mobile/${token}` })).status, 404);
      assert.equal((await httpRequest({ url: `${server.baseUrl}/room/${mobileToken}` })).status, 404);
      assert.equal((await httpRequest({ url: `${server.baseUrl}/api/room/${mobileToken}` })).status, 404);
      assert.equal((await httpRequest({ url: `${server.baseUrl}/m/${mobileToken}` })).status, 200);
    });

    it('answers 404 for a pairing link replaced by a newer code', async () => {
      const { token } = await student(phoneExamId, 'replaced@example.org');
      const before = object(object((await roomCall(token, '', 'GET')).json, 'room view').mobile, 'mobile');
      const renewed = await roomCall(token, '/mobile/pairing');
      assert.equal(renewed.status, 200, renewed.text);
      const now = object(object(renewed.json, 'room view').mobile, 'mobile');
      assert.notEqual(now.pairing_url, before.pairing_url);
      const old = await httpRequest({ url: String(before.pairing_url) });
      assert.equal(old.status, 404);
      assert.match(old.text, /Phone link not found/);
      assert.equal((await httpRequest({ url: String(now.pairing_url) })).status, 200);
    });

    it('serves the phone page script and style sheet with an ETag', async () => {
      for (const [name, type] of [
        [phoneFiles().script, /^text\/javascript/],
        [phoneFiles().styles[0] ?? '', /^text\/css/],
      ] as const) {
        const answer = await httpRequest({ url: `${server.baseUrl}${name}` });
        assert.equal(answer.status, 200, name);
        assert.match(answer.headers['content-type'] ?? '', type);
        const etag = answer.headers.etag ?? '';
        assert.match(etag, /^"[\w-]{22}"$/);
        const cached = await httpRequest({
          url: `${server.baseUrl}${name}`,
          headers: { 'if-none-match': etag },
        });
        assert.equal(cached.status, 304, name);
      }
    });
  });
}
