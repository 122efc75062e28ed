/**
 * Keeps a serving process up through a promise rejection nobody awaited (a library's background
 * work, such as the media engine's timers, failing late): logged as an error instead of ending every
 * candidate's live connection and every request in flight. Acknowledged writes are durable either
 * way; this only spares the restart.
 */
export function logUnhandledRejections(logger: { error(obj: object, msg: string): void }): void {
  process.on('unhandledRejection', (reason) => {
    logger.error({ err: reason }, 'unhandled promise rejection; the process keeps running');
  });
}
