/**
 * "Try it out" at /api/docs for a browser signed in to the console (docs/console/account.md): the
 * page's own script sends the V3 Accept and, on a change, X-CSRF-Token, so GET and POST on /api/v3
 * work with the session cookie and no signature; a signed-out browser is refused; the page keeps a
 * strict Content-Security-Policy that nothing on it breaks; the document requires the signing
 * parameters of signed requests only.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Locator, Page } from 'playwright-core';
import { SCREENSHOT_DIR } from '../helpers/browser.ts';
import { httpRequest } from '../helpers/http.ts';
import { object } from '../helpers/json.ts';
import { browserDialects } from '../helpers/server.ts';
import {
  newPage,
  startConsoleWorld,
  TEST_PASSWORD,
  type ConsoleWorld,
  type StaffUser,
} from './console/support.ts';

/** Rendering the whole document takes Swagger UI a while on a busy machine. */
const SLOW_PAGE_MS = 90_000;

/**
 * A new page whose browser is signed in to the console as `user` (POST /auth/sign_in from the page's
 * own context, so the session cookie is the browser's), without going through the console's screens.
 */
async function signedInBrowser(world: ConsoleWorld, user: StaffUser): Promise<Page> {
  const page = await newPage(world);
  page.setDefaultTimeout(SLOW_PAGE_MS);
  const answer = await page.request.post(`${world.baseUrl}/auth/sign_in`, {
    data: { email: user.email, password: TEST_PASSWORD },
  });
  assert.equal(answer.status(), 200, await answer.text());
  return page;
}

/** Everything the page reports about refused content (CSP), collected while the test runs. */
function watchCsp(page: Page): string[] {
  const refused: string[] = [];
  page.on('console', (message) => {
    if (/Content Security Policy|Refused to/i.test(message.text())) refused.push(message.text());
  });
  return refused;
}

/** The operation block of `method path` in Swagger UI. */
function operation(page: Page, method: string, apiPath: string): Locator {
  return page
    .locator(`.opblock.opblock-${method.toLowerCase()}`)
    .filter({ has: page.locator(`.opblock-summary-path[data-path="${apiPath}"]`) });
}

/** Opens an operation, presses "Try it out", lets `fill` set fields, presses Execute; returns the block. */
async function execute(
  page: Page,
  method: string,
  apiPath: string,
  fill: (block: Locator) => Promise<void> = async () => {},
): Promise<Locator> {
  const block = operation(page, method, apiPath);
  if (!(await block.locator('.opblock-body').isVisible()))
    await block.locator('.opblock-summary').first().click();
  await block.getByRole('button', { name: 'Try it out' }).click();
  await fill(block);
  await block.getByRole('button', { name: 'Execute' }).click();
  await block.locator('.live-responses-table tbody .response-col_status').first().waitFor();
  return block;
}

async function liveStatus(block: Locator): Promise<number> {
  return Number(
    (await block.locator('.live-responses-table tbody .response-col_status').first().innerText()).trim(),
  );
}

async function liveBody(block: Locator): Promise<string> {
  return block.locator('.live-responses-table tbody .response-col_description pre').first().innerText();
}

