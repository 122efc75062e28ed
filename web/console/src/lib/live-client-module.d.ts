/**
 * The types of the browser's live client, src/http/live/page/live-client.js (docs/live-proctoring.md),
 * for the console. That module is plain JavaScript typed with JSDoc (its typedefs are the source);
 * the console's TypeScript does not read JavaScript, so the part of its API the console uses is
 * declared here once more, and lib/live-media.ts is the console's only import of it. A change of
 * connectLive's options or of LiveConnection belongs in both places. The messages themselves are the
 * service's own types (src/live/protocol.ts), imported as types only: nothing of the server reaches
 * the bundle.
 */
declare module '*/live-client.js' {
  // An ambient module may not import a relative path; import() types are its one way to the service's.
  /* eslint-disable @typescript-eslint/consistent-type-imports */
  /** A candidate's live status. */
  export type LiveStatus = import('../../../../src/live/protocol.ts').LiveStatus;

  /** A chat message as the sockets send it. Times are ISO 8601. */
  export type LiveMessageJson = import('../../../../src/live/protocol.ts').LiveMessageJson;

  /** What the server says on the socket that reaches the page (the client handles the signalling itself). */
  export type ServerMessage = Extract<
    import('../../../../src/live/protocol.ts').ServerMessage,
    { readonly type: 'live' | 'message' | 'control' | 'error' }
  >;
  /* eslint-enable @typescript-eslint/consistent-type-imports */

  /** The socket's state: opening (or reopening after a drop), open, or closed for good. */
  export type SocketStatus = 'connecting' | 'open' | 'closed';

  /** One watched candidate's media: waiting for the candidate, connecting, or flowing. */
  export type WatchState = 'waiting' | 'connecting' | 'live';

  /** Which of a candidate's streams a MediaStream is: the camera (with the microphone) or the screen. */
  export type StreamKind = 'camera' | 'screen';

  export interface WatchStats {
    readonly fps: number | null;
    readonly lossPercent: number | null;
    readonly rttMs: number | null;
  }

  export interface Watch {
    stop(): void;
    stats(): Promise<WatchStats>;
  }

  export interface LiveConnection {
    publish(media: { camera: MediaStream | null; screen: MediaStream | null }): void;
    watch(
      sessionId: number,
      handlers?: {
        onStream?(kind: StreamKind, stream: MediaStream): void;
        onState?(state: WatchState): void;
        /** Also watches the candidate's phone: its video while it flows, null when it does not. */
        onPhone?(stream: MediaStream | null): void;
      },
    ): Watch;
    close(): void;
    readonly status: SocketStatus;
  }

  /** Whether a candidate's published media reaches the server (the room page's). */
  export type PublishState = 'off' | 'connecting' | 'live';

  export function connectLive(options: {
    url: string;
    /** Publish the camera's video alone, on one line (the phone's socket). */
    cameraOnly?: boolean;
    onMessage?(message: ServerMessage): void;
    onStatus?(status: SocketStatus): void;
    onPublishState?(state: PublishState): void;
  }): LiveConnection;
}
