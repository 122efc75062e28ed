import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config/config.ts';
import {
  type AddressClass,
  classifyAddress,
  createOutboundHttp,
  OutboundRefused,
  OutboundTimeout,
  OutboundTooLarge,
  parseAllowlist,
  refusalOf,
} from '../../src/security/outbound-http.ts';

const ADDRESSES: ReadonlyArray<readonly [string, AddressClass]> = [
  // IPv4
  ['8.8.8.8', null],
  ['93.184.216.34', null],
  ['0.0.0.0', 'unspecified'],
  ['0.1.2.3', 'unspecified'],
  ['127.0.0.1', 'loopback'],
  ['127.255.255.254', 'loopback'],
  ['10.0.0.1', 'private'],
  ['172.16.0.1', 'private'],
  ['172.31.255.255', 'private'],
  ['172.32.0.1', null],
  ['192.168.1.1', 'private'],
  ['169.254.169.254', 'link-local'],
  ['100.64.0.1', 'cgnat'],
  ['100.127.255.255', 'cgnat'],
  ['100.128.0.1', null],
  ['224.0.0.1', 'multicast'],
  ['239.255.255.250', 'multicast'],
  ['255.255.255.255', 'reserved'],
  // IPv6
  ['2606:4700:4700::1111', null],
  ['2001:db8::1', null],
  ['::', 'unspecified'],
  ['::1', 'loopback'],
  ['0:0:0:0:0:0:0:1', 'loopback'],
  ['[::1]', 'loopback'],
  ['fc00::1', 'unique-local'],
  ['fd12:3456:789a::1', 'unique-local'],
  ['fe80::1', 'link-local'],
  ['fe80::1%eth0', 'link-local'],
  ['febf::1', 'link-local'],
  ['fec0::1', 'private'],
  ['ff02::1', 'multicast'],
  ['ff05::1:3', 'multicast'],
  ['::7f00:1', 'reserved'],
  ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'reserved'],
  // IPv4-mapped and other IPv6 forms that carry an IPv4 address are judged by that address.
  ['::ffff:127.0.0.1', 'loopback'],
  ['::ffff:7f00:1', 'loopback'],
  ['::FFFF:10.1.2.3', 'private'],
  ['::ffff:169.254.169.254', 'link-local'],
  ['::ffff:100.64.0.1', 'cgnat'],
  ['::ffff:8.8.8.8', null],
  ['0:0:0:0:0:ffff:c0a8:0101', 'private'],
  ['64:ff9b::127.0.0.1', 'loopback'],
  ['64:ff9b::8.8.8.8', null],
  ['2002:7f00:1::1', 'loopback'],
  ['2002:0808:0808::1', null],
];

describe('classifyAddress', () => {
  for (const [address, expected] of ADDRESSES) {
    it(`classes ${address} as ${expected ?? 'public'}`, () => {
      assert.equal(classifyAddress(address), expected);
    });
  }

  it('throws for text that is no address', () => {
    for (const text of ['localhost', '127.1', '1.2.3.256', '::ffff:1.2.3', '', 'fe80::1::2']) {
      assert.throws(() => classifyAddress(text), TypeError, text);
    }
  });
});

