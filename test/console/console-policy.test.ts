import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadConfig } from '../../src/config/config.ts';
import { consolePolicy, storageMediaOrigins } from '../../src/http/console/console.routes.ts';
import { liveConnectSources } from '../../src/live/csp.ts';

describe("the console's Content-Security-Policy", () => {
  it('loads photos and recordings from the service alone on local storage', () => {
    const policy = consolePolicy(storageMediaOrigins({ kind: 'local', root: '/tmp/x' }));
    assert.match(policy, /img-src 'self' blob: data:;/);
    assert.match(policy, /media-src 'self' blob:;/);
    assert.match(policy, /connect-src 'self';/);
  });

  it("adds an S3-compatible service's origin for images and media only", () => {
    const origins = storageMediaOrigins({
      kind: 's3',
      bucket: 'exams',
      endpoint: 'https://minio.example.org:9000/',
      region: undefined,
    });
    assert.deepEqual(origins, ['https://minio.example.org:9000']);
    const policy = consolePolicy(origins);
    assert.match(policy, /img-src 'self' blob: data: https:\/\/minio\.example\.org:9000;/);
    assert.match(policy, /media-src 'self' blob: https:\/\/minio\.example\.org:9000;/);
    assert.match(policy, /connect-src 'self';/);
    assert.match(policy, /script-src 'self';/);
  });

  it("adds AWS's bucket hosts when S3 has no endpoint of its own", () => {
    assert.deepEqual(
      storageMediaOrigins({ kind: 's3', bucket: 'exams', endpoint: undefined, region: 'eu-west-1' }),
      ['https://*.amazonaws.com'],
    );
  });

  it("lets the proctor wall reach the service's WebSocket and a LiveKit server", () => {
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
    assert.match(
      consolePolicy([], liveConnectSources(config)),
      /connect-src 'self' wss:\/\/exams\.example\.org wss:\/\/lk\.example\.org https:\/\/lk\.example\.org;/,
    );
  });
});
