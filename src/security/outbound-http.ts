import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';

/**
 * The one HTTP client for requests Invigil sends to addresses someone else chose (an institute's
 * `callback_url`): it must never become a way into the network Invigil runs in. So it refuses
 * loopback, private, link-local, CGNAT, multicast, unspecified and reserved destinations unless
 * `OUTBOUND_ALLOWLIST` names them, and it checks the address it actually connects to: a host name
 * is resolved by the socket's own `lookup`, which refuses there, so a name that resolves to a public
 * address when checked and to 127.0.0.1 when connecting (DNS rebinding) cannot slip through.
 * It follows no redirects, bounds the connect and total time and the size of the answer.
 * See docs/webhooks.md, "Outbound requests".
 */

/** Why an address is not a public one; null for a public address. */
export type AddressClass =
  | 'unspecified'
  | 'loopback'
  | 'private'
  | 'unique-local'
  | 'link-local'
  | 'cgnat'
  | 'multicast'
  | 'reserved'
  | null;

/** An address as bytes: 4 for IPv4, 16 for IPv6. */
type Bytes = readonly number[];

interface Cidr {
  readonly bytes: Bytes;
  readonly prefix: number;
}

/** The entries of `OUTBOUND_ALLOWLIST`, parsed: host names (lower case, no trailing dot) and networks. */
export interface OutboundAllowlist {
  readonly hosts: ReadonlySet<string>;
  readonly networks: readonly Cidr[];
}

export const EMPTY_ALLOWLIST: OutboundAllowlist = Object.freeze({ hosts: new Set<string>(), networks: [] });

/** Thrown (or given to the request's callback) when a destination is not allowed. */
export class OutboundRefused extends Error {
  override name = 'OutboundRefused';
  readonly code = 'OUTBOUND_REFUSED';
}

/** Thrown when the connection or the whole exchange took longer than allowed. */
export class OutboundTimeout extends Error {
  override name = 'OutboundTimeout';
  readonly code = 'OUTBOUND_TIMEOUT';
}

/** Thrown when the answer is larger than allowed. */
export class OutboundTooLarge extends Error {
  override name = 'OutboundTooLarge';
  readonly code = 'OUTBOUND_TOO_LARGE';
}

// ---- Addresses (pure) ----

function parseIpv4(text: string): Bytes | undefined {
  if (net.isIPv4(text) === false) return undefined;
  return text.split('.').map(Number);
}

/** Reads an IPv6 address (zone id dropped, an IPv4 tail allowed). Returns its 16 bytes, or undefined. */
function parseIpv6(raw: string): Bytes | undefined {
  const text = raw.replace(/%.*$/, '');
  if (!net.isIPv6(text)) return undefined;
  let head = text;
  const tail: number[] = [];
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted !== null) {
    const v4 = parseIpv4(dotted[1] ?? '');
    if (v4 === undefined) return undefined;
    tail.push(((v4[0] ?? 0) << 8) | (v4[1] ?? 0), ((v4[2] ?? 0) << 8) | (v4[3] ?? 0));
    head = text.slice(0, dotted.index);
    if (head.endsWith(':') && !head.endsWith('::')) head = head.slice(0, -1);
  }
  const groups = (part: string) => (part === '' ? [] : part.split(':').map((group) => parseInt(group, 16)));
  const [left = '', right] = head.split('::');
  const words =
    right === undefined
      ? [...groups(left), ...tail]
      : (() => {
          const before = groups(left);
          const after = [...groups(right), ...tail];
          return [...before, ...new Array<number>(8 - before.length - after.length).fill(0), ...after];
        })();
  if (words.length !== 8) return undefined;
  return words.flatMap((word) => [word >> 8, word & 0xff]);
}

/** Reads an IPv4 or IPv6 address (brackets allowed). Returns its bytes, or undefined when it is none. */
export function parseAddress(text: string): Bytes | undefined {
  const bare = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  return parseIpv4(bare) ?? parseIpv6(bare);
}

function startsWith(bytes: Bytes, prefix: Bytes, bits: number): boolean {
  for (let bit = 0; bit < bits; bit += 1) {
    const index = bit >> 3;
    const mask = 0x80 >> (bit & 7);
    if (((bytes[index] ?? 0) & mask) !== ((prefix[index] ?? 0) & mask)) return false;
  }
  return true;
}

