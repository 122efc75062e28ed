import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  hashPassword,
  needsRehash,
  passwordProblem,
  verifyAgainstNothing,
  verifyPassword,
} from '../../src/security/passwords.ts';

describe('staff passwords (scrypt)', () => {
  it('writes a versioned hash naming its parameters, with a fresh salt each time', async () => {
    const first = await hashPassword('correct horse battery staple');
    const second = await hashPassword('correct horse battery staple');
    assert.match(first, /^scrypt\$1\$15\$8\$1\$[\w-]{22}\$[\w-]{43}$/);
    assert.notEqual(first, second);
    assert.equal(needsRehash(first), false);
  });

  it('verifies the right password only', async () => {
    const stored = await hashPassword('correct horse battery staple');
    assert.equal(await verifyPassword('correct horse battery staple', stored), true);
    assert.equal(await verifyPassword('correct horse battery stapler', stored), false);
    assert.equal(await verifyPassword('', stored), false);
  });

  it('reads the same password typed in another Unicode normal form alike', async () => {
    const stored = await hashPassword('caf\u00e9 au lait, bitte');
    assert.equal(await verifyPassword('cafe\u0301 au lait, bitte', stored), true);
  });

  it('never matches a hash it cannot read, and asks for those to be rewritten', async () => {
    const stored = await hashPassword('correct horse battery staple');
    const parts = stored.split('$');
    for (const broken of [
      'plain text',
      stored.replace('scrypt$1$', 'scrypt$9$'),
      [...parts.slice(0, 2), '40', ...parts.slice(3)].join('$'),
      parts.slice(0, 6).join('$'),
    ]) {
      assert.equal(await verifyPassword('correct horse battery staple', broken), false, broken);
      assert.equal(needsRehash(broken), true, broken);
    }
    const older = [...parts.slice(0, 2), '14', ...parts.slice(3)].join('$');
    assert.equal(needsRehash(older), true);
  });

  it('spends a verification on a refusal with no hash, and refuses', async () => {
    assert.equal(await verifyAgainstNothing('anything at all'), false);
  });

  it('accepts 12 to 1024 characters, counting characters rather than bytes', () => {
    assert.equal(passwordProblem('x'.repeat(11)), 'is too short (minimum is 12 characters)');
    assert.equal(passwordProblem('x'.repeat(12)), undefined);
    assert.equal(passwordProblem('😀'.repeat(1024)), undefined);
    assert.equal(passwordProblem('x'.repeat(1025)), 'is too long (maximum is 1024 characters)');
  });
});
