/**
 * What a candidate's page recorded or handed in and the server has not acknowledged yet, kept in
 * the browser's IndexedDB so that a crashed tab, a reload or a laptop that slept loses none of it
 * (docs/room.md, "Nothing recorded is lost"). Each item is written here before it is queued for
 * sending and removed once the server has acknowledged it; a page opened again on the same room
 * token sends what its dead predecessors left, first and in their order.
 *
 * One object store, `pending`, with an increasing key: the key's order is the order in which the
 * items were recorded, across pages. Items are filed under the room token and a source (`webcam`,
 * `screen`, `answer`) and the page that wrote them. A page holds a Web Lock named after itself for
 * its life; another page takes over its items only when that lock is free (the page is gone), and
 * then holds it, so two tabs opened at once never both send the same items.
 */

/** One item kept: a recording chunk or an answer file. */
export interface StoredItem {
  /** The store's key: the order of recording. */
  readonly key: number;
  readonly token: string;
  readonly source: string;
  /** The page that wrote it (a random id per page load). */
  readonly page: string;
  /** The sequence the chunk was last sent under (null: never sent); a resend uses it again. */
  readonly sequence: number | null;
  /** The file name (answer files). */
  readonly name: string;
  readonly blob: Blob;
  /** When it was made (epoch ms, this device's clock); absent in items kept before it was noted. */
  readonly madeAt?: number;
}

const DATABASE = 'invigil-pending';
const STORE = 'pending';
const BY_TOKEN = 'by_token';

/** The lock a page holds for its life: its items are its own while it is held. */
function lockName(page: string): string {
  return `invigil-pending-${page}`;
}

/** Resolves with the result of `request`; rejects with its error. */
function done<T>(request: IDBRequest<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error ?? new Error('IndexedDB request failed'));
  });
}

/** Resolves when `transaction` has committed; rejects with its error (QuotaExceededError, say). */
function committed(transaction: IDBTransaction): Promise<void> {
  return new Promise((resolve, reject) => {
    transaction.oncomplete = () => resolve();
    transaction.onerror = () => reject(transaction.error ?? new Error('IndexedDB transaction failed'));
    transaction.onabort = () => reject(transaction.error ?? new Error('IndexedDB transaction aborted'));
  });
}

/** True when `error` says the device has no room left for the item (the browser's quota). */
export function isQuotaError(error: unknown): boolean {
  return error instanceof DOMException && (error.name === 'QuotaExceededError' || error.code === 22);
}

/** A random id for this page load. */
function newPageId(): string {
  return typeof crypto.randomUUID === 'function'
    ? crypto.randomUUID()
    : `${Date.now()}-${Math.random().toString(36).slice(2)}`;
}

export class ChunkStore {
  /** This page's id, under which it files what it writes. */
  readonly page = newPageId();
  readonly #db: IDBDatabase;
  /** The pages whose items this page took over (their locks held, so no other page takes them). */
  readonly #adopted = new Set<string>();

  private constructor(db: IDBDatabase) {
    this.#db = db;
    void this.#hold(this.page);
  }

  /**
   * Opens the store. Returns undefined when the browser keeps no IndexedDB here (then the page
   * keeps what waits in memory only); never throws.
   */
  static async open(): Promise<ChunkStore | undefined> {
    if (typeof indexedDB === 'undefined') return undefined;
    try {
      const request = indexedDB.open(DATABASE, 1);
      request.onupgradeneeded = () => {
        const store = request.result.createObjectStore(STORE, { keyPath: 'key', autoIncrement: true });
        store.createIndex(BY_TOKEN, 'token');
      };
      return new ChunkStore(await done(request));
    } catch (error) {
      console.warn('chunk store: IndexedDB cannot be opened', error);
      return undefined;
    }
  }

  /**
   * Keeps `blob` of `source` under `token`, made at `madeAt` (epoch ms). Returns its key; throws
   * the browser's error when it cannot be kept (isQuotaError: the device is full).
   */
  async add(token: string, source: string, blob: Blob, name = '', madeAt = Date.now()): Promise<number> {
    const transaction = this.#db.transaction(STORE, 'readwrite');
    const request = transaction
      .objectStore(STORE)
      .add({ token, source, page: this.page, sequence: null, name, blob, madeAt });
    const [key] = await Promise.all([done(request), committed(transaction)]);
    return Number(key);
  }

  /** Notes the sequence an item is being sent under, so a page after this one resends it under the same. */
  async setSequence(key: number, sequence: number): Promise<void> {
    const transaction = this.#db.transaction(STORE, 'readwrite');
    const store = transaction.objectStore(STORE);
    const item = (await done(store.get(key))) as StoredItem | undefined;
    if (item !== undefined && item.sequence !== sequence) store.put({ ...item, sequence });
    await committed(transaction);
  }

  /** Forgets an item the server acknowledged (or refused for good). */
  async remove(key: number): Promise<void> {
    const transaction = this.#db.transaction(STORE, 'readwrite');
    transaction.objectStore(STORE).delete(key);
    await committed(transaction);
  }

  /**
   * Takes over what pages that are gone left for `token`: their items of every source, oldest
   * first. Items of pages still open (another tab) stay theirs. Returns the items taken over.
   */
  async adopt(token: string): Promise<StoredItem[]> {
    const items = await this.#itemsOf(token);
    const pages = new Set(items.map((item) => item.page));
    pages.delete(this.page);
    for (const page of pages) {
      if (this.#adopted.has(page)) continue;
      if (await this.#hold(page)) this.#adopted.add(page);
    }
    return items.filter((item) => this.#adopted.has(item.page));
  }

  /** Forgets everything kept for `token` (the exam is over). Returns how many items were dropped. */
  async clear(token: string): Promise<number> {
    const items = await this.#itemsOf(token);
    const mine = items.filter((item) => item.page === this.page || this.#adopted.has(item.page));
    if (mine.length === 0) return 0;
    const transaction = this.#db.transaction(STORE, 'readwrite');
    const store = transaction.objectStore(STORE);
    for (const item of mine) store.delete(item.key);
    await committed(transaction);
    return mine.length;
  }

  async #itemsOf(token: string): Promise<StoredItem[]> {
    const transaction = this.#db.transaction(STORE, 'readonly');
    const items = (await done(transaction.objectStore(STORE).index(BY_TOKEN).getAll(token))) as StoredItem[];
    return items.sort((a, b) => a.key - b.key);
  }

  /**
   * Takes the lock of `page` and holds it for this page's life. Resolves true when it was free (or
   * the browser has no Web Locks, where a single tab is assumed); false when a live page holds it.
   */
  #hold(page: string): Promise<boolean> {
    if (!('locks' in navigator) || navigator.locks === undefined) return Promise.resolve(true);
    return new Promise((resolve) => {
      void navigator.locks
        .request(lockName(page), { ifAvailable: true }, (lock) => {
          resolve(lock !== null);
          // Held until the page goes: a promise that never settles.
          return lock === null ? undefined : new Promise<void>(() => undefined);
        })
        .catch(() => resolve(false));
    });
  }
}