const V4_RANGES: ReadonlyArray<readonly [Bytes, number, Exclude<AddressClass, null>]> = [
  [[0, 0, 0, 0], 8, 'unspecified'],
  [[10, 0, 0, 0], 8, 'private'],
  [[100, 64, 0, 0], 10, 'cgnat'],
  [[127, 0, 0, 0], 8, 'loopback'],
  [[169, 254, 0, 0], 16, 'link-local'],
  [[172, 16, 0, 0], 12, 'private'],
  [[192, 0, 0, 0], 24, 'reserved'],
  [[192, 168, 0, 0], 16, 'private'],
  [[198, 18, 0, 0], 15, 'reserved'],
  [[224, 0, 0, 0], 4, 'multicast'],
  [[240, 0, 0, 0], 4, 'reserved'],
];

function classifyIpv4(bytes: Bytes): AddressClass {
  for (const [prefix, bits, kind] of V4_RANGES) if (startsWith(bytes, prefix, bits)) return kind;
  return null;
}

/** The IPv4 address an IPv6 address carries (mapped ::ffff:0:0/96, NAT64 64:ff9b::/96, 6to4 2002::/16). */
function embeddedIpv4(bytes: Bytes): Bytes | undefined {
  const mapped = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff];
  if (startsWith(bytes, mapped, 96)) return bytes.slice(12);
  if (startsWith(bytes, [0x00, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0], 96)) return bytes.slice(12);
  if (startsWith(bytes, [0x20, 0x02], 16)) return bytes.slice(2, 6);
  return undefined;
}

function classifyIpv6(bytes: Bytes): AddressClass {
  const inner = embeddedIpv4(bytes);
  if (inner !== undefined) return classifyIpv4(inner);
  if (bytes.every((byte) => byte === 0)) return 'unspecified';
  if (bytes.slice(0, 15).every((byte) => byte === 0) && bytes[15] === 1) return 'loopback';
  // The rest of ::/96: IPv4-compatible addresses, deprecated and never a real destination.
  if (startsWith(bytes, new Array<number>(12).fill(0), 96)) return 'reserved';
  if (startsWith(bytes, [0xfc], 7)) return 'unique-local';
  if (startsWith(bytes, [0xfe, 0x80], 10)) return 'link-local';
  // Site-local (deprecated, still private where it is used).
  if (startsWith(bytes, [0xfe, 0xc0], 10)) return 'private';
  if (startsWith(bytes, [0xff], 8)) return 'multicast';
  // Discard-only 100::/64, local-use NAT64 64:ff9b:1::/48, Teredo 2001::/32 (the client is hidden).
  if (startsWith(bytes, [0x01, 0x00, 0, 0, 0, 0, 0, 0], 64)) return 'reserved';
  if (startsWith(bytes, [0x00, 0x64, 0xff, 0x9b, 0x00, 0x01], 48)) return 'reserved';
  if (startsWith(bytes, [0x20, 0x01, 0x00, 0x00], 32)) return 'reserved';
  return null;
}

/**
 * Classifies an IP address (IPv4, IPv6, IPv4-mapped IPv6 judged as its IPv4 address). Returns why
 * it is not public, or null for a public address; throws a TypeError for text that is no address.
 */
export function classifyAddress(address: string): AddressClass {
  const bytes = parseAddress(address);
  if (bytes === undefined) throw new TypeError(`not an IP address: ${address}`);
  return bytes.length === 4 ? classifyIpv4(bytes) : classifyIpv6(bytes);
}

/** The address in the form networks are compared in: an IPv4-mapped IPv6 address as its IPv4 address. */
function comparable(bytes: Bytes): Bytes {
  if (bytes.length === 16 && startsWith(bytes, [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff], 96)) {
    return bytes.slice(12);
  }
  return bytes;
}

function normaliseHost(host: string): string {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  return bare.toLowerCase().replace(/\.$/, '');
}

