import path from 'node:path';
import { type OutboundAllowlist, parseAllowlist } from '../security/outbound-http.ts';

/** Log levels pino understands; `LOG_LEVEL` must be one of them. */
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/**
 * What counts as a replay (contract §3): `signature` (default) one use per exact request, `request`
 * one use per (nonce, timestamp), `strict` one use per nonce, each per user within the window.
 */
export type NoncePolicy = 'signature' | 'request' | 'strict';

export type DatabaseConfig = { kind: 'sqlite'; path: string } | { kind: 'postgres'; url: string };

export type StorageConfig =
  | { kind: 'local'; root: string }
  | { kind: 's3'; bucket: string; endpoint: string | undefined; region: string | undefined };

/** Everything the service reads from its environment, validated and frozen. */
export interface Config {
  readonly port: number;
  readonly host: string;
  readonly database: DatabaseConfig;
  readonly dataDir: string;
  readonly publicUrl: string;
  readonly storage: StorageConfig;
  readonly smtpUrl: string | undefined;
  readonly mailFrom: string;
  readonly noncePolicy: NoncePolicy;
  readonly signatureWindowSeconds: number;
  readonly logLevel: LogLevel;
  /** Server key material from `INVIGIL_SECRET`; undefined means "generate into DATA_DIR/server.key". */
  readonly serverSecret: string | undefined;
  /** Largest accepted upload in bytes (`MAX_UPLOAD_BYTES`, default 50 MB). */
  readonly maxUploadBytes: number;
  /**
   * Largest accepted JSON or form body in bytes (`MAX_BODY_BYTES`, default 1 MB): those bodies are
   * parsed in one piece on the event loop, so they get a limit of their own, far below uploads'.
   */
  readonly maxBodyBytes: number;
  /** Slow and silent requests, and connections per client (docs/security.md, H3). */
  readonly transport: TransportConfig;
  /** How long a worker's claim on a job lasts unless renewed (`JOB_LEASE_MS`, default 60 s). */
  readonly jobLeaseMs: number;
  /** Days finished jobs and sent mail are kept before the worker's sweep removes them (`RETENTION_DAYS`). */
  readonly retentionDays: number;
  /** Days audit events are kept before the worker's sweep removes them (`AUDIT_RETENTION_DAYS`, default 365). */
  readonly auditRetentionDays: number;
  /** Keep the room's recording chunks after their recording is finalised (`KEEP_RECORDING_CHUNKS`, default false). */
  readonly keepRecordingChunks: boolean;
  /**
   * Offer the pseudo-locale `en-XA` to candidates (`PSEUDO_LOCALE`, default false): accented,
   * longer English that shows hard-coded text and truncation in tests (docs/languages.md).
   */
  readonly pseudoLocale: boolean;
  /**
   * Destinations outbound requests (webhooks) may reach although they are not public addresses
   * (`OUTBOUND_ALLOWLIST`: host names, addresses and networks, separated by commas or spaces).
   */
  readonly outboundAllowlist: OutboundAllowlist;
  /** How live-proctored exams carry camera, microphone and screen (docs/live-proctoring.md). */
  readonly live: LiveConfig;
  /**
   * How many processes `serve` answers HTTP from, sharing its port (`INVIGIL_PROCESSES`, default 1;
   * `serve --processes N` wins over it). Above 1 a small supervising process forks that many serving
   * processes (node:cluster), only the first of which runs the background worker.
   */
  readonly processes: number;
}

/**
 * Limits on what a client may hold open: a request body is cut when it sends nothing for
 * `bodyIdleTimeoutMs`, a request other than an upload when its headers and body take longer than
 * `requestTimeoutMs`, and an upload (a multipart body) when, past `uploadGraceMs`, it has averaged
 * less than `uploadMinBytesPerSecond`. Time the server itself leaves the body unread does not count.
 */
export interface TransportConfig {
  /** `BODY_IDLE_TIMEOUT_MS`, default 30 s. */
  readonly bodyIdleTimeoutMs: number;
  /** `REQUEST_TIMEOUT_MS`, default 60 s; also bounds the time to send the headers, for every request. */
  readonly requestTimeoutMs: number;
  /** `UPLOAD_MIN_BYTES_PER_SECOND`, default 4096. */
  readonly uploadMinBytesPerSecond: number;
  /** `UPLOAD_GRACE_MS`, default 20 s. */
  readonly uploadGraceMs: number;
  /** Open connections one client address may hold (`MAX_CONNECTIONS_PER_ADDRESS`, default 1024; 0: no cap). */
  readonly maxConnectionsPerAddress: number;
}

/** A TURN or STUN server handed to browsers for live proctoring. */
export interface IceServer {
  readonly urls: string;
  readonly username?: string;
  readonly credential?: string;
}

/**
 * The live media engine: `embedded` (a forwarding unit inside the service, the default) or `livekit`
 * (an external LiveKit server). The UDP range and public address apply to the embedded engine.
 */
