/**
 * The messages between the live-capacity benchmark (bench/live-capacity.ts), its engine process
 * (bench/live-engine.ts) and its load generator (bench/live-load.ts), over Node's IPC channels. The
 * benchmark relays the signalling between the two children, as the hub relays it between the
 * browsers' sockets and the engine.
 */
import type { ClientSignal, ServerMessage } from '../src/live/protocol.ts';

/** Load generator → engine (relayed): open links, pass a browser's signal, close a link. */
export type ToEngine =
  | { readonly kind: 'publisher'; readonly link: string; readonly sessionId: number }
  | { readonly kind: 'subscriber'; readonly link: string; readonly userId: number }
  | { readonly kind: 'signal'; readonly link: string; readonly signal: ClientSignal }
  | { readonly kind: 'close'; readonly link: string };

/** Engine → load generator (relayed): what the engine sent a link's browser, or reported. */
export type FromEngine =
  | { readonly kind: 'send'; readonly link: string; readonly message: ServerMessage }
  | { readonly kind: 'media'; readonly link: string; readonly state: 'connecting' | 'live' }
  | { readonly kind: 'refused'; readonly link: string; readonly error: string };

/** Benchmark → load generator. */
export type LoadCommand =
  /** Adds candidates (a publisher and a proctor watching it) until there are `candidates`. */
  | { readonly kind: 'grow'; readonly candidates: number }
  /** Counts frames sent and received for `ms`, then waits `graceMs` for late packets. */
  | { readonly kind: 'measure'; readonly ms: number; readonly graceMs: number }
  | { readonly kind: 'shutdown' };

/** What one measuring window saw, over all candidates. */
export interface Measured {
  readonly candidates: number;
  readonly framesSent: number;
  /** Frames whose every packet reached the proctor (retransmissions included) by the end of the grace. */
  readonly framesComplete: number;
  /** Frames the generator skipped, held up past their time (it could not keep the frame rate). */
  readonly framesSkipped: number;
  readonly packetsSent: number;
  readonly packetsReceived: number;
  readonly audioSent: number;
  readonly audioReceived: number;
  readonly bytesSent: number;
  /** The latest a frame or audio packet went out after its time, ms: the generator keeping up. */
  readonly lateMaxMs: number;
  readonly keyFrameRequests: number;
  /** Candidates none of whose frames of the window reached their proctor. */
  readonly silentCandidates: number;
  /** Candidates whose publishing or watching connection is no longer `connected` at the end. */
  readonly brokenConnections: number;
}

/** Load generator → benchmark. */
export type LoadReport =
  | { readonly kind: 'grown'; readonly candidates: number; readonly failed: number; readonly setupMs: number }
  | ({ readonly kind: 'measured' } & Measured);