const HOST_NAME =
  /^(?=.{1,253}$)([a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*$/;

/**
 * Parses allowlist entries: host names (`hooks.internal`), addresses (`10.1.2.3`, `::1`) and
 * networks (`10.0.0.0/8`, `fd00::/8`). Returns the allowlist; throws a TypeError naming the first
 * entry that is none of these.
 */
export function parseAllowlist(entries: readonly string[]): OutboundAllowlist {
  const hosts = new Set<string>();
  const networks: Cidr[] = [];
  for (const raw of entries) {
    const entry = raw.trim();
    if (entry === '') continue;
    const [address = '', prefixText, extra] = entry.split('/');
    const bytes = parseAddress(address);
    if (bytes !== undefined && extra === undefined) {
      const width = comparable(bytes).length * 8;
      const prefix = prefixText === undefined ? width : Number(prefixText);
      if (prefixText !== undefined && !/^\d{1,3}$/.test(prefixText)) {
        throw new TypeError(`"${entry}" is not a host name, address or network`);
      }
      // A mapped network (::ffff:10.0.0.0/104) is kept as the IPv4 network it names.
      const shift = bytes.length === 16 && width === 32 ? 96 : 0;
      if (prefix - shift < 0 || prefix - shift > width) {
        throw new TypeError(`"${entry}" has a prefix length out of range`);
      }
      networks.push({ bytes: comparable(bytes), prefix: prefix - shift });
      continue;
    }
    const host = normaliseHost(entry);
    if (prefixText !== undefined || !HOST_NAME.test(host)) {
      throw new TypeError(`"${entry}" is not a host name, address or network`);
    }
    hosts.add(host);
  }
  return Object.freeze({ hosts, networks: Object.freeze(networks) });
}

/**
 * Whether a connection to `address`, reached through the name `host`, is allowed: a public
 * address always, any other only when the allowlist names the host or a network holding the
 * address. Returns null when allowed, else the reason; throws a TypeError for a non-address.
 */
export function refusalOf(address: string, host: string, allowlist: OutboundAllowlist): string | null {
  const kind = classifyAddress(address);
  if (kind === null) return null;
  if (allowlist.hosts.has(normaliseHost(host))) return null;
  const bytes = comparable(parseAddress(address) ?? []);
  const inNetwork = allowlist.networks.some(
    (network) => network.bytes.length === bytes.length && startsWith(bytes, network.bytes, network.prefix),
  );
  if (inNetwork) return null;
  const shown = normaliseHost(address);
  const via = normaliseHost(host) === shown ? '' : ` (${normaliseHost(host)})`;
  return `refused to connect to ${shown}${via}: a ${kind} address not named in OUTBOUND_ALLOWLIST`;
}

// ---- The client ----

/** Resolves a host name to every address it has (dns.lookup's `all: true` form). */
export type Resolver = (hostname: string) => Promise<dns.LookupAddress[]>;

const systemResolver: Resolver = (hostname) => dns.promises.lookup(hostname, { all: true, verbatim: true });

export interface OutboundLimits {
  /** Time to set up the TCP connection (after DNS), in ms. */
  readonly connectTimeoutMs: number;
  /** Time for the whole exchange: DNS, connection, TLS, request and the answer read in full, in ms. */
  readonly totalTimeoutMs: number;
  /** Largest answer body read; a larger one fails the request. */
  readonly maxResponseBytes: number;
}

export const DEFAULT_OUTBOUND_LIMITS: OutboundLimits = Object.freeze({
  connectTimeoutMs: 5_000,
  totalTimeoutMs: 15_000,
  maxResponseBytes: 64 * 1024,
});

export interface OutboundRequest {
  readonly url: string;
  readonly method: 'GET' | 'POST';
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string | Buffer;
  /** Aborting it abandons the request (its reason is the rejection). */
  readonly signal?: AbortSignal;
  readonly limits?: Partial<OutboundLimits>;
}

export interface OutboundResponse {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: Buffer;
}

export interface OutboundHttp {
  /**
   * Sends one request; redirects are not followed (a 3xx is an answer like any other). Returns the
   * status, headers and body. Rejects with OutboundRefused (a forbidden destination, a scheme other
   * than http or https), OutboundTimeout, OutboundTooLarge, the signal's reason, or the socket's error.
   */
  request(request: OutboundRequest): Promise<OutboundResponse>;
}

/**
 * A socket `lookup` that resolves through `resolve` and refuses when any address the name has is
 * not allowed (so the connection can only go to addresses that were checked).
 */
function guardedLookup(resolve: Resolver, allowlist: OutboundAllowlist): net.LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname).then(
      (found) => {
        const wanted = options.family === 4 || options.family === 6 ? options.family : undefined;
        const addresses = wanted === undefined ? found : found.filter((each) => each.family === wanted);
        const first = addresses[0];
        if (first === undefined) {
          callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '', 0);
          return;
        }
        for (const each of addresses) {
          const refusal = refusalOf(each.address, hostname, allowlist);
          if (refusal !== null) {
            callback(new OutboundRefused(refusal), '', 0);
            return;
          }
        }
        if (options.all === true) callback(null, addresses);
        else callback(null, first.address, first.family);
      },
      (error: unknown) => callback(error as NodeJS.ErrnoException, '', 0),
    );
  };
}

