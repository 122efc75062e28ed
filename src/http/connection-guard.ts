import type { IncomingHttpHeaders, IncomingMessage, Server, ServerResponse } from 'node:http';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import type { TransportConfig } from '../config/config.ts';

/**
 * Writes a bare answer to a connection Node or the guard below gave up on (a request line or headers
 * over the size limit, bad framing, a body too slow) and drops it. Unlike Node's default answer it
 * says `Connection: close`, so a keep-alive client does not send its next request down the dropped
 * connection.
 */
export function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const status =
    error.code === 'HPE_HEADER_OVERFLOW' ? 431 : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
  const reason = STATUS_CODES[status] ?? 'Bad Request';
  const body = JSON.stringify({ error: reason });
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `X-Content-Type-Options: nosniff\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}

/** True when a request announces a body (so it is not complete once its headers are in). */
export function hasBody(headers: IncomingHttpHeaders): boolean {
  const length = headers['content-length'];
  return (length !== undefined && length !== '0') || headers['transfer-encoding'] !== undefined;
}

/** An upload is a multipart body (files, the room's recording chunks); it is held to a rate instead. */
function isUpload(headers: IncomingHttpHeaders): boolean {
  return /^\s*multipart\//i.test(headers['content-type'] ?? '');
}

/**
 * The key a connection is counted under: its address, or for IPv6 its /64 network (one host is
 * usually given a whole /64, so counting single addresses would not bound it).
 */
export function addressKey(address: string): string {
  const bare = address.split('%')[0] ?? address;
  if (!bare.includes(':') || bare.startsWith('::ffff:')) return bare;
  const [head = '', tail] = bare.split('::');
  const front = head === '' ? [] : head.split(':');
  const back = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups = [...front, ...Array<string>(Math.max(0, 8 - front.length - back.length)).fill('0'), ...back];
  return `${groups
    .slice(0, 4)
    .map((group) => group.toLowerCase().replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

/** A request whose body is still arriving, as the sweep sees it. */
interface PendingBody {
  readonly request: IncomingMessage;
  readonly response: ServerResponse;
  readonly socket: Socket;
  readonly upload: boolean;
  readonly startBytes: number;
  /** Time spent waiting for the client: ticks where the server was not holding the body unread. */
  waitedMs: number;
  /** Waiting time since the last byte arrived. */
  silentMs: number;
  lastBytes: number;
  lastTick: number;
}

/** How often the sweep looks at the pending bodies: a quarter of the shortest limit, 50 ms to 1 s. */
function tickOf(limits: TransportConfig): number {
  const shortest = Math.min(limits.bodyIdleTimeoutMs, limits.requestTimeoutMs, limits.uploadGraceMs);
  return Math.max(50, Math.min(1000, Math.floor(shortest / 4)));
}

/**
 * Node's own options for the server: headers must be in within REQUEST_TIMEOUT_MS, checked often
 * enough for that to hold (Node checks every 30 s by default).
 */
export function nodeServerOptions(limits: TransportConfig): {
  headersTimeout: number;
  connectionsCheckingInterval: number;
} {
  return {
    headersTimeout: limits.requestTimeoutMs,
    connectionsCheckingInterval: Math.max(50, Math.min(30_000, Math.floor(limits.requestTimeoutMs / 4))),
  };
}

/** Why a pending body is cut now, or undefined while it is within every limit. */
function overLimit(entry: PendingBody, limits: TransportConfig): string | undefined {
  if (entry.silentMs >= limits.bodyIdleTimeoutMs) return 'no body bytes within BODY_IDLE_TIMEOUT_MS';
  if (!entry.upload) {
    return entry.waitedMs >= limits.requestTimeoutMs
      ? 'body not complete within REQUEST_TIMEOUT_MS'
      : undefined;
  }
  if (entry.waitedMs < limits.uploadGraceMs || limits.uploadMinBytesPerSecond === 0) return undefined;
  const rate = ((entry.lastBytes - entry.startBytes) * 1000) / entry.waitedMs;
  return rate < limits.uploadMinBytesPerSecond ? 'upload slower than UPLOAD_MIN_BYTES_PER_SECOND' : undefined;
}

/**
 * Guards an HTTP server against clients that hold connections open without using them:
 * - at most `maxConnectionsPerAddress` open connections per client address (IPv6: per /64); one
 *   more is closed at once, unanswered;
 * - headers must arrive within `requestTimeoutMs` (Node's own check with nodeServerOptions, answered 408);
 * - a body is cut (408 when nothing was answered yet, then the connection closed) when it sends
 *   nothing for `bodyIdleTimeoutMs`, or, for a request other than an upload, when it is not complete
 *   `requestTimeoutMs` after its headers, or, for an upload, when past `uploadGraceMs` it averages
 *   less than `uploadMinBytesPerSecond`.
 * Only time the server spends waiting for the client counts: while the server holds the body unread
 * (its reader is slow, or a credential check runs first) the socket is paused and the clocks stop.
 * Requests without a body (WebSocket upgrades, event streams, plain GETs) are not timed once their
 * headers are in. Returns a stop for the sweep timer (also stopped when the server closes).
 */
export function guardConnections(
  server: Server,
  limits: TransportConfig,
  log: FastifyBaseLogger,
): () => void {
  const open = new Map<string, number>();
  let refused = 0;
  let refusedLoggedAt = 0;
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress;
    if (address === undefined || limits.maxConnectionsPerAddress === 0) return;
    const key = addressKey(address);
    const count = open.get(key) ?? 0;
    if (count >= limits.maxConnectionsPerAddress) {
      socket.destroy();
      refused += 1;
      // One line at most every ten seconds: a flood of connections must not flood the log too.
      const now = Date.now();
      if (now - refusedLoggedAt >= 10_000) {
        refusedLoggedAt = now;
        log.warn(
          { address: key, refused, limit: limits.maxConnectionsPerAddress },
          'connections over MAX_CONNECTIONS_PER_ADDRESS closed',
        );
        refused = 0;
      }
      return;
    }
    open.set(key, count + 1);
    socket.once('close', () => {
      const left = (open.get(key) ?? 1) - 1;
      if (left <= 0) open.delete(key);
      else open.set(key, left);
    });
  });

  const pending = new Set<PendingBody>();
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    if (request.complete || !hasBody(request.headers)) return;
    const socket = request.socket;
    const now = performance.now();
    pending.add({
      request,
      response,
      socket,
      upload: isUpload(request.headers),
      startBytes: socket.bytesRead,
      waitedMs: 0,
      silentMs: 0,
      lastBytes: socket.bytesRead,
      lastTick: now,
    });
  });

  const sweep = (): void => {
    const now = performance.now();
    for (const entry of pending) {
      if (entry.request.complete || entry.socket.destroyed) {
        pending.delete(entry);
        continue;
      }
      const elapsed = now - entry.lastTick;
      entry.lastTick = now;
      const bytes = entry.socket.bytesRead;
      if (bytes !== entry.lastBytes) {
        entry.lastBytes = bytes;
        entry.silentMs = 0;
      } else if (!entry.socket.isPaused()) {
        entry.silentMs += elapsed;
      }
      if (!entry.socket.isPaused()) entry.waitedMs += elapsed;
      const reason = overLimit(entry, limits);
      if (reason === undefined) continue;
      pending.delete(entry);
      log.info(
        {
          path: (entry.request.url ?? '').split('?')[0],
          address: entry.socket.remoteAddress,
          received: bytes - entry.startBytes,
          ms: Math.round(entry.waitedMs),
        },
        `request body cut: ${reason}`,
      );
      if (entry.response.headersSent) entry.socket.destroy();
      else
        answerClientError(
          Object.assign(new Error(reason), { code: 'ERR_HTTP_REQUEST_TIMEOUT' }),
          entry.socket,
        );
    }
  };
  const timer = setInterval(sweep, tickOf(limits));
  timer.unref();
  const stop = (): void => clearInterval(timer);
  server.once('close', stop);
  return stop;
}
