/**
 * The console's one import of the browser's live client (web/live/live-client.ts, shared with the
 * candidate's room and phone): the socket to `/live/exams/:id` and the candidates' media. The names
 * the console's screens use for its types are given here.
 */
export { connectLive } from '../../../live/live-client.ts';
export type {
  AppMessage as ServerMessage,
  LiveConnection,
  LiveMessageJson,
  LiveStats as WatchStats,
  LiveStatus,
  LiveWatch as Watch,
  SocketStatus,
  StreamKind,
  WatchState,
} from '../../../live/live-client.ts';
