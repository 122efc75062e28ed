/**
 * The yardstick of the room-capacity benchmark: a bare node:http server that takes the candidates'
 * requests with no routing, no parsing and no database. A recording chunk's whole request body is
 * written to its own file the way Invigil's local storage writes a chunk (a temporary file, synced,
 * then renamed into place), and answered 201; the room view and events get fixed JSON answers.
 * It runs in its own process like Invigil does.
 *
 * Environment: SINK_PORT, SINK_DIR (where chunk files go), SINK_VIEW (the JSON text a GET answers).
 * Chunk files are named `<token>-<n>` (n counting that token's chunks), so the benchmark can check
 * afterwards that every acknowledged chunk is on disk.
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';

const port = Number(process.env.SINK_PORT);
const directory = process.env.SINK_DIR ?? '';
const view = Buffer.from(process.env.SINK_VIEW ?? '{}', 'utf8');
const event = Buffer.from('{"event":{}}', 'utf8');
const chunkAnswer = Buffer.from('{"next_sequence":0}', 'utf8');
const json = 'application/json; charset=utf-8';
const counters = new Map<string, number>();
const temporary = path.join(directory, '.tmp');
fs.mkdirSync(temporary, { recursive: true });

function answer(response: http.ServerResponse, status: number, body: Buffer): void {
  response.writeHead(status, { 'content-type': json, 'content-length': String(body.length) });
  response.end(body);
}

/**
 * How Invigil's local storage opens a chunk written at once (src/storage/local.ts): created, never
 * an existing file, each write synced before it returns (O_DSYNC, else a separate fdatasync).
 */
const DSYNC: number = fs.constants.O_DSYNC ?? 0;
const WRITE_ONCE = fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | DSYNC;

/** The whole body, as the pieces the socket delivered (a chunk is a few hundred kB). */
function bodyOf(request: http.IncomingMessage): Promise<Buffer[]> {
  return new Promise((resolve, reject) => {
    const pieces: Buffer[] = [];
    request.on('data', (piece: Buffer) => pieces.push(piece));
    request.once('end', () => resolve(pieces));
    request.once('error', reject);
  });
}

/** Writes `pieces` to the new file `file` with one synced vectored write, and closes it. */
function writeWhole(file: string, pieces: Buffer[]): Promise<void> {
  return new Promise((resolve, reject) => {
    fs.open(file, WRITE_ONCE, 0o600, (openError, fd) => {
      if (openError !== null) {
        reject(openError);
        return;
      }
      const closeAfter = (failure: Error | null): void => {
        fs.close(fd, (closeError) => {
          const error = failure ?? closeError;
          if (error === null) resolve();
          else reject(error);
        });
      };
      fs.writev(fd, pieces, (writeError) => {
        if (writeError !== null || DSYNC !== 0) closeAfter(writeError);
        else fs.fdatasync(fd, closeAfter);
      });
    });
  });
}

/**
 * Keeps a chunk request's body the way Invigil's local storage keeps a chunk of that size
 * (Storage.putBytes): held in memory, one synced write to a temporary file, renamed into place.
 */
async function keep(request: http.IncomingMessage, token: string): Promise<void> {
  const n = counters.get(token) ?? 0;
  counters.set(token, n + 1);
  const part = path.join(temporary, `${token}-${n}`);
  await writeWhole(part, await bodyOf(request));
  await fs.promises.rename(part, path.join(directory, `${token}-${n}`));
}

const server = http.createServer((request, response) => {
  const [, , , token = '', action = ''] = (request.url ?? '').split('/');
  if (request.method === 'POST' && action === 'recordings') {
    keep(request, token).then(
      () => answer(response, 201, chunkAnswer),
      () => answer(response, 500, Buffer.from('{"error":"not stored"}')),
    );
    return;
  }
  request.resume();
  if (request.method === 'POST') answer(response, 201, event);
  else answer(response, 200, view);
});
server.keepAliveTimeout = 60_000;
server.listen(port, '127.0.0.1');
process.once('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
});
