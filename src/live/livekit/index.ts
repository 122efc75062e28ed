export {
  createLivekitEngine,
  type LivekitConfig,
  type LivekitEngineOptions,
  type LivekitLog,
  livekitApiUrl,
  REQUEST_TIMEOUT_SECONDS,
  TOKEN_TTL_SECONDS,
} from './livekit-engine.ts';
