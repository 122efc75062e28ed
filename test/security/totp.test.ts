import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  base32Decode,
  base32Encode,
  hotp,
  otpauthUri,
  totpStep,
  verifyTotp,
} from '../../src/security/totp.ts';

// RFC 6238, Appendix B: the seeds are ASCII digits, repeated to the hash's block-ish length.
const SEEDS = {
  sha1: Buffer.from('12345678901234567890', 'ascii'),
  sha256: Buffer.from('12345678901234567890123456789012', 'ascii'),
  sha512: Buffer.from('1234567890123456789012345678901234567890123456789012345678901234', 'ascii'),
} as const;

const VECTORS: readonly [number, string, string, string][] = [
  // [unix seconds, SHA-1, SHA-256, SHA-512], 8 digits
  [59, '94287082', '46119246', '90693936'],
  [1111111109, '07081804', '68084774', '25091201'],
  [1111111111, '14050471', '67062674', '99943326'],
  [1234567890, '89005924', '91819424', '93441116'],
  [2000000000, '69279037', '90698825', '38618901'],
  [20000000000, '65353130', '77737706', '47863826'],
];

describe('TOTP (RFC 6238)', () => {
  it('computes every test vector of RFC 6238 Appendix B', () => {
    for (const [seconds, sha1, sha256, sha512] of VECTORS) {
      const step = totpStep(seconds * 1000);
      assert.equal(hotp(SEEDS.sha1, step, 8, 'sha1'), sha1, `sha1 at ${seconds}`);
      assert.equal(hotp(SEEDS.sha256, step, 8, 'sha256'), sha256, `sha256 at ${seconds}`);
      assert.equal(hotp(SEEDS.sha512, step, 8, 'sha512'), sha512, `sha512 at ${seconds}`);
    }
  });

  it('encodes and decodes base32 as RFC 4648 section 10 (without padding)', () => {
    const cases: [string, string][] = [
      ['', ''],
      ['f', 'MY'],
      ['fo', 'MZXQ'],
      ['foo', 'MZXW6'],
      ['foob', 'MZXW6YQ'],
      ['fooba', 'MZXW6YTB'],
      ['foobar', 'MZXW6YTBOI'],
    ];
    for (const [plain, encoded] of cases) {
      assert.equal(base32Encode(Buffer.from(plain)), encoded);
      assert.equal(base32Decode(encoded).toString(), plain);
      assert.equal(base32Decode(`${encoded.toLowerCase()}======`).toString(), plain);
    }
    assert.throws(() => base32Decode('MZ1W'), /not base32/);
  });

  it('accepts the 6-digit code within one step either side, and never a step already used', () => {
    const secret = base32Encode(SEEDS.sha1);
    const now = 1234567890 * 1000;
    const step = totpStep(now);
    const code = (offset: number) => hotp(SEEDS.sha1, step + offset);
    assert.equal(verifyTotp(secret, code(0), now, null), step);
    assert.equal(verifyTotp(secret, code(-1), now, null), step - 1);
    assert.equal(verifyTotp(secret, code(1), now, null), step + 1);
    assert.equal(verifyTotp(secret, code(2), now, null), undefined);
    assert.equal(verifyTotp(secret, code(-2), now, null), undefined);
    // A used step, and the steps before it, are refused.
    assert.equal(verifyTotp(secret, code(0), now, step), undefined);
    assert.equal(verifyTotp(secret, code(-1), now, step - 1), undefined);
    assert.equal(verifyTotp(secret, code(1), now, step), step + 1);
    assert.equal(verifyTotp(secret, '12345', now, null), undefined);
    assert.equal(verifyTotp(secret, 'abcdef', now, null), undefined);
  });

  it('builds the otpauth address authenticator apps read', () => {
    assert.equal(
      otpauthUri('ada@example.org', 'JBSWY3DPEHPK3PXP'),
      'otpauth://totp/Invigil:ada%40example.org?secret=JBSWY3DPEHPK3PXP&issuer=Invigil',
    );
  });
});
