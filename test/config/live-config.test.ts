import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config/config.ts';
import { liveConnectSources } from '../../src/live/csp.ts';

describe('live proctoring settings', () => {
  it('defaults to the embedded engine on ports 40000–49999 with no TURN server', () => {
    assert.deepEqual(loadConfig({}, '/srv').live, {
      engine: 'embedded',
      udpPortMin: 40000,
      udpPortMax: 49999,
      publicIp: undefined,
      iceServers: [],
    });
  });

  it('reads the UDP range, the public address and TURN servers with their credentials', () => {
    const config = loadConfig(
      {
        LIVE_UDP_PORT_MIN: '50000',
        LIVE_UDP_PORT_MAX: '50100',
        LIVE_PUBLIC_IP: '203.0.113.7',
        TURN_URLS: 'turn:turn.example.org:3478?transport=udp, turns:turn.example.org:5349',
        TURN_USERNAME: 'invigil',
        TURN_CREDENTIAL: 's3cret',
      },
      '/srv',
    );
    const live = config.live;
    assert.equal(live.engine, 'embedded');
    assert.deepEqual(live.iceServers, [
      { urls: 'turn:turn.example.org:3478?transport=udp', username: 'invigil', credential: 's3cret' },
      { urls: 'turns:turn.example.org:5349', username: 'invigil', credential: 's3cret' },
    ]);
    if (live.engine === 'embedded') {
      assert.equal(live.udpPortMin, 50000);
      assert.equal(live.udpPortMax, 50100);
      assert.equal(live.publicIp, '203.0.113.7');
    }
    assert.deepEqual(liveConnectSources(config), ['ws://127.0.0.1:3000']);
  });

  it('refuses a reversed port range, a TURN address of another scheme and an unknown engine', () => {
    assert.throws(
      () => loadConfig({ LIVE_UDP_PORT_MIN: '50000', LIVE_UDP_PORT_MAX: '40000' }, '/srv'),
      new ConfigError('LIVE_UDP_PORT_MAX must not be below LIVE_UDP_PORT_MIN'),
    );
    assert.throws(
      () => loadConfig({ TURN_URLS: 'http://turn.example.org' }, '/srv'),
      new ConfigError('TURN_URLS must list turn:, turns: or stun: addresses, got "http://turn.example.org"'),
    );
    assert.throws(
      () => loadConfig({ MEDIA_ENGINE: 'janus' }, '/srv'),
      new ConfigError('MEDIA_ENGINE must be one of embedded, livekit, got "janus"'),
    );
  });

  it('needs the LiveKit address, key and secret with MEDIA_ENGINE=livekit', () => {
    assert.throws(
      () => loadConfig({ MEDIA_ENGINE: 'livekit', LIVEKIT_URL: 'wss://lk.example.org' }, '/srv'),
      new ConfigError('MEDIA_ENGINE=livekit needs LIVEKIT_URL, LIVEKIT_API_KEY and LIVEKIT_API_SECRET'),
    );
    const config = loadConfig(
      {
        PUBLIC_URL: 'https://exams.example.org',
        MEDIA_ENGINE: 'livekit',
        LIVEKIT_URL: 'wss://lk.example.org',
        LIVEKIT_API_KEY: 'key',
        LIVEKIT_API_SECRET: 'secret',
      },
      '/srv',
    );
    assert.deepEqual(config.live, {
      engine: 'livekit',
      url: 'wss://lk.example.org',
      apiKey: 'key',
      apiSecret: 'secret',
      iceServers: [],
    });
    assert.deepEqual(liveConnectSources(config), [
      'wss://exams.example.org',
      'wss://lk.example.org',
      'https://lk.example.org',
    ]);
  });
});