export type LiveConfig =
  | {
      readonly engine: 'embedded';
      /** Lowest and highest UDP port the embedded engine opens (LIVE_UDP_PORT_MIN/MAX). */
      readonly udpPortMin: number;
      readonly udpPortMax: number;
      /** The address browsers reach the engine at when it is not the machine's own (LIVE_PUBLIC_IP). */
      readonly publicIp: string | undefined;
      /** TURN/STUN servers given to browsers (TURN_URLS, TURN_USERNAME, TURN_CREDENTIAL). */
      readonly iceServers: readonly IceServer[];
    }
  | {
      readonly engine: 'livekit';
      /** The LiveKit server's address as browsers reach it (wss://…) and its API key and secret. */
      readonly url: string;
      readonly apiKey: string;
      readonly apiSecret: string;
      readonly iceServers: readonly IceServer[];
    };

/** The most serving processes `INVIGIL_PROCESSES` and `serve --processes` accept. */
export const MAX_PROCESSES = 64;

/** Thrown for an invalid environment value; the message names the variable. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

type Env = Readonly<Record<string, string | undefined>>;

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max)
    throw new ConfigError(`${name} must be between ${min} and ${max}, got ${raw}`);
  return value;
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const found = allowed.find((candidate) => candidate === raw);
  if (found === undefined)
    throw new ConfigError(`${name} must be one of ${allowed.join(', ')}, got "${raw}"`);
  return found;
}

function parseDatabase(raw: string | undefined, cwd: string): DatabaseConfig {
  const value = raw === undefined || raw === '' ? 'sqlite:./data/invigil.sqlite' : raw;
  if (value.startsWith('sqlite:')) {
    const file = value.slice('sqlite:'.length);
    if (file === '')
      throw new ConfigError('DATABASE_URL sqlite: needs a path, e.g. sqlite:./data/invigil.sqlite');
    return { kind: 'sqlite', path: file === ':memory:' ? file : path.resolve(cwd, file) };
  }
  if (value.startsWith('postgres://') || value.startsWith('postgresql://')) {
    try {
      new URL(value);
    } catch {
      throw new ConfigError('DATABASE_URL is not a valid postgres:// address');
    }
    return { kind: 'postgres', url: value };
  }
  throw new ConfigError('DATABASE_URL must start with sqlite: or postgres://');
}

function parseStorage(raw: string | undefined, dataDir: string): StorageConfig {
  if (raw === undefined || raw === '') return { kind: 'local', root: path.join(dataDir, 'files') };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError('STORAGE_URL must be s3://BUCKET?endpoint=URL&region=R');
  }
  if (url.protocol !== 's3:' || url.hostname === '') {
    throw new ConfigError('STORAGE_URL must be s3://BUCKET?endpoint=URL&region=R');
  }
  return {
    kind: 's3',
    bucket: url.hostname,
    endpoint: url.searchParams.get('endpoint') ?? undefined,
    region: url.searchParams.get('region') ?? undefined,
  };
}

function parseOutboundAllowlist(raw: string | undefined): OutboundAllowlist {
  try {
    return parseAllowlist((raw ?? '').split(/[\s,]+/));
  } catch (error) {
    throw new ConfigError(`OUTBOUND_ALLOWLIST: ${error instanceof Error ? error.message : String(error)}`);
  }
}

function nonEmpty(env: Env, name: string): string | undefined {
  const raw = env[name];
  return raw === undefined || raw.trim() === '' ? undefined : raw.trim();
}

function parseIceServers(env: Env): IceServer[] {
  const urls = (nonEmpty(env, 'TURN_URLS') ?? '').split(/[\s,]+/).filter((url) => url !== '');
  const username = nonEmpty(env, 'TURN_USERNAME');
  const credential = nonEmpty(env, 'TURN_CREDENTIAL');
  return urls.map((url) => {
    if (!/^(turns?|stun):[^\s]+$/.test(url)) {
      throw new ConfigError(`TURN_URLS must list turn:, turns: or stun: addresses, got "${url}"`);
    }
    return {
      urls: url,
      ...(username === undefined ? {} : { username }),
      ...(credential === undefined ? {} : { credential }),
    };
  });
}

function parseLive(env: Env): LiveConfig {
  const engine = oneOf(env, 'MEDIA_ENGINE', ['embedded', 'livekit'] as const, 'embedded');
  const iceServers = parseIceServers(env);
  if (engine === 'livekit') {
    const url = nonEmpty(env, 'LIVEKIT_URL');
    const apiKey = nonEmpty(env, 'LIVEKIT_API_KEY');
    const apiSecret = nonEmpty(env, 'LIVEKIT_API_SECRET');
    if (url === undefined || apiKey === undefined || apiSecret === undefined) {
      throw new ConfigError('MEDIA_ENGINE=livekit needs LIVEKIT_URL, LIVEKIT_API_KEY and LIVEKIT_API_SECRET');
    }
    if (!/^(wss?|https?):\/\/[^\s]+$/.test(url)) {
      throw new ConfigError(`LIVEKIT_URL must be a wss:// or https:// address, got "${url}"`);
    }
    return { engine, url, apiKey, apiSecret, iceServers };
  }
  const udpPortMin = integer(env, 'LIVE_UDP_PORT_MIN', 40000, 1024, 65535);
  const udpPortMax = integer(env, 'LIVE_UDP_PORT_MAX', 49999, 1024, 65535);
  if (udpPortMax < udpPortMin) {
    throw new ConfigError('LIVE_UDP_PORT_MAX must not be below LIVE_UDP_PORT_MIN');
  }
  return { engine, udpPortMin, udpPortMax, publicIp: nonEmpty(env, 'LIVE_PUBLIC_IP'), iceServers };
}

function parseHttpUrl(name: string, raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be an http(s):// address, got "${raw}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(`${name} must be an http(s):// address, got "${raw}"`);
  }
  return raw.replace(/\/+$/, '');
}

/**
 * Reads and validates the environment once.
 * Returns a frozen Config; throws ConfigError naming the first invalid variable.
 */