describe('parseAllowlist and refusalOf', () => {
  const allowlist = parseAllowlist([
    'hooks.internal',
    'Receiver.Example.',
    '10.20.0.0/16',
    'fd00::/8',
    '127.0.0.1',
  ]);

  it('allows any public address, whatever the allowlist', () => {
    assert.equal(refusalOf('8.8.8.8', 'example.org', parseAllowlist([])), null);
  });

  it('refuses a non-public address naming its class and OUTBOUND_ALLOWLIST', () => {
    assert.equal(
      refusalOf('10.1.2.3', 'intranet.example', parseAllowlist([])),
      'refused to connect to 10.1.2.3 (intranet.example): a private address not named in OUTBOUND_ALLOWLIST',
    );
    assert.match(refusalOf('::1', '::1', parseAllowlist([])) ?? '', /^refused to connect to ::1: a loopback/);
  });

  it('allows every address of an allowlisted host name (any case, trailing dot ignored)', () => {
    assert.equal(refusalOf('10.9.9.9', 'hooks.internal', allowlist), null);
    assert.equal(refusalOf('192.168.0.5', 'receiver.example', allowlist), null);
    assert.equal(refusalOf('192.168.0.5', 'HOOKS.INTERNAL.', allowlist), null);
    assert.notEqual(refusalOf('192.168.0.5', 'other.internal', allowlist), null);
  });

  it('allows addresses inside an allowlisted network, IPv4-mapped ones as their IPv4 address', () => {
    assert.equal(refusalOf('10.20.3.4', 'any.example', allowlist), null);
    assert.equal(refusalOf('::ffff:10.20.3.4', 'any.example', allowlist), null);
    assert.equal(refusalOf('fd00::5', 'any.example', allowlist), null);
    assert.equal(refusalOf('127.0.0.1', 'any.example', allowlist), null);
    assert.notEqual(refusalOf('127.0.0.2', 'any.example', allowlist), null);
    assert.notEqual(refusalOf('10.21.0.1', 'any.example', allowlist), null);
    assert.notEqual(refusalOf('fe80::1', 'any.example', allowlist), null);
  });

  it('refuses entries that are no host name, address or network', () => {
    for (const entry of [
      '10.0.0.0/33',
      '10.0.0.0/x',
      'fd00::/129',
      'bad host',
      'http://x.example',
      'a/b/c',
    ]) {
      assert.throws(() => parseAllowlist([entry]), TypeError, entry);
    }
  });

  it('is read from OUTBOUND_ALLOWLIST (commas or spaces), a bad entry failing the start', () => {
    const config = loadConfig({ OUTBOUND_ALLOWLIST: '127.0.0.1/32, hooks.internal  fd00::/8' });
    assert.equal(refusalOf('127.0.0.1', '127.0.0.1', config.outboundAllowlist), null);
    assert.equal(refusalOf('10.0.0.1', 'hooks.internal', config.outboundAllowlist), null);
    assert.notEqual(refusalOf('127.0.0.1', '127.0.0.1', loadConfig({}).outboundAllowlist), null);
    assert.throws(
      () => loadConfig({ OUTBOUND_ALLOWLIST: '10.0.0.0/40' }),
      (error: unknown) => error instanceof ConfigError && /^OUTBOUND_ALLOWLIST: /.test(error.message),
    );
  });
});

