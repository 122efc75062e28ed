/**
 * The console's one import of the browser's live client (src/http/live/page/live-client.js, shared
 * with the candidate's room page): the socket to `/live/exams/:id` and the candidates' media.
 * Types: live-client-module.d.ts.
 */
export { connectLive } from '../../../../src/http/live/page/live-client.js';
export type {
  LiveConnection,
  LiveMessageJson,
  LiveStatus,
  ServerMessage,
  SocketStatus,
  StreamKind,
  Watch,
  WatchState,
} from '../../../../src/http/live/page/live-client.js';
