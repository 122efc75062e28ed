import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';

const run = promisify(execFile);

describe('logUnhandledRejections', () => {
  it('logs a rejection nobody awaited and keeps the process running', async () => {
    const guards = new URL('../../src/process-guards.ts', import.meta.url).href;
    const script = `
      const { logUnhandledRejections } = await import(${JSON.stringify(guards)});
      logUnhandledRejections({ error: (obj, msg) => console.log(JSON.stringify({ msg, err: String(obj.err) })) });
      void Promise.reject(new Error('a timer failed late'));
      setTimeout(() => console.log('still running'), 50);
    `;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script]);
    const lines = stdout.trim().split('\n');
    assert.deepEqual(JSON.parse(lines[0] ?? ''), {
      msg: 'unhandled promise rejection; the process keeps running',
      err: 'Error: a timer failed late',
    });
    assert.equal(lines[1], 'still running');
  });
});
