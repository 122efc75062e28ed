/**
 * The yardstick: a bare node:http server answering every request with 200 and one fixed JSON body
 * (the same bytes Invigil answers), no routing, no parsing. It runs in its own process like
 * Invigil does, so the two see the same load generator and the same kind of machine time.
 *
 * Environment: BASELINE_PORT, BASELINE_BODY (the JSON text to answer).
 */
import http from 'node:http';

const port = Number(process.env.BASELINE_PORT);
const body = Buffer.from(process.env.BASELINE_BODY ?? '{}', 'utf8');
const headers = { 'content-type': 'application/json; charset=utf-8', 'content-length': String(body.length) };

const server = http.createServer((_request, response) => {
  response.writeHead(200, headers);
  response.end(body);
});

server.listen(port, '127.0.0.1');
process.once('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
});
