import type { Config } from '../config/config.ts';

/**
 * The `connect-src` sources a page that joins live proctoring needs beyond 'self': the service's own
 * WebSocket origin named outright (for browsers that do not count ws: as 'self'), and, on LiveKit,
 * the LiveKit server's address in both its wss and https forms. Returns the sources.
 */
export function liveConnectSources(config: Pick<Config, 'publicUrl' | 'live'>): string[] {
  const publicUrl = new URL(config.publicUrl);
  const own = `${publicUrl.protocol === 'https:' ? 'wss' : 'ws'}://${publicUrl.host}`;
  if (config.live.engine !== 'livekit') return [own];
  const url = new URL(config.live.url);
  const secure = url.protocol === 'wss:' || url.protocol === 'https:';
  return [own, `${secure ? 'wss' : 'ws'}://${url.host}`, `${secure ? 'https' : 'http'}://${url.host}`];
}