export function loadConfig(env: Env = process.env, cwd: string = process.cwd()): Config {
  const port = integer(env, 'PORT', 3000, 0, 65535);
  const host = env.HOST === undefined || env.HOST === '' ? '127.0.0.1' : env.HOST;
  const dataDir = path.resolve(
    cwd,
    env.DATA_DIR === undefined || env.DATA_DIR === '' ? './data' : env.DATA_DIR,
  );
  const urlHost = host.includes(':') ? `[${host}]` : host;
  const publicUrl =
    env.PUBLIC_URL === undefined || env.PUBLIC_URL === ''
      ? `http://${urlHost}:${port}`
      : parseHttpUrl('PUBLIC_URL', env.PUBLIC_URL);
  const smtpUrl = env.SMTP_URL === undefined || env.SMTP_URL === '' ? undefined : env.SMTP_URL;
  if (smtpUrl !== undefined && !/^smtps?:\/\//.test(smtpUrl)) {
    throw new ConfigError('SMTP_URL must be smtp://[user:pass@]host:port');
  }
  const secret =
    env.INVIGIL_SECRET === undefined || env.INVIGIL_SECRET === '' ? undefined : env.INVIGIL_SECRET;
  if (secret !== undefined && secret.length < 32) {
    throw new ConfigError('INVIGIL_SECRET must be at least 32 characters');
  }
  return Object.freeze({
    port,
    host,
    database: parseDatabase(env.DATABASE_URL, cwd),
    dataDir,
    publicUrl,
    storage: parseStorage(env.STORAGE_URL, dataDir),
    smtpUrl,
    mailFrom:
      env.MAIL_FROM === undefined || env.MAIL_FROM === '' ? 'Invigil <no-reply@localhost>' : env.MAIL_FROM,
    noncePolicy: oneOf<NoncePolicy>(env, 'NONCE_POLICY', ['signature', 'request', 'strict'], 'signature'),
    signatureWindowSeconds: integer(env, 'SIGNATURE_WINDOW_SECONDS', 86400, 1, 31 * 86400),
    logLevel: oneOf<LogLevel>(env, 'LOG_LEVEL', LOG_LEVELS, 'info'),
    serverSecret: secret,
    maxUploadBytes: integer(env, 'MAX_UPLOAD_BYTES', 50 * 1024 * 1024, 1, 10 * 1024 * 1024 * 1024),
    maxBodyBytes: integer(env, 'MAX_BODY_BYTES', 1024 * 1024, 1024, 64 * 1024 * 1024),
    transport: Object.freeze({
      bodyIdleTimeoutMs: integer(env, 'BODY_IDLE_TIMEOUT_MS', 30_000, 100, 3_600_000),
      requestTimeoutMs: integer(env, 'REQUEST_TIMEOUT_MS', 60_000, 100, 3_600_000),
      uploadMinBytesPerSecond: integer(env, 'UPLOAD_MIN_BYTES_PER_SECOND', 4096, 0, 1024 * 1024 * 1024),
      uploadGraceMs: integer(env, 'UPLOAD_GRACE_MS', 20_000, 100, 3_600_000),
      maxConnectionsPerAddress: integer(env, 'MAX_CONNECTIONS_PER_ADDRESS', 1024, 0, 1_000_000),
    }),
    jobLeaseMs: integer(env, 'JOB_LEASE_MS', 60_000, 1000, 60 * 60 * 1000),
    retentionDays: integer(env, 'RETENTION_DAYS', 30, 1, 3650),
    auditRetentionDays: integer(env, 'AUDIT_RETENTION_DAYS', 365, 1, 3650),
    keepRecordingChunks:
      oneOf(env, 'KEEP_RECORDING_CHUNKS', ['true', 'false', '1', '0'], 'false').match(/^(true|1)$/) !== null,
    pseudoLocale:
      oneOf(env, 'PSEUDO_LOCALE', ['true', 'false', '1', '0'], 'false').match(/^(true|1)$/) !== null,
    outboundAllowlist: parseOutboundAllowlist(env.OUTBOUND_ALLOWLIST),
    live: parseLive(env),
    processes: integer(env, 'INVIGIL_PROCESSES', 1, 1, MAX_PROCESSES),
  });
}
