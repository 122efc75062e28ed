/** Publishing through LiveKit: the adapter (livekit.ts) does the media, the service hears how it goes. */
import { NO_MEDIA, hasTracks } from './media.ts';
import { loadLivekit, retryDelay } from './peer.ts';
import type {
  ClientSignal,
  LivekitJoin,
  LivekitPublication,
  Media,
  PublishState,
  Publisher,
} from './types.ts';

/**
 * Publishes through LiveKit (the adapter in livekit.ts) and tells the server whether the media
 * flows (`media`), which it cannot see on that engine.
 */
export class LivekitPublisher implements Publisher {
  private media: Media = NO_MEDIA;
  private publication: LivekitPublication | undefined;
  /** Counts the publications started; a late one of an older count is closed at once. */
  private generation = 0;
  private failures = 0;
  private closed = false;
  private retryTimer: number | undefined;

  constructor(
    private readonly join: LivekitJoin,
    private readonly signal: (signal: ClientSignal) => void,
    private readonly report: (state: PublishState) => void,
  ) {}

  setMedia(media: Media): void {
    this.media = media;
    this.restart();
  }

  answer(): void {}

  private restart(): void {
    window.clearTimeout(this.retryTimer);
    this.generation += 1;
    this.publication?.close();
    this.publication = undefined;
    if (this.closed) return;
    if (!hasTracks(this.media)) {
      this.report('off');
      return;
    }
    const generation = this.generation;
    this.report('connecting');
    this.signal({ type: 'media', state: 'connecting' });
    this.start(generation).catch((error: unknown) => {
      console.warn('live: LiveKit publishing failed', error);
      if (generation !== this.generation || this.closed) return;
      this.retryTimer = window.setTimeout(() => this.restart(), retryDelay(this.failures));
      this.failures += 1;
    });
  }

  private async start(generation: number): Promise<void> {
    const livekit = await loadLivekit();
    if (generation !== this.generation) return;
    const publication = await livekit.publishLivekit(this.join, this.media, (state) => {
      if (generation !== this.generation) return;
      if (state === 'live') this.failures = 0;
      this.report(state);
      this.signal({ type: 'media', state });
    });
    if (generation !== this.generation) {
      publication.close();
      return;
    }
    this.publication = publication;
  }

  close(): void {
    this.closed = true;
    this.restart();
  }
}