describe('the guarded outbound client against a loopback receiver', () => {
  let server: http.Server;
  let port = 0;
  const received: string[] = [];

  before(async () => {
    server = http.createServer((request, response) => {
      received.push(`${request.method} ${request.url}`);
      if (request.url === '/redirect') {
        response.writeHead(302, { location: '/target' }).end();
      } else if (request.url === '/big') {
        response.writeHead(200).end(Buffer.alloc(100 * 1024, 'x'));
      } else if (request.url === '/big-chunked') {
        response.writeHead(200);
        response.write(Buffer.alloc(40 * 1024, 'x'));
        response.end(Buffer.alloc(40 * 1024, 'x'));
      } else if (request.url === '/slow') {
        // Never answers.
      } else {
        let body = '';
        request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
        request.on('end', () => response.writeHead(200, { 'content-type': 'text/plain' }).end(`got ${body}`));
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  /** A resolver that knows only `names`, so no test depends on the machine's DNS. */
  const resolver = (names: Record<string, string>) => (hostname: string) => {
    const address = names[hostname];
    if (address === undefined)
      return Promise.reject(Object.assign(new Error('not found'), { code: 'ENOTFOUND' }));
    return Promise.resolve([{ address, family: address.includes(':') ? 6 : 4 }]);
  };

  it('refuses 127.0.0.1 without the allowlist, and the receiver sees nothing', async () => {
    const before = received.length;
    const client = createOutboundHttp();
    // The URL parser turns 2130706433, 0x7f.0.0.1 and 127.1 into 127.0.0.1 before the check sees them.
    const hosts = [
      '127.0.0.1',
      '[::ffff:127.0.0.1]',
      '[::1]',
      '0.0.0.0',
      'localhost',
      '2130706433',
      '0x7f.0.0.1',
      '127.1',
    ];
    for (const host of hosts) {
      await assert.rejects(
        client.request({ url: `http://${host}:${port}/hook`, method: 'POST', body: '{}' }),
        (error: unknown) =>
          error instanceof OutboundRefused && /not named in OUTBOUND_ALLOWLIST/.test(error.message),
        host,
      );
    }
    assert.equal(received.length, before);
  });

  it('refuses a name that resolves to loopback when connecting (no DNS rebinding past the check)', async () => {
    const before = received.length;
    const client = createOutboundHttp({ resolve: resolver({ 'hooks.example': '127.0.0.1' }) });
    await assert.rejects(
      client.request({ url: `http://hooks.example:${port}/hook`, method: 'POST', body: '{}' }),
      (error: unknown) =>
        error instanceof OutboundRefused &&
        error.message ===
          'refused to connect to 127.0.0.1 (hooks.example): a loopback address not named in OUTBOUND_ALLOWLIST',
    );
    assert.equal(received.length, before);
  });

  it('refuses a name when any of its addresses is not allowed', async () => {
    const client = createOutboundHttp({
      resolve: () =>
        Promise.resolve([
          { address: '8.8.8.8', family: 4 },
          { address: '127.0.0.1', family: 4 },
        ]),
    });
    await assert.rejects(
      client.request({ url: `http://mixed.example:${port}/`, method: 'GET' }),
      OutboundRefused,
    );
  });

  it('reaches the receiver when the allowlist names its network, or the name used', async () => {
    const byNetwork = createOutboundHttp({ allowlist: parseAllowlist(['127.0.0.0/8']) });
    const answer = await byNetwork.request({
      url: `http://127.0.0.1:${port}/hook`,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"a":1}',
    });
    assert.equal(answer.status, 200);
    assert.equal(answer.body.toString(), 'got {"a":1}');
    const byName = createOutboundHttp({
      allowlist: parseAllowlist(['hooks.example']),
      resolve: resolver({ 'hooks.example': '127.0.0.1' }),
    });
    assert.equal(
      (await byName.request({ url: `http://hooks.example:${port}/x`, method: 'GET' })).status,
      200,
    );
  });

  it('follows no redirect: a 302 is the answer', async () => {
    const before = received.length;
    const client = createOutboundHttp({ allowlist: parseAllowlist(['127.0.0.1']) });
    const answer = await client.request({ url: `http://127.0.0.1:${port}/redirect`, method: 'GET' });
    assert.equal(answer.status, 302);
    assert.deepEqual(received.slice(before), ['GET /redirect']);
  });

  it('refuses an answer over the size limit, declared or streamed', async () => {
    const client = createOutboundHttp({
      allowlist: parseAllowlist(['127.0.0.1']),
      limits: { maxResponseBytes: 64 * 1024 },
    });
    for (const path of ['/big', '/big-chunked']) {
      await assert.rejects(
        client.request({ url: `http://127.0.0.1:${port}${path}`, method: 'GET' }),
        OutboundTooLarge,
      );
    }
  });

  it('gives up on a receiver that never answers after the total timeout', async () => {
    const client = createOutboundHttp({
      allowlist: parseAllowlist(['127.0.0.1']),
      limits: { totalTimeoutMs: 300 },
    });
    const started = Date.now();
    await assert.rejects(
      client.request({ url: `http://127.0.0.1:${port}/slow`, method: 'GET' }),
      (error: unknown) =>
        error instanceof OutboundTimeout && error.message === 'no complete answer within 300 ms',
    );
    assert.ok(Date.now() - started < 5000);
  });

  it('refuses schemes other than http and https', async () => {
    const client = createOutboundHttp({ allowlist: parseAllowlist(['127.0.0.1']) });
    for (const url of ['file:///etc/passwd', 'ftp://127.0.0.1/', 'gopher://127.0.0.1:70/']) {
      await assert.rejects(client.request({ url, method: 'GET' }), OutboundRefused, url);
    }
  });
});
