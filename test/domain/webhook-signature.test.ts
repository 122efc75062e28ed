import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  parseWebhookDelivery,
  signWebhook,
  verifyWebhookSignature,
} from '../../src/domain/webhooks/webhook.ts';

/** A published vector (docs/webhooks.md describes the scheme): computed with `openssl dgst -hmac`. */
const SECRET = 'whsec_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef';
const BODY = '{"id":"evt_00000000000000000000000000000000","type":"student_session.finished"}';
const T = 1_700_000_000;
const MAC = '58bd0425bfd21e8275e9c7794330bce5eef7b46c8867b0d2a645512dba530e95';

describe('X-Invigil-Signature', () => {
  it('is t=<unix>,v1=<hex HMAC-SHA256 of "t.body"> keyed with the whole secret', () => {
    assert.equal(signWebhook(SECRET, T, BODY), `t=${T},v1=${MAC}`);
  });

  it('verifies within the tolerance and refuses a changed body, secret, or an old timestamp', () => {
    const header = `t=${T},v1=${MAC}`;
    assert.equal(verifyWebhookSignature(SECRET, header, BODY, T + 299), true);
    assert.equal(verifyWebhookSignature(SECRET, header, `${BODY} `, T), false);
    assert.equal(verifyWebhookSignature(`${SECRET}0`, header, BODY, T), false);
    assert.equal(verifyWebhookSignature(SECRET, header, BODY, T + 301), false);
    assert.equal(verifyWebhookSignature(SECRET, `t=${T + 1},v1=${MAC}`, BODY, T), false);
    assert.equal(verifyWebhookSignature(SECRET, `v1=${MAC}`, BODY, T), false);
    assert.equal(verifyWebhookSignature(SECRET, '', BODY, T), false);
  });

  it('reads a delivery payload, refusing a malformed one', () => {
    const payload = { eventId: 'evt_1', type: 'recording.ready', instituteId: 3, body: '{}' };
    assert.deepEqual(parseWebhookDelivery(payload), payload);
    for (const bad of [null, {}, { ...payload, type: 'other' }, { ...payload, instituteId: '3' }]) {
      assert.throws(() => parseWebhookDelivery(bad), TypeError);
    }
  });
});
