import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { BANDWIDTH_PROBE_BYTES } from '../../../src/http/room/page.routes.ts';
import { invalid } from '../../helpers/answers.ts';
import { type HttpAnswer, httpRequest } from '../../helpers/http.ts';
import { object } from '../../helpers/json.ts';
import { DIALECTS, startTestServer, type TestServer } from '../../helpers/server.ts';
import type { Scalar } from '../../helpers/signing.ts';

type TestUser = Awaited<ReturnType<TestServer['user']>>;

const HTML = 'text/html; charset=utf-8';
const NOT_FOUND_TITLE = '<title>Exam room not found</title>';

/** The one value of header `name` in `answer` (failing when it is missing or repeated). */
function header(answer: HttpAnswer, name: string): string {
  const value = answer.headers[name];
  assert.equal(typeof value, 'string', `one ${name} header`);
  return value as string;
}

/** The headers every page answer carries, found or not. */
function assertSecurityHeaders(answer: HttpAnswer): void {
  const csp = header(answer, 'content-security-policy');
  const directives = csp.split(';').map((directive) => directive.trim());
  // WebAssembly for the automated flags' speech model may compile; JavaScript eval may not.
  assert.ok(directives.includes("script-src 'self' 'wasm-unsafe-eval'"), `script-src 'self' in ${csp}`);
  assert.ok(directives.includes("default-src 'none'"), `default-src 'none' in ${csp}`);
  assert.ok(directives.includes("frame-ancestors 'none'"), `frame-ancestors 'none' in ${csp}`);
  assert.doesNotMatch(csp, /'unsafe-inline'|'unsafe-eval'/);
  assert.equal(answer.headers['x-content-type-options'], 'nosniff');
  assert.equal(answer.headers['referrer-policy'], 'no-referrer');
  const permissions = header(answer, 'permissions-policy');
  for (const feature of ['camera', 'microphone', 'display-capture', 'fullscreen']) {
    assert.ok(permissions.includes(`${feature}=(self)`), `${feature}=(self) in ${permissions}`);
  }
}

/** Asserts `answer` is the readable "not found" page: 404, HTML, security headers, not cached. */
function assertNotFoundPage(answer: HttpAnswer): void {
  assert.equal(answer.status, 404, answer.text);
  assert.equal(answer.headers['content-type'], HTML);
  assert.ok(answer.text.includes(NOT_FOUND_TITLE), answer.text);
  assert.ok(answer.text.includes('<h1>Exam room not found</h1>'), answer.text);
  assert.equal(answer.headers['cache-control'], 'no-store');
  assertSecurityHeaders(answer);
}

/** The text of every inline `<script>` (one without a `src`) in `html`. */
function inlineScripts(html: string): string[] {
  return [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)]
    .filter(([, attributes]) => !/\bsrc\s*=/.test(attributes ?? ''))
    .map(([, , body]) => body ?? '');
}

