/**
 * The pure rules of the sign-in throttle (src/domain/staff-auth/sign-in-throttle.ts) that HTTP tests
 * cannot reach from 127.0.0.1: how an OpenID Connect start is counted in its window, and which
 * addresses share a start count. Through HTTP: test/http/staff/oidc.test.ts ("throttling").
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  ADDRESS_STARTS_PER_WINDOW,
  START_WINDOW_MS,
  startAllowed,
  startKey,
  type ThrottleState,
} from '../../src/domain/staff-auth/sign-in-throttle.ts';

describe('startAllowed', () => {
  const T0 = 1_800_000_000_000;

  it('allows ADDRESS_STARTS_PER_WINDOW starts in a window, then refuses until it ends, writing nothing', () => {
    let state: ThrottleState | undefined;
    for (let start = 1; start <= ADDRESS_STARTS_PER_WINDOW; start += 1) {
      const counted = startAllowed(state, T0 + start);
      assert.equal(counted.waitMs, 0, `start ${start}`);
      state = counted.state;
    }
    assert.deepEqual(state, {
      failures: ADDRESS_STARTS_PER_WINDOW,
      lastFailureAt: T0 + 1,
      blockedUntil: T0 + 1 + START_WINDOW_MS,
    });
    const refused = startAllowed(state, T0 + 1000);
    assert.equal(refused.waitMs, START_WINDOW_MS - 999);
    assert.equal(refused.state, state);
    const next = startAllowed(state, T0 + 1 + START_WINDOW_MS);
    assert.equal(next.waitMs, 0);
    assert.deepEqual(next.state, {
      failures: 1,
      lastFailureAt: T0 + 1 + START_WINDOW_MS,
      blockedUntil: T0 + 1 + START_WINDOW_MS,
    });
  });

  it('leaves a row under its limit unblocked, so the retention sweep may remove it once old', () => {
    const counted = startAllowed(undefined, T0, 3);
    assert.deepEqual(counted.state, { failures: 1, lastFailureAt: T0, blockedUntil: T0 });
  });
});

describe('startKey', () => {
  it('keys IPv4 by the address, and IPv4 mapped into IPv6 alike', () => {
    assert.equal(startKey('203.0.113.9'), 'oidc_start:203.0.113.9');
    assert.equal(startKey('::ffff:203.0.113.9'), 'oidc_start:203.0.113.9');
    assert.equal(startKey('::FFFF:203.0.113.9'), 'oidc_start:203.0.113.9');
  });

  it('keys IPv6 by its /64, however the address is written', () => {
    const key = 'oidc_start:2001:db8:0:1::/64';
    for (const ip of [
      '2001:db8:0:1::1',
      '2001:0db8:0000:0001:ffff:ffff:ffff:ffff',
      '2001:db8::1:0:0:0:5',
      '2001:DB8:0:1:a:b:c:d',
      '2001:db8:0:1::1.2.3.4',
      '2001:db8:0:1::1%eth0',
    ]) {
      assert.equal(startKey(ip), key, ip);
    }
    assert.equal(startKey('::1'), 'oidc_start:0:0:0:0::/64');
    assert.equal(startKey('2001:db8:0:2::1'), 'oidc_start:2001:db8:0:2::/64');
  });

  it('keeps anything else as it is', () => {
    assert.equal(startKey('not an address'), 'oidc_start:not an address');
  });
});
