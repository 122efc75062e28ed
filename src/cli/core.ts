import { type Core, createCore } from '../app.ts';
import type { Config } from '../config/config.ts';

/** Runs `run` with the service's core (database, services) for one command, closing it afterwards. */
export async function withCore(config: Config, run: (core: Core) => Promise<void>): Promise<void> {
  const core = await createCore(config);
  try {
    await run(core);
  } finally {
    await core.close();
  }
}
