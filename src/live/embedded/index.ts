export { createEmbeddedEngine, type EmbeddedEngineLog } from './engine.ts';
export type { EmbeddedConfig } from './peer.ts';
