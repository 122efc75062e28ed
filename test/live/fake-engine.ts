import type {
  LiveChannel,
  LiveEngine,
  LiveLink,
  LiveParticipant,
  LivePublisherIdentity,
  LiveSubscriberIdentity,
} from '../../src/live/engine.ts';
import type { ClientSignal } from '../../src/live/protocol.ts';

/** One link the fake engine gave out, with what it received and the channel to drive. */
export interface FakeLink {
  readonly role: 'candidate' | 'proctor';
  readonly examId: number;
  /** The candidate's session id, or the proctor's user id. */
  readonly id: number;
  readonly publisher: LivePublisherIdentity | undefined;
  readonly subscriber: LiveSubscriberIdentity | undefined;
  readonly channel: LiveChannel;
  readonly received: ClientSignal[];
  closed: boolean;
}

/** The SDP that makes the fake engine's receive throw (an engine refusing a signal). */
export const REFUSED_SDP = 'refuse me';

/**
 * A LiveEngine for tests: it records every call and link, answers a candidate's offer with a dummy
 * answer (`answer to <offer>`), offers a proctor a dummy offer for each subscription, and lets the
 * test drive a link's channel (mediaState, send). `failLinks` makes publisher and subscriber throw.
 */
export class FakeEngine implements LiveEngine {
  readonly kind = 'embedded' as const;
  readonly iceServers = [{ urls: 'stun:stun.example.org:3478' }];
  /** `openRoom 7`, `endRoom 7`, `close`, in order. */
  readonly calls: string[] = [];
  readonly links: FakeLink[] = [];
  failLinks = false;
  private readonly waiters: { test: (link: FakeLink) => boolean; resolve: (link: FakeLink) => void }[] = [];

  openRoom(examId: number): Promise<void> {
    this.calls.push(`openRoom ${examId}`);
    return Promise.resolve();
  }

  endRoom(examId: number): Promise<void> {
    this.calls.push(`endRoom ${examId}`);
    return Promise.resolve();
  }

  publisher(who: LivePublisherIdentity, channel: LiveChannel): Promise<LiveLink> {
    if (this.failLinks) return Promise.reject(new Error('fake engine down'));
    const link = this.add({
      role: 'candidate',
      examId: who.examId,
      id: who.sessionId,
      publisher: who,
      subscriber: undefined,
      channel,
      received: [],
      closed: false,
    });
    return Promise.resolve(
      this.linkOf(link, (signal) => {
        if (signal.type === 'offer') channel.send({ type: 'answer', sdp: `answer to ${signal.sdp}` });
      }),
    );
  }

  subscriber(who: LiveSubscriberIdentity, channel: LiveChannel): Promise<LiveLink> {
    if (this.failLinks) return Promise.reject(new Error('fake engine down'));
    const link = this.add({
      role: 'proctor',
      examId: who.examId,
      id: who.userId,
      publisher: undefined,
      subscriber: who,
      channel,
      received: [],
      closed: false,
    });
    return Promise.resolve(
      this.linkOf(link, (signal) => {
        if (signal.type === 'subscribe') {
          channel.send({ type: 'offer', sessionId: signal.sessionId, sdp: `offer of ${signal.sessionId}` });
        }
      }),
    );
  }

  connected(examId: number): Promise<readonly LiveParticipant[]> {
    return Promise.resolve(
      this.links
        .filter((link) => link.examId === examId && !link.closed)
        .map((link) => ({ role: link.role, id: link.id, publishing: link.role === 'candidate' })),
    );
  }

  close(): Promise<void> {
    this.calls.push('close');
    return Promise.resolve();
  }

  /** The first link (given out already or later) that passes `test`. */
  link(test: (link: FakeLink) => boolean): Promise<FakeLink> {
    const found = this.links.find(test);
    if (found !== undefined) return Promise.resolve(found);
    return new Promise((resolve) => this.waiters.push({ test, resolve }));
  }

  /** The newest open link of a candidate's session. */
  candidateLink(sessionId: number): Promise<FakeLink> {
    return this.link((link) => link.role === 'candidate' && link.id === sessionId && !link.closed);
  }

  private add(link: FakeLink): FakeLink {
    this.links.push(link);
    for (const waiter of [...this.waiters]) {
      if (!waiter.test(link)) continue;
      this.waiters.splice(this.waiters.indexOf(waiter), 1);
      waiter.resolve(link);
    }
    return link;
  }

  private linkOf(link: FakeLink, answer: (signal: ClientSignal) => void): LiveLink {
    return {
      join: { engine: 'embedded', iceServers: this.iceServers },
      receive(signal) {
        link.received.push(signal);
        if ('sdp' in signal && signal.sdp === REFUSED_SDP) {
          return Promise.reject(new Error('The offer could not be read'));
        }
        answer(signal);
        return Promise.resolve();
      },
      close() {
        link.closed = true;
      },
    };
  }
}
