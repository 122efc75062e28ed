/**
 * The answer files the candidate hands in (docs/room.md, "Hand in your answers"). Each file is
 * kept on this computer (web/room/state/kept.ts) before it is sent and forgotten once the server
 * took it, so a file handed in while the connection is down, or while the page crashes, is handed
 * in when the connection is back or the page is opened again. Files go one at a time, in the order
 * handed in; a progress bar follows the one being sent.
 */
import { ApiError, errorOf, parseJson } from '../../shared/http.ts';
import type { RoomUploadAnswer } from '../../shared/candidate-api';
import { errorPhrase, phrase } from '../../shared/phrase.ts';
import { deviceStore, keptBefore } from '../state/kept.ts';
import { api, pause, room, token } from '../state/room.svelte.ts';

/** A file handed in (or waiting to be): its name and size. */
export interface AnswerFile {
  readonly name: string;
  readonly size: number;
}

/** How a file's first try ended: sent, kept to be sent later, or refused (the error). */
type Outcome = 'sent' | 'waiting' | ApiError;

/** A file waiting to be sent: the file, and its key on the device (undefined: kept in memory only). */
interface Waiting extends AnswerFile {
  readonly blob: Blob;
  readonly key: number | undefined;
  /** Tells how the first try ended (later calls do nothing). */
  settle: (outcome: Outcome) => void;
}

const FIRST_DELAY_MS = 1000;
const LONGEST_DELAY_MS = 30_000;
/** How long finishing waits for a file still waiting without progress before it finishes anyway. */
const FLUSH_LIMIT_MS = 30_000;

/** True for a failure that may pass by itself: no answer, too many requests, a server error. */
function passing(error: ApiError): boolean {
  return error.status === 0 || error.status === 429 || error.status >= 500;
}

class AnswerFiles {
  /** The files handed in from this page (and the ones an earlier page left, once sent). */
  handedIn: AnswerFile[] = $state([]);
  /** The files kept on this computer and not yet taken by the server, oldest first. */
  waiting: (AnswerFile & { readonly saved: boolean })[] = $state([]);
  /** The progress of the file being sent, in percent; undefined while none is. */
  percent: number | undefined = $state();

  readonly #queue: Waiting[] = [];
  #sending: Promise<void> | undefined;
  #restored = false;

  /**
   * Hands in `file`: keeps it on this computer, then sends it. Resolves once the server took it,
   * or once it is kept to be sent later (the server cannot be reached now); rejects with the
   * server's refusal (ApiError).
   */
  async handIn(file: File): Promise<void> {
    let key: number | undefined;
    try {
      key = await (await deviceStore)?.add(token, 'answer', file, file.name);
    } catch (error) {
      // The device cannot keep it (full): it is sent from memory, and lost with the page.
      console.warn('room: an answer file cannot be kept on this device', error);
    }
    const outcome = new Promise<Outcome>((resolve) => {
      this.#queue.push({ blob: file, name: file.name, size: file.size, key, settle: resolve });
    });
    this.#show();
    void this.#send();
    const result = await outcome;
    if (result instanceof ApiError) throw result;
    if (result === 'waiting') room.announce(phrase('room.exam.answers.savedAnnounced', { name: file.name }));
  }

  /** Takes over the files an earlier page left unsent, and sends them. Once per page. */
  restore(): void {
    if (this.#restored) return;
    this.#restored = true;
    void keptBefore().then((items) => {
      for (const item of items) {
        if (item.source !== 'answer') continue;
        this.#queue.push({
          blob: item.blob,
          name: item.name,
          size: item.blob.size,
          key: item.key,
          // No action waits for it: a refusal is shown in the alert region.
          settle: (outcome) => {
            if (outcome instanceof ApiError) room.showError(errorPhrase(outcome));
          },
        });
      }
      this.#show();
      void this.#send();
    });
  }

  /** Sends what waits now (the connection came back). */
  drain(): void {
    void this.#send();
  }

  /**
   * Waits while waiting files are being sent (before the finish), giving up after FLUSH_LIMIT_MS
   * without one handed in. Never throws.
   */
  async flush(): Promise<void> {
    let before = this.#queue.length;
    while (this.#queue.length > 0) {
      const sending = this.#send();
      await Promise.race([sending, new Promise((resolve) => window.setTimeout(resolve, FLUSH_LIMIT_MS))]);
      if (this.#queue.length >= before) return;
      before = this.#queue.length;
    }
  }

  /** Sends the waiting files in order; while a send runs, a call returns that same send. */
  #send(): Promise<void> {
    this.#sending ??= this.#sendAll().finally(() => {
      this.#sending = undefined;
    });
    return this.#sending;
  }

  async #sendAll(): Promise<void> {
    let delay = FIRST_DELAY_MS;
    for (let item = this.#queue[0]; item !== undefined; item = this.#queue[0]) {
      if (room.view?.session.status !== 'exam_started') return;
      try {
        const answer = await this.#upload(item);
        this.#done(item);
        this.handedIn = [...this.handedIn, { name: answer.upload.file_name, size: answer.upload.size }];
        room.announce(phrase('room.exam.answers.handedInAnnounced', { name: answer.upload.file_name }));
        delay = FIRST_DELAY_MS;
        // The view's count of files received follows.
        await room.reload().catch(() => undefined);
        item.settle('sent');
      } catch (error) {
        const failure = error instanceof ApiError ? error : new ApiError(0, String(error));
        if (!passing(failure)) {
          // Refused for good (too large, the exam over): dropped, and the candidate hears why.
          this.percent = undefined;
          this.#done(item);
          item.settle(failure);
          continue;
        }
        this.percent = undefined;
        item.settle('waiting');
        // Woken early when the connection comes back.
        await pause(delay);
        delay = Math.min(delay * 2, LONGEST_DELAY_MS);
      }
    }
  }

  /** Forgets a file the server took or refused, here and on the device. */
  #done(item: Waiting): void {
    const index = this.#queue.indexOf(item);
    if (index >= 0) this.#queue.splice(index, 1);
    this.#show();
    if (item.key !== undefined) {
      const key = item.key;
      void deviceStore.then((store) => store?.remove(key)).catch(() => undefined);
    }
  }

  #show(): void {
    this.waiting = this.#queue.map((item) => ({
      name: item.name,
      size: item.size,
      saved: item.key !== undefined,
    }));
  }

  /** Sends one file to POST uploads. Resolves with the server's answer; rejects with ApiError. */
  #upload(item: Waiting): Promise<RoomUploadAnswer> {
    const form = new FormData();
    form.append('file', item.blob, item.name);
    this.percent = 0;
    return new Promise((resolve, reject) => {
      const request = new XMLHttpRequest();
      request.open('POST', `${api}/uploads`);
      request.setRequestHeader('accept', 'application/json');
      request.upload.addEventListener('progress', (event) => {
        if (event.lengthComputable) this.percent = Math.round((event.loaded / event.total) * 100);
      });
      request.addEventListener('load', () => {
        room.setReachable(true);
        const json = parseJson(request.responseText);
        if (request.status === 201 && json !== null) {
          this.percent = 100;
          resolve(json as RoomUploadAnswer);
          return;
        }
        reject(new ApiError(request.status, errorOf(json, '')));
      });
      request.addEventListener('error', () => {
        room.setReachable(false);
        reject(new ApiError(0, '', phrase('room.exam.answers.unreachable')));
      });
      request.send(form);
    });
  }
}

/** The answer files of this page: one per page. */
export const answerFiles = new AnswerFiles();
