/**
 * The room's first-use fixes over HTTP: the favicon every browser asks for, and a measured slow
 * connection that lets a recorded exam start while a live-proctored one insists on the speed.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { faviconIco } from '../../../src/http/room/page.routes.ts';
import { type HttpAnswer, httpRequest } from '../../helpers/http.ts';
import { object } from '../../helpers/json.ts';
import { DIALECTS, startTestServer, type TestServer } from '../../helpers/server.ts';

type TestUser = Awaited<ReturnType<TestServer['user']>>;

for (const dialect of DIALECTS) {
  describe(`candidate room: favicon and slow connections [${dialect}]`, () => {
    let server: TestServer;
    let owner: TestUser;

    before(async () => {
      server = await startTestServer(dialect);
      owner = await server.user(await server.institute(), 'teacher');
    });

    after(async () => {
      await server.close();
    });

    /** A new open exam of `type` recording the screen, and a student of it. Returns the room token. */
    async function room(type: string): Promise<string> {
      const exam = await owner.client.v3('POST', '/exams', {
        name: `Slow line ${type}`,
        type,
        duration_minutes: 30,
        screen_share: true,
      });
      assert.equal(exam.status, 201, exam.text);
      const student = await owner.client.v3('POST', '/exams/:exam_id/student_sessions', {
        exam_id: object(object(exam.json, 'body').exam, 'exam').id as number,
        name: 'Student',
        email: `${type}-${Math.random()}@example.org`,
      });
      assert.equal(student.status, 201, student.text);
      return object(object(student.json, 'body').student, 'student').token as string;
    }

    function roomCall(token: string, method: string, path: string, body?: object): Promise<HttpAnswer> {
      return httpRequest({
        url: `${server.baseUrl}/api/room/${token}${path}`,
        method,
        ...(body === undefined
          ? {}
          : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
      });
    }

    function statusOf(answer: HttpAnswer): string {
      return object(object(answer.json, 'body').session, 'session').status as string;
    }

    it('serves a favicon at /favicon.ico: a 32×32 icon, cached a day', async () => {
      const answer = await httpRequest({ url: `${server.baseUrl}/favicon.ico` });
      assert.equal(answer.status, 200);
      assert.equal(answer.headers['content-type'], 'image/x-icon');
      assert.equal(answer.headers['cache-control'], 'public, max-age=86400');
      assert.ok(answer.bytes.equals(faviconIco()));
      // ICONDIR: reserved 0, type 1 (icon), one image of 32×32 at 32 bits, right after the directory.
      assert.deepEqual(
        [answer.bytes.readUInt16LE(0), answer.bytes.readUInt16LE(2), answer.bytes.readUInt16LE(4)],
        [0, 1, 1],
      );
      assert.deepEqual([answer.bytes[6], answer.bytes[7], answer.bytes.readUInt16LE(12)], [32, 32, 32]);
      assert.equal(answer.bytes.readUInt32LE(14), answer.bytes.length - 22);
      assert.equal(answer.bytes.readUInt32LE(18), 22);
      const page = await httpRequest({ url: `${server.baseUrl}/room/${'0'.repeat(32)}` });
      assert.ok(page.text.includes('<link rel="icon" href="/favicon.ico"'), 'the 404 page links it too');
    });

    it('lets a recorded exam start on a measured slow connection', async () => {
      const token = await room('record_review');
      assert.equal(statusOf(await roomCall(token, 'POST', '/enter')), 'in_setup');
      const checked = await roomCall(token, 'PUT', '/checks', {
        screenshare_check: 'succeeded',
        bandwidth_check: 'failed',
        bandwidth_speed: 0.35,
      });
      assert.equal(checked.status, 200, checked.text);
      const started = await roomCall(token, 'POST', '/start');
      assert.equal(started.status, 200, started.text);
      assert.equal(statusOf(started), 'exam_started');
    });

    it('moves a registered session on to after_check_req with a measured slow line on a recorded exam', async () => {
      const token = await room('classroom');
      const checked = await roomCall(token, 'PUT', '/checks', {
        screenshare_check: 'succeeded',
        bandwidth_check: 'failed',
        bandwidth_speed: 0.5,
      });
      assert.equal(statusOf(checked), 'after_check_req');
    });

    it('still wants the connection measured: a failed check without a speed is missing', async () => {
      const token = await room('record_review');
      await roomCall(token, 'POST', '/enter');
      await roomCall(token, 'PUT', '/checks', { screenshare_check: 'succeeded', bandwidth_check: 'failed' });
      const refused = await roomCall(token, 'POST', '/start');
      assert.equal(refused.status, 409, refused.text);
      assert.deepEqual(refused.json, {
        error: 'The requirement checks have not all succeeded: bandwidth_check',
      });
    });

    it('keeps a live-proctored exam closed to a slow connection', async () => {
      const token = await room('live_proctoring');
      await roomCall(token, 'POST', '/enter');
      await roomCall(token, 'PUT', '/checks', {
        screenshare_check: 'succeeded',
        bandwidth_check: 'failed',
        bandwidth_speed: 0.35,
      });
      const refused = await roomCall(token, 'POST', '/start');
      assert.equal(refused.status, 409, refused.text);
      assert.deepEqual(refused.json, {
        error: 'The requirement checks have not all succeeded: bandwidth_check',
      });
      const measured = await roomCall(token, 'PUT', '/checks', {
        bandwidth_check: 'succeeded',
        bandwidth_speed: 4,
      });
      assert.equal(measured.status, 200, measured.text);
      assert.equal((await roomCall(token, 'POST', '/start')).status, 200);
    });
  });
}