for (const dialect of DIALECTS) {
  describe(`candidate room page /room/:token [${dialect}]`, () => {
    let server: TestServer;
    let owner: TestUser;
    let examId: number;
    let student: { token: string; pinCode: number; email: string };

    before(async () => {
      server = await startTestServer(dialect);
      const institute = await server.institute();
      owner = await server.user(institute, 'teacher');
      examId = await createExam('<b>Chem & "lab"</b>');
      student = await createStudent(examId);
    });

    after(async () => {
      await server.close();
    });

    async function createExam(name: string): Promise<number> {
      const answer = await owner.client.v3('POST', '/exams', {
        name,
        type: 'classroom',
        duration_minutes: 30,
      });
      assert.equal(answer.status, 201, answer.text);
      return object(object(answer.json, 'body').exam, 'exam').id as number;
    }

    let students = 0;
    /** A new session of `exam`; returns its token, pin code and email as the V3 API shows them. */
    async function createStudent(
      exam: number,
      extra: Record<string, Scalar> = {},
    ): Promise<{ token: string; pinCode: number; email: string }> {
      students += 1;
      const email = `candidate${students}@example.org`;
      const answer = await owner.client.v3('POST', '/exams/:exam_id/student_sessions', {
        exam_id: exam,
        name: `Candidate ${students}`,
        email,
        ...extra,
      });
      assert.equal(answer.status, 201, answer.text);
      const created = object(object(answer.json, 'body').student, 'student');
      return { token: created.token as string, pinCode: created.pin_code as number, email };
    }

    function get(path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<HttpAnswer> {
      return httpRequest({ url: `${server.baseUrl}${path}`, method, headers });
    }

    describe('GET /room/:token', () => {
      it('answers the page as HTML, naming the exam escaped in the title and heading', async () => {
        const answer = await get(`/room/${student.token}`);
        assert.equal(answer.status, 200, answer.text);
        assert.equal(answer.headers['content-type'], HTML);
        assert.ok(answer.text.startsWith('<!DOCTYPE html>'), answer.text);
        const escaped = '&lt;b&gt;Chem &amp; &quot;lab&quot;&lt;/b&gt;';
        assert.ok(answer.text.includes(`<title>${escaped}</title>`), answer.text);
        assert.ok(answer.text.includes(`<h1 id="exam-name">${escaped}</h1>`), answer.text);
        assert.doesNotMatch(answer.text, /<b>|<\/b>/);
        assert.doesNotMatch(answer.text, /"lab"/);
      });

      it('loads its script and style sheet from the service (the web build), with no inline script', async () => {
        const answer = await get(`/room/${student.token}`);
        assert.equal(answer.status, 200, answer.text);
        assert.match(
          answer.text,
          /<script\b[^>]*\btype="module"[^>]*\bsrc="\/assets\/room-[\w-]+\.js"[^>]*><\/script>/,
        );
        assert.match(answer.text, /<link\b[^>]*\brel="stylesheet"[^>]*\bhref="\/assets\/[\w-]+\.css"[^>]*>/);
        assert.deepEqual(inlineScripts(answer.text), []);
        assert.doesNotMatch(answer.text, /\son[a-z]+\s*=/i, 'no inline event handler');
      });

      it('never shows the session token, pin code or email', async () => {
        const answer = await get(`/room/${student.token}`);
        assert.equal(answer.status, 200, answer.text);
        assert.ok(!answer.text.includes(student.token), 'token in the page');
        assert.ok(!answer.text.includes(String(student.pinCode)), 'pin code in the page');
        assert.ok(!answer.text.includes(student.email), 'email in the page');
        assert.ok(!answer.text.includes('candidate'), 'student name or email in the page');
      });

      it('answers with the security headers and is not cached', async () => {
        const answer = await get(`/room/${student.token}`);
        assert.equal(answer.status, 200, answer.text);
        assert.equal(answer.headers['cache-control'], 'no-store');
        assertSecurityHeaders(answer);
      });

      it('answers HEAD with the headers of GET and no body', async () => {
        const answer = await get(`/room/${student.token}`, {}, 'HEAD');
        assert.equal(answer.status, 200, answer.text);
        assert.equal(answer.headers['content-type'], HTML);
        assert.equal(answer.bytes.length, 0);
        assertSecurityHeaders(answer);
      });

      it('answers the readable 404 page for a token that names no session', async () => {
        assertNotFoundPage(await get(`/room/${crypto.randomBytes(16).toString('hex')}`));
      });

      it('answers the 404 page, never naming the exam, once the exam is destroyed', async () => {
        const doomed = await createExam('Doomed exam');
        const { token } = await createStudent(doomed);
        assert.equal((await get(`/room/${token}`)).status, 200);
        const destroyed = await owner.client.v3('DELETE', '/exams/:id', { id: doomed });
        assert.equal(destroyed.status, 200, destroyed.text);
        const answer = await get(`/room/${token}`);
        assertNotFoundPage(answer);
        assert.ok(!answer.text.includes('Doomed'), answer.text);
      });

      it('answers HEAD for an unknown token with the 404 page headers and no body', async () => {
        const answer = await get(`/room/${crypto.randomBytes(16).toString('hex')}`, {}, 'HEAD');
        assert.equal(answer.status, 404);
        assert.equal(answer.headers['content-type'], HTML);
        assert.equal(answer.bytes.length, 0);
        assertSecurityHeaders(answer);
      });

      for (const [what, token] of [
        ['a traversal (../etc)', '..%2Fetc'],
        ['an encoded traversal', '%2E%2E%2Fetc%2Fpasswd'],
        ['quotes and angle brackets', '%22%3E%3Cscript%3Ealert(1)%3C%2Fscript%3E'],
        ['a non-ASCII token', '%C3%A9t%C3%A9'],
        ['a token of 100 characters (the longest the router takes)', 'a'.repeat(100)],
      ] as const) {
        it(`answers the 404 page, not a server error, for ${what}`, async () => {
          const answer = await get(`/room/${token}`);
          assertNotFoundPage(answer);
          assert.ok(!answer.text.includes('<script>'), answer.text);
        });
      }

      it('refuses a NUL byte (which PostgreSQL text cannot hold) with 422 naming the token, as every input', async () => {
        const answer = await get(`/room/${'a'.repeat(31)}%00`);
        assert.equal(answer.status, 422, answer.text);
        assert.deepEqual(answer.json, invalid('token', 'contains a NUL character'));
      });

      // The router refuses these before the route runs: short JSON errors that do not echo the path.
      for (const [what, token, status] of [
        ['a token of 101 characters', 'a'.repeat(101), 414],
        ['a very long token', 'a'.repeat(5000), 414],
        ['an invalid percent escape', '%E0%A4%A', 400],
      ] as const) {
        it(`answers ${status}, not a server error, for ${what}, without quoting the path`, async () => {
          const answer = await get(`/room/${token}`);
          assert.equal(answer.status, status, answer.text);
          assert.deepEqual(answer.json, { error: status === 414 ? 'URI Too Long' : 'Bad Request' });
        });
      }
    });

    describe("GET the room's script and style sheet (the hashed files its page names)", () => {
      /** The script and the first style sheet the page loads. */
      async function pageFiles(): Promise<{ script: string; styles: string }> {
        const page = await get(`/room/${student.token}`);
        const script = /<script\b[^>]*\bsrc="([^"]+)"/.exec(page.text)?.[1];
        const styles = /<link\b[^>]*\brel="stylesheet"[^>]*\bhref="([^"]+)"/.exec(page.text)?.[1];
        assert.ok(script !== undefined && styles !== undefined, page.text);
        return { script, styles };
      }

      for (const [kind, contentType, marker] of [
        ['script', 'text/javascript; charset=utf-8', /\b(import|export|function|const)\b/],
        ['styles', 'text/css; charset=utf-8', /[{}]/],
      ] as const) {
        it(`answers the page's ${kind} with its content type, an ETag and immutable caching`, async () => {
          const answer = await get((await pageFiles())[kind]);
          assert.equal(answer.status, 200, answer.text);
          assert.equal(answer.headers['content-type'], contentType);
          assert.match(answer.text, marker);
          assert.match(answer.headers.etag ?? '', /^"[^"]+"$/);
          assert.equal(answer.headers['cache-control'], 'public, max-age=31536000, immutable');
          assert.equal(answer.headers['x-content-type-options'], 'nosniff');
        });

        it(`answers the page's ${kind} 304 with an empty body to If-None-Match naming its ETag`, async () => {
          const file = (await pageFiles())[kind];
          const first = await get(file);
          const etag = first.headers.etag ?? '';
          const again = await get(file, { 'if-none-match': etag });
          assert.equal(again.status, 304, again.text);
          assert.equal(again.bytes.length, 0);
          assert.equal(again.headers.etag, etag);
        });

        it(`answers the page's ${kind} in full to If-None-Match naming another ETag`, async () => {
          const file = (await pageFiles())[kind];
          const first = await get(file);
          const stale = await get(file, { 'if-none-match': '"stale"' });
          assert.equal(stale.status, 200, stale.text);
          assert.deepEqual(stale.bytes, first.bytes);
        });
      }

      it('gives the two files different ETags', async () => {
        const { script, styles } = await pageFiles();
        assert.notEqual((await get(script)).headers.etag, (await get(styles)).headers.etag);
      });
    });

    describe('GET /room/assets/bandwidth-probe', () => {
      it(`answers ${BANDWIDTH_PROBE_BYTES} bytes, not cached`, async () => {
        const answer = await get('/room/assets/bandwidth-probe');
        assert.equal(answer.status, 200);
        assert.equal(answer.bytes.length, BANDWIDTH_PROBE_BYTES);
        assert.equal(answer.headers['content-length'], String(BANDWIDTH_PROBE_BYTES));
        assert.equal(answer.headers['cache-control'], 'no-store');
        assert.equal(answer.headers['content-type'], 'application/octet-stream');
      });
    });
  });
}
