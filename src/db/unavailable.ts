/**
 * Recognising "the database is not there right now" (as opposed to "this query is wrong"), in one
 * place for the HTTP error handler, the room API and the job worker. Such a failure says nothing
 * about the request: the same request succeeds once the database is back, so it is answered 503
 * with Retry-After instead of 500, and the worker waits instead of failing jobs.
 */

/**
 * PostgreSQL SQLSTATEs of a server that is going away or not yet accepting work: the whole class 08
 * (connection exception) is matched by prefix; these are the others. 57P01 admin_shutdown (pg_ctl
 * stop -m fast), 57P02 crash_shutdown (another backend crashed), 57P03 cannot_connect_now (starting
 * up or shutting down), 53300 too_many_connections (every slot taken; free again soon).
 */
const PG_UNAVAILABLE_CODES = new Set(['57P01', '57P02', '57P03', '53300']);

/** Socket errors of a server that is down, restarting or unreachable. */
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);

/**
 * What node-postgres and pg-pool say, without a code, when a connection ends under a query
 * ("Connection terminated unexpectedly"), a connect attempt runs past connectionTimeoutMillis
 * ("Connection terminated due to connection timeout", "timeout exceeded when trying to connect"),
 * or a client that already lost its connection is asked again ("... is not queryable").
 */
const PG_MESSAGES = [
  /^Connection terminated/,
  /^timeout exceeded when trying to connect$/,
  /^Client has encountered a connection error and is not queryable$/,
  /^Client was closed and is not queryable$/,
];

/**
 * SQLite's busy code (5): the write lock stayed taken past the busy timeout. The file is there,
 * but another process holds it for now; trying again later is the right answer.
 */
const SQLITE_BUSY = 5;

/** How deep `cause` chains and AggregateError lists are followed (guards against a cycle). */
const MAX_DEPTH = 4;

function matches(error: object): boolean {
  const { code, message, errcode } = error as { code?: unknown; message?: unknown; errcode?: unknown };
  if (typeof code === 'string') {
    if (code.startsWith('08') && code.length === 5) return true;
    if (PG_UNAVAILABLE_CODES.has(code) || SOCKET_CODES.has(code)) return true;
  }
  // node:sqlite reports SQLITE_BUSY as code ERR_SQLITE_ERROR with the primary result code in errcode
  // (masked: extended codes such as SQLITE_BUSY_SNAPSHOT keep 5 in their low byte).
  if (typeof errcode === 'number' && (errcode & 0xff) === SQLITE_BUSY) return true;
  return typeof message === 'string' && PG_MESSAGES.some((pattern) => pattern.test(message));
}

function search(error: unknown, depth: number): boolean {
  if (typeof error !== 'object' || error === null || depth > MAX_DEPTH) return false;
  if (matches(error)) return true;
  // Node reports a refused connection to a name with several addresses as an AggregateError;
  // pg-pool wraps a connect timeout's socket error as `cause`.
  const { cause, errors } = error as { cause?: unknown; errors?: unknown };
  if (Array.isArray(errors) && errors.some((each) => search(each, depth + 1))) return true;
  return search(cause, depth + 1);
}

/**
 * True when `error` says the database cannot be reached or is refusing work for now (server down,
 * shutting down or starting up, connection lost, connect timeout, every connection slot taken,
 * SQLite busy past its timeout); false for anything else, including a failing query on a healthy
 * database. Never throws.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  return search(error, 0);
}
