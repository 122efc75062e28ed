import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config/config.ts';

describe('MAX_BODY_BYTES', () => {
  it('defaults to 1 MB', () => {
    assert.equal(loadConfig({}).maxBodyBytes, 1024 * 1024);
  });

  it('takes a whole number of bytes from 1024 to 64 MB', () => {
    assert.equal(loadConfig({ MAX_BODY_BYTES: '2048' }).maxBodyBytes, 2048);
    assert.equal(loadConfig({ MAX_BODY_BYTES: String(64 * 1024 * 1024) }).maxBodyBytes, 64 * 1024 * 1024);
  });

  for (const value of ['abc', '-1', '1.5', '1023', String(64 * 1024 * 1024 + 1)]) {
    it(`refuses ${value}, naming the variable`, () => {
      assert.throws(
        () => loadConfig({ MAX_BODY_BYTES: value }),
        (error: unknown) => {
          assert.ok(error instanceof ConfigError);
          assert.match(error.message, /MAX_BODY_BYTES/);
          return true;
        },
      );
    });
  }
});
