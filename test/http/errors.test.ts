import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ERROR_CODES } from '../../src/domain/errors.ts';
import { V2_STATUS, V3_STATUS } from '../../src/http/errors.ts';

const DOC = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'docs', 'errors.md');

describe('docs/errors.md', () => {
  const rows = fs
    .readFileSync(DOC, 'utf8')
    .split('\n')
    .map((line) => /^\| `([a-z_]+)` \| (\d{3}) \| .* \| (\d{3}) \|$/.exec(line))
    .filter((match): match is RegExpExecArray => match !== null)
    .map((match) => ({ code: match[1], v3: Number(match[2]), v2: Number(match[3]) }));

  it('lists every error code exactly once', () => {
    assert.deepEqual(rows.map((row) => row.code).sort(), [...ERROR_CODES].sort());
  });

  it('gives each code the status the error map answers, in both versions', () => {
    for (const row of rows) {
      const code = ERROR_CODES.find((known) => known === row.code);
      assert.ok(code);
      assert.equal(row.v3, V3_STATUS[code], `V3 status of ${code}`);
      assert.equal(row.v2, V2_STATUS[code], `V2 status of ${code}`);
    }
  });
});