/**
 * Builds the guarded client. `allowlist` names the destinations allowed besides public ones;
 * `resolve` replaces DNS (tests); `limits` replaces the defaults. Returns the client.
 */
export function createOutboundHttp(
  options: { allowlist?: OutboundAllowlist; resolve?: Resolver; limits?: Partial<OutboundLimits> } = {},
): OutboundHttp {
  const allowlist = options.allowlist ?? EMPTY_ALLOWLIST;
  const lookup = guardedLookup(options.resolve ?? systemResolver, allowlist);
  const defaults = { ...DEFAULT_OUTBOUND_LIMITS, ...options.limits };

  return {
    request(request) {
      const limits = { ...defaults, ...request.limits };
      return new Promise<OutboundResponse>((resolve, reject) => {
        let url: URL;
        try {
          url = new URL(request.url);
        } catch {
          reject(new OutboundRefused(`not an address: ${request.url}`));
          return;
        }
        if (url.protocol !== 'http:' && url.protocol !== 'https:') {
          reject(new OutboundRefused(`refused: only http and https are allowed, not ${url.protocol}`));
          return;
        }
        // An address in the URL is never looked up, so it is checked here, where it is final.
        if (parseAddress(url.hostname) !== undefined) {
          const refusal = refusalOf(url.hostname, url.hostname, allowlist);
          if (refusal !== null) {
            reject(new OutboundRefused(refusal));
            return;
          }
        }
        const body = request.body === undefined ? undefined : Buffer.from(request.body);
        const transport = url.protocol === 'https:' ? https : http;
        const outgoing = transport.request(url, {
          method: request.method,
          headers: {
            ...request.headers,
            ...(body === undefined ? {} : { 'content-length': String(body.length) }),
          },
          // A fresh connection each time: a pooled socket would skip the lookup, and so the check.
          agent: false,
          lookup,
          ...(request.signal === undefined ? {} : { signal: request.signal }),
        });
        let settled = false;
        const settle = (outcome: () => void) => {
          if (settled) return;
          settled = true;
          clearTimeout(total);
          clearTimeout(connect);
          outcome();
        };
        /** Fails the request with our own reason; whatever the destroyed socket reports later is ignored. */
        const fail = (error: Error) => {
          settle(() => reject(error));
          outgoing.destroy();
        };
        const total = setTimeout(
          () => fail(new OutboundTimeout(`no complete answer within ${limits.totalTimeoutMs} ms`)),
          limits.totalTimeoutMs,
        );
        const connect = setTimeout(
          () => fail(new OutboundTimeout(`not connected within ${limits.connectTimeoutMs} ms`)),
          limits.connectTimeoutMs,
        );
        outgoing.once('socket', (socket) => {
          // The lookup is part of connecting: the connect timer covers DNS and the TCP handshake.
          socket.once('connect', () => clearTimeout(connect));
        });
        outgoing.on('error', (error) => settle(() => reject(error)));
        outgoing.once('response', (incoming) => {
          incoming.on('error', (error) => settle(() => reject(error)));
          const declared = Number(incoming.headers['content-length']);
          if (Number.isFinite(declared) && declared > limits.maxResponseBytes) {
            fail(new OutboundTooLarge(`an answer of ${declared} bytes is over ${limits.maxResponseBytes}`));
            return;
          }
          const chunks: Buffer[] = [];
          let size = 0;
          incoming.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > limits.maxResponseBytes) {
              fail(new OutboundTooLarge(`an answer over ${limits.maxResponseBytes} bytes`));
              return;
            }
            chunks.push(chunk);
          });
          incoming.once('end', () =>
            settle(() =>
              resolve({
                status: incoming.statusCode ?? 0,
                headers: incoming.headers,
                body: Buffer.concat(chunks),
              }),
            ),
          );
        });
        outgoing.end(body);
      });
    },
  };
}
