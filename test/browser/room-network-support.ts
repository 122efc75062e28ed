/**
 * What the weak-network and offline-crash room tests share: a recorded exam with one candidate who
 * skips the checks, the server's view of the session and its stored files, and what the page keeps
 * on the device (web/shared/recording/chunk-store.ts) read from inside the page.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import type { Page } from 'playwright-core';
import { fetchAddress } from '../helpers/files.ts';
import { httpRequest } from '../helpers/http.ts';
import { object } from '../helpers/json.ts';
import type { TestServer } from '../helpers/server.ts';

export type Json = Record<string, unknown>;
type TestUser = Awaited<ReturnType<TestServer['user']>>;

/** The first bytes of every WebM (Matroska) file: the EBML magic number. */
export const EBML_MAGIC = Buffer.from([0x1a, 0x45, 0xdf, 0xa3]);

export interface NetworkExam {
  readonly owner: TestUser;
  readonly examId: number;
  readonly sessionId: number;
  readonly token: string;
}

/** Creates a recorded exam (webcam, screen, answer files) and a candidate who may start at once. */
export async function createNetworkExam(
  server: TestServer,
  settings: Record<string, string | number | boolean> = {},
): Promise<NetworkExam> {
  const owner = await server.user(await server.institute(), 'teacher');
  const exam = await owner.client.v3('POST', '/exams', {
    name: 'Thermodynamics',
    type: 'record_review',
    duration_minutes: 30,
    web_cam: true,
    screen_share: true,
    upload_answers: true,
    ...settings,
  });
  assert.equal(exam.status, 201, exam.text);
  const examId = object(object(exam.json, 'body').exam, 'exam').id as number;
  const student = await owner.client.v3('POST', '/exams/:exam_id/student_sessions', {
    exam_id: examId,
    name: 'Lise Meitner',
    email: 'lise@example.org',
    skip_requirements: true,
  });
  assert.equal(student.status, 201, student.text);
  const record = object(object(student.json, 'body').student, 'student');
  return { owner, examId, sessionId: record.id as number, token: record.token as string };
}

/** The room view's session, as the server holds it now. */
export async function roomSession(server: TestServer, token: string): Promise<Json> {
  const answer = await httpRequest({ url: `${server.baseUrl}/api/room/${token}` });
  assert.equal(answer.status, 200, answer.text);
  return object(object(answer.json, 'body').session, 'session');
}

/** The session's stored files of `kind` (recording, screen_recording, upload), in sequence order. */
export async function storedFiles(exam: NetworkExam, kind: string): Promise<Json[]> {
  const answer = await exam.owner.client.v3('GET', '/student_sessions/:id/files', {
    id: exam.sessionId,
    kind,
  });
  assert.equal(answer.status, 200, answer.text);
  return (object(answer.json, 'body').files as Json[]).filter((file) => file.kind === kind);
}

/** The SHA-256 (hex) of a stored file's bytes. */
export async function storedDigest(server: TestServer, file: Json): Promise<string> {
  const bytes = (await fetchAddress(server, String(file.url))).bytes;
  return crypto.createHash('sha256').update(bytes).digest('hex');
}

/** The first bytes of a stored file. */
export async function storedHead(server: TestServer, file: Json): Promise<Buffer> {
  return (await fetchAddress(server, String(file.url))).bytes.subarray(0, 4);
}

/** What the page keeps on the device, oldest first: each item's source, size and SHA-256. */
export interface KeptItem {
  readonly source: string;
  readonly name: string;
  readonly size: number;
  readonly digest: string;
}

/** Reads the device store from inside `page` (its IndexedDB). */
export async function keptOnDevice(page: Page): Promise<KeptItem[]> {
  return page.evaluate(async () => {
    const db = await new Promise<IDBDatabase>((resolve, reject) => {
      const request = indexedDB.open('invigil-pending');
      request.onsuccess = () => resolve(request.result);
      request.onerror = () => reject(request.error ?? new Error('open'));
    });
    if (!db.objectStoreNames.contains('pending')) return [];
    const rows = await new Promise<{ key: number; source: string; name: string; blob: Blob }[]>(
      (resolve, reject) => {
        const request = db.transaction('pending').objectStore('pending').getAll();
        request.onsuccess = () =>
          resolve(request.result as { key: number; source: string; name: string; blob: Blob }[]);
        request.onerror = () => reject(request.error ?? new Error('getAll'));
      },
    );
    db.close();
    rows.sort((a, b) => a.key - b.key);
    const hex = (buffer: ArrayBuffer) =>
      [...new Uint8Array(buffer)].map((byte) => byte.toString(16).padStart(2, '0')).join('');
    return Promise.all(
      rows.map(async (row) => ({
        source: row.source,
        name: row.name,
        size: row.blob.size,
        digest: hex(await crypto.subtle.digest('SHA-256', await row.blob.arrayBuffer())),
      })),
    );
  });
}

/** Polls `condition` every 250 ms until it holds; fails naming `what` after `limitMs`. */
export async function until(
  page: Page,
  what: string,
  condition: () => Promise<boolean>,
  limitMs = 30_000,
): Promise<void> {
  for (let waited = 0; waited < limitMs; waited += 250) {
    if (await condition()) return;
    await page.waitForTimeout(250);
  }
  assert.fail(`timed out waiting until ${what}`);
}
