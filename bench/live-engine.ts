/**
 * The live-capacity benchmark's engine process: the embedded engine alone, as the service runs it,
 * driven over IPC by the benchmark (which relays the load generator's signalling). Its CPU time is
 * the figure measured. LIVE_UDP_PORT_MIN/MAX set its ports; it advertises 127.0.0.1 only.
 */
import type { LiveChannel, LiveLink } from '../src/live/engine.ts';
import { createEmbeddedEngine } from '../src/live/embedded/index.ts';
import type { FromEngine, ToEngine } from './live-ipc.ts';

const EXAM = 1;

function send(message: FromEngine): void {
  process.send?.(message);
}

const engine = createEmbeddedEngine(
  {
    engine: 'embedded',
    udpPortMin: Number(process.env.LIVE_UDP_PORT_MIN ?? '40000'),
    udpPortMax: Number(process.env.LIVE_UDP_PORT_MAX ?? '49999'),
    publicIp: '127.0.0.1',
    iceServers: [],
  },
  {
    warn: (details, message) => process.stderr.write(`engine: ${message ?? ''} ${JSON.stringify(details)}\n`),
    info: () => undefined,
    debug: () => undefined,
  },
);
const links = new Map<string, Promise<LiveLink>>();
/** Each link's signals, one after another (as the hub handles a socket's). */
const queues = new Map<string, Promise<void>>();

function channel(link: string): LiveChannel {
  return {
    send: (message) => send({ kind: 'send', link, message }),
    mediaState: (state) => send({ kind: 'media', link, state }),
  };
}

function handle(message: ToEngine): void {
  switch (message.kind) {
    case 'publisher':
      links.set(
        message.link,
        engine.publisher({ examId: EXAM, sessionId: message.sessionId, name: 'c' }, channel(message.link)),
      );
      return;
    case 'subscriber':
      links.set(
        message.link,
        engine.subscriber(
          { examId: EXAM, userId: message.userId, name: 'p', mayWatch: () => Promise.resolve(true) },
          channel(message.link),
        ),
      );
      return;
    case 'signal': {
      const link = links.get(message.link);
      if (link === undefined) return;
      const queue = (queues.get(message.link) ?? Promise.resolve())
        .then(async () => (await link).receive(message.signal))
        .catch((error: unknown) =>
          send({
            kind: 'refused',
            link: message.link,
            error: error instanceof Error ? error.message : String(error),
          }),
        );
      queues.set(message.link, queue);
      return;
    }
    case 'close':
      void links.get(message.link)?.then((link) => link.close());
      links.delete(message.link);
      return;
  }
}

process.on('message', (message: ToEngine | { kind: 'shutdown' }) => {
  if (message.kind !== 'shutdown') {
    handle(message);
    return;
  }
  void engine.close().then(() => process.disconnect());
});