for (const dialect of browserDialects(import.meta.url)) {
  describe(`/api/docs "Try it out" with the console session cookie [${dialect}]`, () => {
    let world: ConsoleWorld;
    let admin: StaffUser;

    before(async () => {
      world = await startConsoleWorld(dialect);
      admin = await world.staff('administrator');
      const created = await admin.client.v3('POST', '/exams', {
        name: 'Docs Chemistry',
        type: 'record_review',
        duration_minutes: 60,
      });
      assert.equal(created.status, 201, created.text);
    });

    after(async () => {
      await world?.close();
    });

    it('serves the docs page and its script under a strict Content-Security-Policy', async () => {
      const page = await httpRequest({ url: `${world.baseUrl}/api/docs` });
      assert.equal(page.status, 200);
      const csp = String(page.headers['content-security-policy']);
      assert.match(csp, /script-src 'self'(;|$)/);
      assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|https?:/);
      assert.match(page.text, /theme\/try-it-out\.js/);
      const script = await httpRequest({ url: `${world.baseUrl}/api/docs/static/theme/try-it-out.js` });
      assert.equal(script.status, 200);
      assert.match(String(script.headers['content-type']), /javascript/);
      assert.match(script.text, /X-CSRF-Token/);
    });

    it('documents the signing parameters and the token header as required of signed requests only', async () => {
      const answer = await httpRequest({ url: `${world.baseUrl}/api/openapi.json` });
      const paths = object(object(answer.json, 'document').paths, 'paths');
      const list = object(object(paths['/api/v3/exams'], '/api/v3/exams').get, 'GET /api/v3/exams');
      const parameters = list.parameters as {
        name: string;
        in: string;
        required?: boolean;
        schema?: object;
      }[];
      for (const name of ['timestamp', 'nonce', 'signature', 'authorization']) {
        const parameter = parameters.find((candidate) => candidate.name === name);
        assert.ok(parameter !== undefined, name);
        assert.notEqual(parameter.required, true, `${name} is required`);
      }
      const accept = parameters.find((candidate) => candidate.name === 'accept');
      assert.deepEqual(accept?.schema, { type: 'string', default: 'application/vnd.procwise.v3' });
      assert.equal(accept?.required, true);
      // V2 has no cookie: its signing parameters stay required.
      const v2 = object(object(paths['/api/exams'], '/api/exams').get, 'GET /api/exams');
      const v2Timestamp = (v2.parameters as { name: string; required?: boolean }[]).find(
        (candidate) => candidate.name === 'timestamp',
      );
      assert.equal(v2Timestamp?.required, true);
    });

    it('lists exams (GET) and creates one (POST, with X-CSRF-Token) as the signed-in user', async () => {
      const page = await signedInBrowser(world, admin);
      const refused = watchCsp(page);
      const sent: Record<string, string>[] = [];
      page.on('request', (request) => {
        if (new URL(request.url()).pathname.startsWith('/api/v3/')) sent.push(request.headers());
      });
      const docs = await page.goto(`${world.baseUrl}/api/docs#/exams/get_api_v3_exams`);
      assert.match(String(docs?.headers()['content-security-policy']), /default-src 'none'/);
      await operation(page, 'GET', '/api/v3/exams').waitFor();

      const list = await execute(page, 'GET', '/api/v3/exams');
      assert.equal(await liveStatus(list), 200, await liveBody(list));
      assert.match(await liveBody(list), /Docs Chemistry/);
      await page.screenshot({ path: path.join(SCREENSHOT_DIR, `api-docs-try-it-out-get-${dialect}.png`) });

      const create = await execute(page, 'POST', '/api/v3/exams', async (block) => {
        await block
          .locator('textarea.body-param__text')
          .fill(JSON.stringify({ name: 'Made in the docs', type: 'record_review', duration_minutes: 45 }));
      });
      assert.equal(await liveStatus(create), 201, await liveBody(create));
      const post = sent.find((headers) => headers['x-csrf-token'] !== undefined);
      assert.ok(post !== undefined, 'no request carried X-CSRF-Token');
      assert.equal(post.accept, 'application/vnd.procwise.v3');
      assert.equal(post.authorization, undefined);
      await page.screenshot({ path: path.join(SCREENSHOT_DIR, `api-docs-try-it-out-post-${dialect}.png`) });

      const found = await admin.client.v3('GET', '/exams', {
        filter: JSON.stringify({ name: { eq: 'Made in the docs' } }),
      });
      assert.equal((found.json as { exams: unknown[] }).exams.length, 1, found.text);
      assert.deepEqual(refused, []);
      await page.context().close();
    });

    it('is refused (403) for a browser that is not signed in', async () => {
      const page = await newPage(world);
      page.setDefaultTimeout(SLOW_PAGE_MS);
      await page.goto(`${world.baseUrl}/api/docs#/exams/get_api_v3_exams`);
      await operation(page, 'GET', '/api/v3/exams').waitFor();
      const list = await execute(page, 'GET', '/api/v3/exams');
      assert.equal(await liveStatus(list), 403, await liveBody(list));
      await page.context().close();
    });
  });
}
