/**
 * The room's side of the device store (web/shared/recording/chunk-store.ts): what this page
 * records and hands in is kept under its room token until the server acknowledges it, and what
 * pages before it left unsent (a crash, a reload while offline) is taken over once, when the exam
 * stage comes up.
 */
import type { ChunkKeeper } from '../../shared/recording/chunk-queue.ts';
import { ChunkStore, type StoredItem } from '../../shared/recording/chunk-store.ts';
import { token } from './room.svelte.ts';

/** The device store; undefined where the browser keeps no IndexedDB. Opened once per page. */
export const deviceStore: Promise<ChunkStore | undefined> = ChunkStore.open();

/** Thrown by a keeper where the browser keeps nothing: the chunk waits in memory. */
export class NoDeviceStore extends Error {}

/** Keeps chunks under this page's token (rejects with NoDeviceStore where there is no store). */
export const keeper: ChunkKeeper = {
  async add(source, chunk, madeAt) {
    const store = await deviceStore;
    if (store === undefined) throw new NoDeviceStore('no IndexedDB');
    return store.add(token, source, chunk, '', madeAt);
  },
  async setSequence(key, sequence) {
    await (await deviceStore)?.setSequence(key, sequence);
  },
  async remove(key) {
    await (await deviceStore)?.remove(key);
  },
};

let adopted: Promise<StoredItem[]> | undefined;

/**
 * What pages before this one left unsent for this token, oldest first (taken over once per page;
 * later calls answer the same). Empty where there is no store or it cannot be read.
 */
export function keptBefore(): Promise<StoredItem[]> {
  adopted ??= deviceStore
    .then((store) => store?.adopt(token) ?? [])
    .catch((error: unknown) => {
      console.warn('room: what an earlier page kept cannot be read', error);
      return [];
    });
  return adopted;
}

/** Forgets everything this page kept or took over for its token (the exam is over). Never throws. */
export async function forgetKept(): Promise<void> {
  try {
    await keptBefore();
    await (await deviceStore)?.clear(token);
  } catch (error) {
    console.warn('room: the device store cannot be cleared', error);
  }
}
