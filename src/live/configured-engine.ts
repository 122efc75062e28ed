import type { Logger } from 'pino';
import type { LiveConfig } from '../config/config.ts';
import type { LiveEngine } from './engine.ts';

/**
 * The media engine MEDIA_ENGINE names, started on first use: a serving process that never sees a
 * live-proctoring socket never loads werift or the LiveKit SDK, and opens no UDP port. Its `kind`
 * and `iceServers` come from the configuration at once. When the engine fails to start, every call
 * rejects with that failure (the hub refuses the socket and logs it). Returns the engine; throws
 * nothing.
 */
export function createConfiguredEngine(config: LiveConfig, log: Logger): LiveEngine {
  let started: Promise<LiveEngine> | undefined;
  let closed = false;

  async function load(): Promise<LiveEngine> {
    if (config.engine === 'livekit') {
      const { createLivekitEngine } = await import('./livekit/index.ts');
      return createLivekitEngine(config, { log: log.child({ component: 'livekit' }) });
    }
    const { createEmbeddedEngine } = await import('./embedded/index.ts');
    return createEmbeddedEngine(config, log.child({ component: 'live-engine' }));
  }

  function engine(): Promise<LiveEngine> {
    if (closed) return Promise.reject(new Error('The live engine is closed'));
    started ??= load();
    return started;
  }

  return {
    kind: config.engine,
    iceServers: config.iceServers,
    openRoom: async (examId) => (await engine()).openRoom(examId),
    endRoom: async (examId) => (await engine()).endRoom(examId),
    publisher: async (who, channel) => (await engine()).publisher(who, channel),
    subscriber: async (who, channel) => (await engine()).subscriber(who, channel),
    connected: async (examId) => (await engine()).connected(examId),
    async close() {
      closed = true;
      if (started === undefined) return;
      const running = await started.catch(() => undefined);
      await running?.close();
    },
  };
}
