/**
 * The machinery behind test/http/access-matrix.test.ts: the actors, the fixtures of institute A
 * (and B), how each V3 route is called, and how an answer is classed. The expectations themselves
 * live in the test file, in one table.
 */
import { instituteOfSession } from '../../src/domain/data-keys/data-keys.repository.ts';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import pino from 'pino';
import type { Actor, Role } from '../../src/domain/access.ts';
import { createWorker } from '../../src/jobs/worker.ts';
import type { ApiClient } from '../helpers/client.ts';
import { type HttpAnswer, httpRequest } from '../helpers/http.ts';
import { type FilePart, SAMPLE, v3Multipart } from '../helpers/multipart.ts';
import type { TestServer } from '../helpers/server.ts';
import type { Scalar } from '../helpers/signing.ts';
import type { PhotoKind } from '../../src/domain/student-sessions/photos.service.ts';
import { insertSessionFile } from '../../src/domain/room/room.repository.ts';
import { holdOutboxMessage } from '../../src/domain/mail/outbox.repository.ts';

// ---- Actors and outcomes ----

/** Every actor, in the column order of the expectation table. */
export const ACTORS = [
  'superuser',
  'administrator',
  'owner',
  'teacher',
  'comanager',
  'proctor',
  'reviewer',
  'auditor',
  'bAdministrator',
  'bTeacher',
] as const;
export type ActorName = (typeof ACTORS)[number];

export const A_ACTORS: readonly ActorName[] = ACTORS.filter((name) => !name.startsWith('b'));
export const B_ACTORS: readonly ActorName[] = ['bAdministrator', 'bTeacher'];

/**
 * What a call must answer: `ok` 2xx; `listed` 2xx and the list holds A's fixture records;
 * `omitted` 2xx and the list holds none of them; `forbidden` 403 with exactly the not-authorized
 * body; `hidden` 404 byte-identical (body and headers, id substituted) to the same call naming a
 * missing record; `invalid` 422.
 */
export type Outcome = 'ok' | 'listed' | 'omitted' | 'forbidden' | 'hidden' | 'invalid';

/** One row of the table: an outcome per actor, in ACTORS order. */
export type Row = readonly [
  Outcome,
  Outcome,
  Outcome,
  Outcome,
  Outcome,
  Outcome,
  Outcome,
  Outcome,
  Outcome,
  Outcome,
];

export const NOT_AUTHORIZED_TEXT = '{"error":"You are not authorized to access this page."}';

/** An id no record has (all ids stay far below it in a test database). */
export const MISSING_ID = 987654321;

// ---- Fixtures ----

export interface Member {
  readonly id: number;
  readonly client: ApiClient;
  readonly actor: Actor;
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The record under `key` of a 2xx JSON answer; throws with the answer when it is anything else. */
export function recordIn(answer: HttpAnswer, key: string): Json {
  const body = answer.json;
  const record = isObject(body) ? body[key] : undefined;
  if (answer.status < 200 || answer.status > 299 || !isObject(record)) {
    throw new Error(`expected a ${key} record, got ${answer.status} ${answer.text.slice(0, 300)}`);
  }
  return record;
}

function idIn(answer: HttpAnswer, key: string): number {
  const id = recordIn(answer, key).id;
  if (typeof id !== 'number') throw new Error(`${key} without a numeric id: ${answer.text.slice(0, 200)}`);
  return id;
}

/** The records under `key` of a 2xx list answer, or undefined when the answer is not one. */
export function listIn(answer: HttpAnswer, key: string): Json[] | undefined {
  const body = answer.json;
  const list = isObject(body) ? body[key] : undefined;
  if (answer.status < 200 || answer.status > 299 || !Array.isArray(list)) return undefined;
  return list.filter(isObject);
}

const OIDC_METADATA = JSON.stringify({ issuer: 'https://idp.example.org' });

let sequence = 0;

/** A name no other call of this file uses. */
export function unique(prefix: string): string {
  sequence += 1;
  return `${prefix}-${sequence}-${crypto.randomBytes(3).toString('hex')}`;
}

function toolProviderParams(): Record<string, Scalar> {
  return {
    name: unique('Provider'),
    lti_version: '1.1',
    consumer_key: unique('key'),
    shared_secret: crypto.randomBytes(16).toString('hex'),
  };
}

function sessionParams(): Record<string, Scalar> {
  return { name: 'Student', email: `${unique('student')}@example.org` };
}

function examParams(): Record<string, Scalar> {
  return { name: unique('Exam'), type: 'classroom', duration_minutes: 60 };
}

function png(): FilePart[] {
  return [{ field: 'document', fileName: 'sheet.png', contentType: 'image/png', bytes: SAMPLE.png }];
}

/**
 * Institutes A and B with every actor, and A's records the matrix reads: an exam owned by `owner`
 * (co-managed by `comanager`, added over HTTP) with a document, an attachment, a session with an
 * incident, a face photo and a recording chunk, and a session from an LMS; a tool provider and an
 * LTI resource; an identity provider (and a global one). B has its own exam, session, provider and
 * resource for the cross-institute probes.
 */
export interface World {
  readonly server: TestServer;
  readonly instituteA: number;
  readonly instituteB: number;
  readonly members: Readonly<Record<ActorName, Member>>;
  /** A teacher of A no actor is: the user the users routes read and co-manager calls name. */
  readonly targetTeacher: Member;
  readonly exam: number;
  readonly document: number;
  readonly attachment: number;
  readonly session: number;
  readonly ltiSession: number;
  readonly lms: { readonly student_lms_id: string; readonly resource_link_id: string };
  readonly toolProvider: number;
  readonly ltiResource: number;
  readonly identityProvider: number;
  readonly globalIdentityProvider: number;
  /** An audit event of A: the owner's creation of `exam` (every signed write is recorded). */
  readonly auditEvent: number;
  readonly b: {
    readonly exam: number;
    readonly session: number;
    readonly toolProvider: number;
    readonly ltiResource: number;
  };
}

/** Builds the world on a running server, A's records over HTTP. Throws when a fixture call fails. */
export async function createWorld(server: TestServer): Promise<World> {
  const instituteA = await server.institute(unique('Institute A'));
  const instituteB = await server.institute(unique('Institute B'));
  const member = async (instituteId: number, role: Role): Promise<Member> => {
    const user = await server.user(instituteId, role);
    return { id: user.id, client: user.client, actor: { id: user.id, instituteId, role } };
  };
  const members: Record<ActorName, Member> = {
    superuser: await member(instituteA, 'superuser'),
    administrator: await member(instituteA, 'administrator'),
    owner: await member(instituteA, 'teacher'),
    teacher: await member(instituteA, 'teacher'),
    comanager: await member(instituteA, 'teacher'),
    proctor: await member(instituteA, 'proctor'),
    reviewer: await member(instituteA, 'reviewer'),
    auditor: await member(instituteA, 'auditor'),
    bAdministrator: await member(instituteB, 'administrator'),
    bTeacher: await member(instituteB, 'teacher'),
  };
  const targetTeacher = await member(instituteA, 'teacher');
  const { owner, administrator, proctor, bAdministrator, bTeacher } = members;

  const exam = idIn(await owner.client.v3('POST', '/exams', examParams()), 'exam');
  recordIn(
    await owner.client.v3('PUT', '/exams/:id/add_comanager', {
      id: exam,
      comanager_id: members.comanager.id,
    }),
    'comanager',
  );
  const document = idIn(
    await owner.client.v3('POST', '/exams/:exam_id/documents', {
      exam_id: exam,
      exam_content: 'Read every question.',
    }),
    'document',
  );
  const attachment = idIn(
    await v3Multipart(owner.client, 'POST', '/exams/:exam_id/attachments', { exam_id: exam }, png()),
    'attachment',
  );
  const session = idIn(
    await owner.client.v3('POST', '/exams/:exam_id/student_sessions', { exam_id: exam, ...sessionParams() }),
    'student',
  );
  recordIn(
    await proctor.client.v3('POST', '/student_sessions/:id/incidents', {
      id: session,
      comment: 'Looked away',
      offset_time: 12,
    }),
    'student',
  );
  await attachPhoto(server, session, 'face_photo');
  await storeRecordingChunk(server, session);
  const toolProvider = idIn(
    await administrator.client.v3('POST', '/tool_providers', toolProviderParams()),
    'tool_provider',
  );
  const lms = { student_lms_id: unique('lms-user'), resource_link_id: unique('link') };
  const ltiResource = idIn(
    await administrator.client.v3('POST', '/lti_resources', {
      tool_provider_id: toolProvider,
      resource_link_id: lms.resource_link_id,
      exam_id: exam,
      title: 'Matrix resource',
    }),
    'lti_resource',
  );
  const ltiSession = idIn(
    await owner.client.v3('POST', '/exams/:exam_id/student_sessions', {
      exam_id: exam,
      ...sessionParams(),
      student_lms_id: lms.student_lms_id,
      lti_resource_id: ltiResource,
    }),
    'student',
  );
  const identityProvider = async (name: string, instituteId: number | null) =>
    (
      await server.app.services.identityProviders.create({
        name,
        protocol: 'oidc',
        metadata: OIDC_METADATA,
        instituteId,
      })
    ).id;

  const bExam = idIn(await bTeacher.client.v3('POST', '/exams', examParams()), 'exam');
  const bToolProvider = idIn(
    await bAdministrator.client.v3('POST', '/tool_providers', toolProviderParams()),
    'tool_provider',
  );
  const b = {
    exam: bExam,
    session: idIn(
      await bTeacher.client.v3('POST', '/exams/:exam_id/student_sessions', {
        exam_id: bExam,
        ...sessionParams(),
      }),
      'student',
    ),
    toolProvider: bToolProvider,
    ltiResource: idIn(
      await bAdministrator.client.v3('POST', '/lti_resources', {
        tool_provider_id: bToolProvider,
        resource_link_id: unique('link'),
      }),
      'lti_resource',
    ),
  };
  await identityProvider('B OIDC', instituteB);
  const auditEvent = await server.app.database.db
    .selectFrom('audit_events')
    .select('id')
    .where('user_id', '=', owner.id)
    .where('action', '=', 'POST /api/v3/exams')
    .orderBy('id')
    .executeTakeFirstOrThrow();

  return {
    server,
    instituteA,
    instituteB,
    members,
    targetTeacher,
    exam,
    document,
    attachment,
    session,
    ltiSession,
    lms,
    toolProvider,
    ltiResource,
    identityProvider: await identityProvider('A OIDC', instituteA),
    globalIdentityProvider: await identityProvider('Global OIDC', null),
    auditEvent: auditEvent.id,
    b,
  };
}

// Fresh targets, one per destructive call; made through the services (faster than HTTP) as A's
// owner or administrator.

/** A new exam of A owned by `owner` and co-managed by `comanager` (and `targetTeacher` when asked). */
export async function freshExam(
  world: World,
  options: { document?: boolean; targetComanager?: boolean } = {},
): Promise<{ exam: number; document: number }> {
  const { exams, examStaff, documents } = world.server.app.services;
  const { owner, comanager } = world.members;
  const exam = await exams.create(owner.actor, examParams());
  await examStaff.addComanager(owner.actor, exam.id, { comanager_id: comanager.id });
  if (options.targetComanager) {
    await examStaff.addComanager(owner.actor, exam.id, { comanager_id: world.targetTeacher.id });
  }
  if (!options.document) return { exam: exam.id, document: 0 };
  const document = await documents.create(owner.actor, exam.id, { exam_content: 'Fresh text' });
  return { exam: exam.id, document: document.id };
}

/** A new session of A's fixture exam, with `proctor` assigned or a photo when asked. */
export async function freshSession(
  world: World,
  options: { proctor?: boolean; photo?: PhotoKind } = {},
): Promise<number> {
  const { studentSessions, examStaff } = world.server.app.services;
  const { owner, proctor } = world.members;
  const session = await studentSessions.create(owner.actor, world.exam, sessionParams());
  if (options.proctor) {
    await examStaff.assignProctor(owner.actor, session.id, { proctor_id: proctor.id });
  }
  if (options.photo !== undefined) await attachPhoto(world.server, session.id, options.photo);
  return session.id;
}

/**
 * A fresh session of A's exam with a `suspicious` verdict given by A's administrator, and the
 * candidate's open appeal against it (docs/appeals.md). Returns the session's id.
 */
async function freshAppeal(world: World): Promise<number> {
  const { reviews, appeals } = world.server.app.services;
  const id = await freshSession(world);
  const { administrator } = world.members;
  await reviews.record(administrator.actor, id, { verdict: 'suspicious' });
  const row = await world.server.app.database.db
    .selectFrom('student_sessions')
    .select('token')
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
  await appeals.submit(row.token, { statement: 'I disagree.' }, []);
  return id;
}

/**
 * A fresh session of A's exam with one automated flag (written as the room's flags route writes
 * one: source automatic, a type, an episode key). Returns the session's and the incident's ids.
 */
async function freshFlag(world: World): Promise<{ session: number; incident: number }> {
  const session = await freshSession(world);
  const now = Date.now();
  const row = await world.server.app.database.db
    .insertInto('incidents')
    .values({
      student_session_id: session,
      kind: 'flag',
      source: 'automatic',
      type: 'no_face',
      confidence: 0.9,
      offset_time: 5,
      episode_key: 'matrix-1',
      comment: 'Automatic flag: no face was in view of the webcam',
      created_at: now,
      updated_at: now,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return { session, incident: row.id };
}

/** A live-proctored exam of A (owned by `owner`, co-managed by `comanager`), one per world. */
const liveExams = new WeakMap<World, Promise<number>>();

function liveExam(world: World): Promise<number> {
  let exam = liveExams.get(world);
  if (exam === undefined) {
    const { exams, examStaff } = world.server.app.services;
    const { owner, comanager } = world.members;
    exam = (async () => {
      const created = await exams.create(owner.actor, { ...examParams(), type: 'live_proctoring' });
      await examStaff.addComanager(owner.actor, created.id, { comanager_id: comanager.id });
      return created.id;
    })();
    liveExams.set(world, exam);
  }
  return exam;
}

/**
 * A new session of A's live-proctored exam with `proctor` assigned, moved straight in the database
 * (as the candidate room would have moved it) to `status`, its clock paused when asked.
 */
export async function freshLiveSession(
  world: World,
  options: { status?: string; paused?: boolean } = {},
): Promise<number> {
  const { app } = world.server;
  const { owner, proctor } = world.members;
  const session = await app.services.studentSessions.create(
    owner.actor,
    await liveExam(world),
    sessionParams(),
  );
  await app.services.examStaff.assignProctor(owner.actor, session.id, { proctor_id: proctor.id });
  const now = app.clock.now();
  const status = options.status ?? 'registered';
  await app.database.db
    .updateTable('student_sessions')
    .set({
      status,
      in_setup: status === 'in_setup',
      start_time: status === 'exam_started' ? now : null,
      clock_paused_at: options.paused ? now : null,
    })
    .where('id', '=', session.id)
    .execute();
  return session.id;
}

/** A new attachment of A's fixture document (uploaded over HTTP by the owner). */
export async function freshAttachment(world: World): Promise<number> {
  const params = { exam_id: world.exam };
  const answer = await v3Multipart(
    world.members.owner.client,
    'POST',
    '/exams/:exam_id/attachments',
    params,
    png(),
  );
  return idIn(answer, 'attachment');
}

/** Exams of A whose documents zip has been built, one per world (made on first use). */
const zippedExams = new WeakMap<World, Promise<number>>();

/**
 * A new exam of A with a built documents zip: generated by its owner, then due jobs run in this
 * process, as a worker would, until the export succeeds. Returns the exam's id; throws otherwise.
 */
export function zippedExam(world: World): Promise<number> {
  let exam = zippedExams.get(world);
  if (exam === undefined) {
    exam = buildZippedExam(world);
    zippedExams.set(world, exam);
  }
  return exam;
}

async function buildZippedExam(world: World): Promise<number> {
  const { app } = world.server;
  const owner = world.members.owner.actor;
  const { exam } = await freshExam(world);
  await app.services.examExports.generate(owner, exam);
  const worker = createWorker({
    db: app.database.db,
    dialect: app.database.dialect,
    clock: app.clock,
    logger: pino({ level: 'silent' }),
    handlers: app.jobHandlers,
  });
  while ((await app.services.examExports.status(owner, exam)) !== 'success') {
    if (!(await worker.runOnce())) throw new Error(`the zip of exam ${exam} was not built`);
  }
  return exam;
}

/** A new teacher of A. */
export async function freshUser(world: World): Promise<number> {
  const { user } = await world.server.app.services.users.create(world.instituteA, {
    email: `${unique('user')}@example.org`,
    name: 'Fresh user',
    role: 'teacher',
  });
  return user.id;
}

/** A new tool provider of A. */
export async function freshToolProvider(world: World): Promise<number> {
  const { toolProviders } = world.server.app.services;
  return (await toolProviders.create(world.members.administrator.actor, toolProviderParams())).id;
}

/** A new LTI resource of A's fixture tool provider, linked to no exam. */
export async function freshLtiResource(world: World): Promise<number> {
  const { ltiResources } = world.server.app.services;
  const resource = await ltiResources.create(world.members.administrator.actor, {
    tool_provider_id: world.toolProvider,
    resource_link_id: unique('link'),
  });
  return resource.id;
}

/** A new email of A in the outbox: the exam link of a fresh session of a fresh exam. Returns its id. */
export async function freshEmail(world: World, options: { held?: boolean } = {}): Promise<number> {
  const { app } = world.server;
  const owner = world.members.owner.actor;
  const { exam } = await freshExam(world);
  const session = await app.services.studentSessions.create(owner, exam, sessionParams());
  await app.services.mail.sendExamEmails(owner, exam);
  const row = await app.database.db
    .selectFrom('outbox')
    .select('id')
    .where('student_session_id', '=', session.id)
    .executeTakeFirstOrThrow();
  // As a worker without SMTP_URL keeps it: an email that may be delivered again.
  if (options.held) await holdOutboxMessage(app.database.db, row.id, app.clock.now());
  return row.id;
}

/** The email of A the outbox reads look for, one per world (made on first use). */
const worldEmails = new Map<World, number>();

/** The purge-log entry of A the purge-log reads look for, one per world (as the retention sweep writes). */
const worldPurges = new Map<World, number>();

async function worldPurge(world: World): Promise<number> {
  const known = worldPurges.get(world);
  if (known !== undefined) return known;
  const row = await world.server.app.database.db
    .insertInto('session_purges')
    .values({
      institute_id: world.instituteA,
      exam_id: world.exam,
      student_session_id: world.session,
      kind: 'photo',
      files: 2,
      bytes: 1234,
      reason: 'retention',
      retention_period: 30,
      purged_at: Date.now(),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  worldPurges.set(world, row.id);
  return row.id;
}

async function worldEmail(world: World): Promise<number> {
  const known = worldEmails.get(world);
  if (known !== undefined) return known;
  const id = await freshEmail(world);
  worldEmails.set(world, id);
  return id;
}

/** A new, empty institute (only a superuser may destroy one, and not its own). */
export async function freshInstitute(world: World): Promise<number> {
  const { institutes } = world.server.app.services;
  return (await institutes.create({ name: unique('Institute'), short_name: 'FRESH' })).id;
}

/** Gives a session a PNG photo of `kind` as the candidate room does (no route of the API uploads one). */
async function attachPhoto(server: TestServer, sessionId: number, kind: PhotoKind): Promise<void> {
  const file = path.join(server.database.dataDir, `${unique('photo')}.png`);
  fs.writeFileSync(file, SAMPLE.png);
  await server.app.services.photos.attachPhoto(sessionId, kind, {
    field: kind,
    fileName: 'photo.png',
    declaredType: 'image/png',
    path: file,
    size: SAMPLE.png.length,
    head: SAMPLE.png.subarray(0, 64),
  });
}

/** Gives a session its first webcam recording chunk as the candidate room stores one. */
async function storeRecordingChunk(server: TestServer, sessionId: number): Promise<void> {
  const { files } = server.app.services;
  const file = await files.keepStream(Readable.from([crypto.randomBytes(512)]), {
    instituteId: (await instituteOfSession(server.app.database.db, sessionId)) ?? 0,
    originalName: 'recording-0.webm',
    contentType: 'video/webm',
  });
  const now = server.app.clock.now();
  await insertSessionFile(server.app.database.db, {
    sessionId,
    kind: 'recording',
    fileId: file.id,
    sequence: 0,
    now,
  });
}

// ---- How each route is called ----

/** One call of a route: the parameters (route ones included) and, for uploads, the file parts. */
export interface Call {
  readonly params: Readonly<Record<string, Scalar>>;
  readonly files?: readonly FilePart[];
}

export interface RouteCall {
  /**
   * The parameter naming the record whose visibility decides the answer: the missing-id call
   * replaces it with MISSING_ID. Absent for calls on no record (POST /exams, most lists).
   */
  readonly scope?: string;
  /** For lists: the root key and A's records a reader must find (and an outsider must not). */
  readonly list?: {
    readonly key: string;
    readonly ids: (world: World) => readonly number[];
    /** Records that are no institute's and every caller given the list must find (global ones). */
    readonly shared?: (world: World) => readonly number[];
    /** True for a listed record that belongs to institute A (B must see none). */
    readonly ofA?: (item: Json, world: World) => boolean;
  };
  /** Builds the call, creating a fresh target first for routes that change or destroy one. */
  prepare(world: World, actor: ActorName): Call | Promise<Call>;
}

const call = (params: Record<string, Scalar>, files?: readonly FilePart[]): Call =>
  files === undefined ? { params } : { params, files };

const ofInstituteA = (item: Json, world: World) => item.institute_id === world.instituteA;

const examRead = (world: World) => call({ id: world.exam });
const examUpdate: RouteCall = {
  scope: 'id',
  prepare: async (world, actor) => call({ id: (await freshExam(world)).exam, name: `Renamed by ${actor}` }),
};
const documentUpdate: RouteCall = {
  scope: 'exam_id',
  prepare: async (world, actor) => {
    const { exam, document } = await freshExam(world, { document: true });
    return call({ exam_id: exam, id: document, exam_content: `Rewritten by ${actor}` });
  },
};
const sessionUpdate: RouteCall = {
  scope: 'id',
  prepare: async (world, actor) => call({ id: await freshSession(world), name: `Renamed by ${actor}` }),
};
const instituteUpdate: RouteCall = {
  scope: 'id',
  prepare: (world, actor) => call({ id: world.instituteA, callback_url: `https://lms.example.org/${actor}` }),
};
const userUpdate: RouteCall = {
  scope: 'institute_id',
  prepare: async (world, actor) =>
    call({ institute_id: world.instituteA, id: await freshUser(world), name: `Renamed by ${actor}` }),
};
const toolProviderRead: RouteCall = {
  scope: 'id',
  prepare: (world) => call({ id: world.toolProvider }),
};
const toolProviderUpdate: RouteCall = {
  scope: 'id',
  prepare: async (world, actor) =>
    call({ id: await freshToolProvider(world), name: unique(`Provider renamed by ${actor}`) }),
};
const ltiResourceUpdate: RouteCall = {
  scope: 'id',
  prepare: async (world, actor) => call({ id: await freshLtiResource(world), title: `Retitled by ${actor}` }),
};

/** How to call every route the matrix knows, keyed `METHOD /path/:param` (relative to /api/v3). */
export const ROUTE_CALLS: Readonly<Record<string, RouteCall>> = {
  // Exams
  'GET /exams': {
    list: { key: 'exams', ids: (world) => [world.exam], ofA: ofInstituteA },
    prepare: () => call({}),
  },
  'POST /exams': { prepare: () => call(examParams()) },
  'GET /exams/:id': { scope: 'id', prepare: (world) => examRead(world) },
  'PATCH /exams/:id': examUpdate,
  'PUT /exams/:id': examUpdate,
  'DELETE /exams/:id': {
    scope: 'id',
    prepare: async (world) => call({ id: (await freshExam(world)).exam }),
  },

  // Deprecated exam endpoints
  'GET /exams/:id/index_students': {
    scope: 'id',
    list: { key: 'students', ids: (world) => [world.session] },
    prepare: (world) => examRead(world),
  },
  'GET /exams/id/show_student': {
    scope: 'student_session_id',
    prepare: (world) => call({ student_session_id: world.session }),
  },
  'GET /exams/:id/show_student': {
    scope: 'id',
    prepare: (world) => call({ id: world.exam, student_session_id: world.session }),
  },
  'POST /exams/:id/add_student': {
    scope: 'id',
    prepare: (world) => call({ id: world.exam, ...sessionParams() }),
  },
  'DELETE /exams/:id/delete_student': {
    scope: 'id',
    prepare: async (world) => call({ id: world.exam, student_session_id: await freshSession(world) }),
  },

  // Documents
  'GET /exams/:exam_id/documents': {
    scope: 'exam_id',
    list: { key: 'documents', ids: (world) => [world.document] },
    prepare: (world) => call({ exam_id: world.exam }),
  },
  'POST /exams/:exam_id/documents': {
    scope: 'exam_id',
    prepare: async (world, actor) =>
      call({ exam_id: (await freshExam(world)).exam, exam_content: `Written by ${actor}` }),
  },
  'GET /exams/:exam_id/documents/:id': {
    scope: 'exam_id',
    prepare: (world) => call({ exam_id: world.exam, id: world.document }),
  },
  'PATCH /exams/:exam_id/documents/:id': documentUpdate,
  'PUT /exams/:exam_id/documents/:id': documentUpdate,
  'DELETE /exams/:exam_id/documents/:id': {
    scope: 'exam_id',
    prepare: async (world) => {
      const { exam, document } = await freshExam(world, { document: true });
      return call({ exam_id: exam, id: document });
    },
  },

  // Attachments, on the exam's document
  'GET /exams/:exam_id/attachments': {
    scope: 'exam_id',
    list: { key: 'attachments', ids: (world) => [world.attachment] },
    prepare: (world) => call({ exam_id: world.exam }),
  },
  'POST /exams/:exam_id/attachments': {
    scope: 'exam_id',
    prepare: (world) => call({ exam_id: world.exam }, png()),
  },
  'GET /exams/:exam_id/attachments/:id': {
    scope: 'exam_id',
    prepare: (world) => call({ exam_id: world.exam, id: world.attachment }),
  },
  'DELETE /exams/:exam_id/attachments/:id': {
    scope: 'exam_id',
    prepare: async (world) => call({ exam_id: world.exam, id: await freshAttachment(world) }),
  },

  // Attachments, on a named document
  'GET /exams/:exam_id/documents/:document_id/attachments': {
    scope: 'exam_id',
    list: { key: 'attachments', ids: (world) => [world.attachment] },
    prepare: (world) => call({ exam_id: world.exam, document_id: world.document }),
  },
  'POST /exams/:exam_id/documents/:document_id/attachments': {
    scope: 'exam_id',
    prepare: (world) => call({ exam_id: world.exam, document_id: world.document }, png()),
  },
  'GET /exams/:exam_id/documents/:document_id/attachments/:id': {
    scope: 'exam_id',
    prepare: (world) => call({ exam_id: world.exam, document_id: world.document, id: world.attachment }),
  },
  'DELETE /exams/:exam_id/documents/:document_id/attachments/:id': {
    scope: 'exam_id',
    prepare: async (world) =>
      call({ exam_id: world.exam, document_id: world.document, id: await freshAttachment(world) }),
  },

  // Student sessions
  'GET /exams/:exam_id/student_sessions': {
    scope: 'exam_id',
    list: { key: 'students', ids: (world) => [world.session, world.ltiSession] },
    prepare: (world) => call({ exam_id: world.exam }),
  },
  'POST /exams/:exam_id/student_sessions': {
    scope: 'exam_id',
    prepare: (world) => call({ exam_id: world.exam, ...sessionParams() }),
  },
  'GET /student_sessions': {
    list: {
      key: 'students',
      ids: (world) => [world.session, world.ltiSession],
      ofA: (item, world) => item.exam_id === world.exam,
    },
    prepare: () => call({}),
  },
  'GET /student_sessions/:id': {
    scope: 'id',
    prepare: (world) => call({ id: world.session }),
  },
  'PATCH /student_sessions/:id': sessionUpdate,
  'PUT /student_sessions/:id': sessionUpdate,
  'DELETE /student_sessions/:id': {
    scope: 'id',
    prepare: async (world) => call({ id: await freshSession(world) }),
  },
  'POST /student_sessions/:id/incidents': {
    scope: 'id',
    prepare: async (world, actor) =>
      call({ id: await freshSession(world), comment: `Seen by ${actor}`, offset_time: 30 }),
  },
  'POST /exams/:exam_id/student_sessions/import': {
    scope: 'exam_id',
    prepare: (world) =>
      call({ exam_id: world.exam, students: JSON.stringify([sessionParams(), sessionParams()]) }),
  },
  'GET /exams/:id/email_preview': {
    scope: 'id',
    prepare: (world) => call({ id: world.exam, kind: 'exam_link', student_session_id: world.session }),
  },
  'GET /exams/:id/email_deliveries': {
    scope: 'id',
    prepare: (world) => call({ id: world.exam, student_session_ids: String(world.session) }),
  },
  'GET /exams/:id/monitor': { scope: 'id', prepare: (world) => examRead(world) },

  // Photos
  'DELETE /student_sessions/:id/id_card': {
    scope: 'id',
    prepare: async (world) => call({ id: await freshSession(world, { photo: 'id_card' }) }),
  },
  'DELETE /student_sessions/:id/face_photo': {
    scope: 'id',
    prepare: async (world) => call({ id: await freshSession(world, { photo: 'face_photo' }) }),
  },
  'GET /student_sessions/:id/report.pdf': { scope: 'id', prepare: (world) => call({ id: world.session }) },
  'GET /student_sessions/:id/face_photo': {
    scope: 'id',
    prepare: (world) => call({ id: world.session }),
  },
  'GET /student_sessions/:id/id_card': {
    scope: 'id',
    prepare: async (world) => call({ id: await freshSession(world, { photo: 'id_card' }) }),
  },

  // What the candidate room stored (an Invigil addition): read like the session
  'GET /student_sessions/:id/files': {
    scope: 'id',
    prepare: (world) => call({ id: world.session }),
  },
  'GET /student_sessions/:id/recordings': {
    scope: 'id',
    prepare: (world) => call({ id: world.session }),
  },
  // Who of the staff looked at the session's data (docs/candidate-data.md): read like the session
  'GET /student_sessions/:id/staff_views': {
    scope: 'id',
    prepare: (world) => call({ id: world.session }),
  },

  // Reviews: a verdict on a fresh session; reviewable names the fixture session by its room token
  'GET /student_sessions/:id/review': {
    scope: 'id',
    prepare: (world) => call({ id: world.session }),
  },
  'PUT /student_sessions/:id/review': {
    scope: 'id',
    prepare: async (world, actor) =>
      call({ id: await freshSession(world), verdict: 'passed', comment: `Judged by ${actor}` }),
  },
  'GET /student_sessions/:id/reviewable': {
    scope: 'id',
    prepare: async (world) => {
      const row = await world.server.app.database.db
        .selectFrom('student_sessions')
        .select('token')
        .where('id', '=', world.session)
        .executeTakeFirstOrThrow();
      return call({ id: row.token });
    },
  },
  'GET /exams/:exam_id/review_queue': {
    scope: 'exam_id',
    prepare: (world) => call({ exam_id: world.exam }),
  },
  // Appeals (docs/appeals.md): a fresh appealed session each; the verdict is the administrator's.
  'GET /student_sessions/:id/appeal': {
    scope: 'id',
    prepare: async (world) => call({ id: await freshAppeal(world) }),
  },
  'PUT /student_sessions/:id/appeal': {
    scope: 'id',
    prepare: async (world, actor) =>
      call({ id: await freshAppeal(world), decision: 'upheld', comment: `Decided by ${actor}` }),
  },
  // Automated flags (docs/automated-flags.md): dismissed and restored by whoever may review
  'POST /student_sessions/:id/incidents/:incident_id/dismiss': {
    scope: 'id',
    prepare: async (world) => {
      const { session, incident } = await freshFlag(world);
      return call({ id: session, incident_id: incident });
    },
  },
  'DELETE /student_sessions/:id/incidents/:incident_id/dismiss': {
    scope: 'id',
    prepare: async (world) => {
      const { session, incident } = await freshFlag(world);
      return call({ id: session, incident_id: incident });
    },
  },

  // Exam staff
  'PUT /exams/:id/add_comanager': {
    scope: 'id',
    prepare: async (world) =>
      call({ id: (await freshExam(world)).exam, comanager_id: world.targetTeacher.id }),
  },
  'DELETE /exams/:id/remove_comanager': {
    scope: 'id',
    prepare: async (world) =>
      call({
        id: (await freshExam(world, { targetComanager: true })).exam,
        comanager_id: world.targetTeacher.id,
      }),
  },
  'POST /student_sessions/:id/assign_proctor': {
    scope: 'id',
    prepare: async (world) => call({ id: await freshSession(world), proctor_id: world.members.proctor.id }),
  },
  'DELETE /student_sessions/:id/assigned_proctor': {
    scope: 'id',
    prepare: async (world) => call({ id: await freshSession(world, { proctor: true }) }),
  },

  // Actions with an email side effect
  'POST /exams/:id/practice_reminders': {
    scope: 'id',
    prepare: async (world) => {
      const { exam } = await freshExam(world);
      await world.server.app.services.studentSessions.create(
        world.members.owner.actor,
        exam,
        sessionParams(),
      );
      return call({ id: exam });
    },
  },
  'POST /exams/:id/send_emails': {
    scope: 'id',
    prepare: async (world) => {
      const { exam } = await freshExam(world);
      await world.server.app.services.studentSessions.create(
        world.members.owner.actor,
        exam,
        sessionParams(),
      );
      return call({ id: exam });
    },
  },
  'POST /student_sessions/:id/end_exam': {
    scope: 'id',
    prepare: async (world) => call({ id: await freshSession(world, { proctor: true }) }),
  },

  // Exam documents zip (managers only); the download reads an exam whose archive is built
  'PUT /exams/:id/generate_exam_documents_zip': { scope: 'id', prepare: (world) => examRead(world) },
  'GET /exams/:id/status_exam_documents_zip': { scope: 'id', prepare: (world) => examRead(world) },
  'GET /exams/:id/download_exam_documents_zip': {
    scope: 'id',
    prepare: async (world) => call({ id: await zippedExam(world) }),
  },

  // Institutes
  'GET /institutes': {
    list: {
      key: 'institutes',
      ids: (world) => [world.instituteA],
      ofA: (item, world) => item.id === world.instituteA,
    },
    prepare: () => call({}),
  },
  'POST /institutes': {
    prepare: () => call({ name: unique('Institute'), short_name: 'NEW' }),
  },
  'GET /institutes/:id': { scope: 'id', prepare: (world) => call({ id: world.instituteA }) },
  'PATCH /institutes/:id': instituteUpdate,
  'PUT /institutes/:id': instituteUpdate,
  'DELETE /institutes/:id': {
    scope: 'id',
    // A superuser may destroy any institute but its own: it gets a fresh one. Anyone else can only
    // aim at its own institute (or, from B, at A), which a correct service refuses.
    prepare: async (world, actor) =>
      call({ id: actor === 'superuser' ? await freshInstitute(world) : world.instituteA }),
  },
  'POST /institutes/:id/webhook_secret': { scope: 'id', prepare: (world) => call({ id: world.instituteA }) },
  'GET /institutes/:id/record_of_processing': {
    scope: 'id',
    prepare: (world) => call({ id: world.instituteA }),
  },
  'GET /institutes/:id/message_overrides': {
    scope: 'id',
    prepare: (world) => call({ id: world.instituteA, locale: 'nl' }),
  },
  'PUT /institutes/:id/message_overrides': {
    scope: 'id',
    // An empty message removes a wording: allowed whether or not one is saved.
    prepare: (world) =>
      call({ id: world.instituteA, locale: 'nl', key: 'candidate.error.server', message: '' }),
  },

  // Users
  'GET /institutes/:institute_id/users': {
    scope: 'institute_id',
    list: { key: 'users', ids: (world) => [world.targetTeacher.id, world.members.owner.id] },
    prepare: (world) => call({ institute_id: world.instituteA }),
  },
  'POST /institutes/:institute_id/users': {
    scope: 'institute_id',
    prepare: (world) =>
      call({
        institute_id: world.instituteA,
        email: `${unique('created')}@example.org`,
        name: 'Created',
        role: 'teacher',
      }),
  },
  'GET /institutes/:institute_id/users/:id': {
    scope: 'institute_id',
    prepare: (world) => call({ institute_id: world.instituteA, id: world.targetTeacher.id }),
  },
  'PATCH /institutes/:institute_id/users/:id': userUpdate,
  'PUT /institutes/:institute_id/users/:id': userUpdate,
  'DELETE /institutes/:institute_id/users/:id': {
    scope: 'institute_id',
    prepare: async (world) => call({ institute_id: world.instituteA, id: await freshUser(world) }),
  },

  // Tool providers
  'GET /tool_providers': {
    list: { key: 'tool_providers', ids: (world) => [world.toolProvider], ofA: ofInstituteA },
    prepare: () => call({}),
  },
  'POST /tool_providers': { prepare: () => call(toolProviderParams()) },
  'GET /tool_providers/:id': toolProviderRead,
  'GET /tool_provider/:id': toolProviderRead,
  'PATCH /tool_providers/:id': toolProviderUpdate,
  'PUT /tool_providers/:id': toolProviderUpdate,
  'DELETE /tool_providers/:id': {
    scope: 'id',
    prepare: async (world) => call({ id: await freshToolProvider(world) }),
  },

  // LTI resources
  'GET /lti_resources': {
    list: { key: 'lti_resources', ids: (world) => [world.ltiResource], ofA: ofInstituteA },
    prepare: () => call({}),
  },
  'POST /lti_resources': {
    scope: 'tool_provider_id',
    prepare: (world) =>
      call({ tool_provider_id: world.toolProvider, resource_link_id: unique('link'), title: 'New' }),
  },
  'GET /lti_resources/:id': {
    scope: 'id',
    prepare: (world) => call({ id: world.ltiResource }),
  },
  'PATCH /lti_resources/:id': ltiResourceUpdate,
  'PUT /lti_resources/:id': ltiResourceUpdate,
  'DELETE /lti_resources/:id': {
    scope: 'id',
    prepare: async (world) => call({ id: await freshLtiResource(world) }),
  },
  'GET /exams/:id/show_lti_student': {
    scope: 'id',
    prepare: (world) => call({ id: world.exam, ...world.lms }),
  },

  // Identity providers
  'GET /identity_providers': {
    list: {
      key: 'identity_providers',
      ids: (world) => [world.identityProvider],
      shared: (world) => [world.globalIdentityProvider],
      ofA: ofInstituteA,
    },
    prepare: () => call({}),
  },

  // The audit log
  'GET /audit_events': {
    list: { key: 'audit_events', ids: (world) => [world.auditEvent], ofA: ofInstituteA },
    // The matrix's own writes add events by the hundred: read from the fixture's event backwards.
    prepare: (world) => call({ filter: JSON.stringify({ id: { lte: world.auditEvent } }) }),
  },

  // The outbox (administrators and superusers)
  'GET /outbox': {
    list: { key: 'messages', ids: (world) => [worldEmails.get(world) ?? 0], ofA: ofInstituteA },
    // Emails written by other calls come later: read from the fixture's email backwards.
    prepare: async (world) => call({ filter: JSON.stringify({ id: { lte: await worldEmail(world) } }) }),
  },
  'GET /outbox/:id': { scope: 'id', prepare: async (world) => call({ id: await worldEmail(world) }) },
  'POST /outbox/:id/redeliver': {
    scope: 'id',
    prepare: async (world) => call({ id: await freshEmail(world, { held: true }) }),
  },

  // Retention (docs/retention.md): legal holds and the purge log, administrators only
  'GET /student_sessions/:id/legal_hold': { scope: 'id', prepare: (world) => call({ id: world.session }) },
  'PUT /student_sessions/:id/legal_hold': {
    scope: 'id',
    prepare: async (world, actor) =>
      call({ id: await freshSession(world), hold: true, reason: `Held by ${actor}` }),
  },
  'GET /student_sessions/:id/purges': { scope: 'id', prepare: (world) => call({ id: world.session }) },
  'GET /student_sessions/:id/retention': { scope: 'id', prepare: (world) => call({ id: world.session }) },
  'GET /institutes/:id/retention_policies': {
    scope: 'id',
    prepare: (world) => call({ id: world.instituteA }),
  },
  'PUT /institutes/:id/retention_policies': {
    scope: 'id',
    prepare: (world) => call({ id: world.instituteA, upload_days: 90 }),
  },
  'GET /purges': {
    list: { key: 'purges', ids: (world) => [worldPurges.get(world) ?? 0], ofA: ofInstituteA },
    prepare: async (world) => call({ filter: JSON.stringify({ id: { eq: await worldPurge(world) } }) }),
  },

  // Live proctoring (docs/api-live.md): whoever may end the session; `proctor` is assigned to it
  'GET /student_sessions/:id/messages': {
    scope: 'id',
    prepare: async (world) => call({ id: await freshLiveSession(world) }),
  },
  'POST /student_sessions/:id/messages': {
    scope: 'id',
    prepare: async (world, actor) => call({ id: await freshLiveSession(world), body: `Hello from ${actor}` }),
  },
  'POST /student_sessions/:id/admit': {
    scope: 'id',
    prepare: async (world) => call({ id: await freshLiveSession(world, { status: 'in_setup' }) }),
  },
  'POST /student_sessions/:id/pause': {
    scope: 'id',
    prepare: async (world) => call({ id: await freshLiveSession(world, { status: 'exam_started' }) }),
  },
  'POST /student_sessions/:id/resume': {
    scope: 'id',
    prepare: async (world) =>
      call({ id: await freshLiveSession(world, { status: 'exam_started', paused: true }) }),
  },

  // Invitations (the users' administrators)
  'POST /institutes/:institute_id/users/:id/invite': {
    scope: 'institute_id',
    prepare: (world) => call({ institute_id: world.instituteA, id: world.targetTeacher.id }),
  },
};

// ---- Sending and classing ----

/** Signs and sends a call as `member` (multipart when it carries files). */
export function send(member: Member, route: string, call: Call): Promise<HttpAnswer> {
  const [method = '', template = ''] = route.split(' ');
  return call.files === undefined
    ? member.client.v3(method, template, { ...call.params })
    : v3Multipart(member.client, method, template, { ...call.params }, call.files);
}

/** The V3 routes the server documents, as `METHOD /path/:param` relative to /api/v3. */
export async function servedRoutes(baseUrl: string): Promise<string[]> {
  const answer = await httpRequest({ url: `${baseUrl}/api/openapi.json` });
  const body = answer.json;
  const paths = isObject(body) ? body.paths : undefined;
  if (answer.status !== 200 || !isObject(paths)) throw new Error(`no OpenAPI document: ${answer.status}`);
  const routes: string[] = [];
  for (const [path, item] of Object.entries(paths)) {
    if (!path.startsWith('/api/v3/') || !isObject(item)) continue;
    const template = path.slice('/api/v3'.length).replace(/\{([^}]+)\}/g, ':$1');
    for (const method of Object.keys(item)) {
      if (['get', 'post', 'put', 'patch', 'delete'].includes(method)) {
        routes.push(`${method.toUpperCase()} ${template}`);
      }
    }
  }
  return routes;
}

/** The result of one cell: the outcome seen, and what was answered when it is not the expected one. */
export interface Cell {
  readonly route: string;
  readonly actor: ActorName;
  readonly expected: Outcome;
  readonly actual: string;
  readonly detail: string;
}

function describeAnswer(answer: HttpAnswer): string {
  return `${answer.status} ${answer.text.length > 400 ? `${answer.text.slice(0, 400)}…` : answer.text}`;
}

/**
 * The missing-id answer's body and headers as they would read for the real id: MISSING_ID, which
 * appears only where the call named it, written as `real`. Headers that vary per exchange (or with
 * the body's length) are left out. A hidden answer equals this, byte for byte.
 */
function asIfReal(missing: HttpAnswer, real: Scalar): { body: Buffer; headers: string } {
  const write = (text: string) => text.split(String(MISSING_ID)).join(String(real));
  return { body: Buffer.from(write(missing.text), 'utf8'), headers: write(headerLines(missing)) };
}

/** Headers that vary per exchange, or with the length of the id written in the body. */
const EXCHANGE_HEADERS = new Set(['date', 'content-length', 'connection', 'keep-alive']);

/** The answer's other headers as sorted `name: value` lines. */
function headerLines(answer: HttpAnswer): string {
  return Object.entries(answer.headers)
    .filter(([name]) => !EXCHANGE_HEADERS.has(name))
    .map(([name, value]) => `${name}: ${String(value)}`)
    .sort()
    .join('\n');
}

/**
 * Runs one cell: sends the call, and for a 404 the same call naming a missing record, then classes
 * what came back. Returns the cell with its actual outcome (an outcome name, or a description).
 */
export async function runCell(
  world: World,
  route: string,
  actor: ActorName,
  expected: Outcome,
  prepared: Call,
): Promise<Cell> {
  const spec = ROUTE_CALLS[route];
  if (spec === undefined) return { route, actor, expected, actual: 'no call defined', detail: '' };
  const member = world.members[actor];
  const answer = await send(member, route, prepared);
  const cell = (actual: string, detail = describeAnswer(answer)): Cell => ({
    route,
    actor,
    expected,
    actual,
    detail,
  });

  if (answer.status >= 200 && answer.status <= 299) {
    if (spec.list === undefined) return cell('ok');
    const items = listIn(answer, spec.list.key);
    if (items === undefined) return cell(`2xx without a ${spec.list.key} list`);
    const ids = new Set(items.map((item) => item.id));
    const wanted = spec.list.ids(world);
    const found = wanted.filter((id) => ids.has(id));
    const isOutsider = B_ACTORS.includes(actor);
    const ofA = spec.list.ofA;
    const leaked = isOutsider && ofA !== undefined ? items.filter((item) => ofA(item, world)) : [];
    const shared = spec.list.shared?.(world) ?? [];
    if (shared.some((id) => !ids.has(id)))
      return cell(`2xx without the shared records ${JSON.stringify(shared)}`);
    if (found.length === 0 && leaked.length === 0) return cell('omitted');
    if (found.length === wanted.length && leaked.length === 0) return cell('listed');
    return cell(
      `2xx listing ${found.length} of ${wanted.length} of A's records ${JSON.stringify(wanted)}` +
        (leaked.length > 0 ? ` and ${leaked.length} other records of A` : ''),
    );
  }
  if (answer.status === 403) {
    return answer.text === NOT_AUTHORIZED_TEXT ? cell('forbidden') : cell('403 with another body');
  }
  if (answer.status === 422) return cell('invalid');
  if (answer.status !== 404) return cell(`status ${answer.status}`);

  if (spec.scope === undefined) return cell('404 on a route without a scope parameter');
  const real = prepared.params[spec.scope];
  if (real === undefined || real === null) return cell(`404, scope parameter ${spec.scope} not sent`);
  const missing = await send(member, route, {
    ...prepared,
    params: { ...prepared.params, [spec.scope]: MISSING_ID },
  });
  const both = `real: ${describeAnswer(answer)} | missing ${spec.scope}: ${describeAnswer(missing)}`;
  if (missing.status !== 404) return cell(`404, but ${missing.status} for a missing ${spec.scope}`, both);
  const twin = asIfReal(missing, real);
  if (!twin.body.equals(answer.bytes)) return cell('404 whose body differs from the missing-id 404', both);
  if (twin.headers !== headerLines(answer)) {
    return cell(
      '404 whose headers differ from the missing-id 404',
      `${headerLines(answer)} | ${twin.headers}`,
    );
  }
  return cell('hidden', both);
}

/**
 * Everything of institute A its administrator can read, with expiring addresses left out: every
 * exam (deleted too) with its documents and attachments, every session (archived too) with its
 * incidents, the institute, its users, tool providers, LTI resources and identity providers.
 */
export async function snapshotOfA(world: World): Promise<unknown> {
  const admin = world.members.administrator;
  const read = async (template: string, params: Record<string, Scalar> = {}): Promise<unknown> => {
    const answer = await admin.client.v3('GET', template, params);
    if (answer.status !== 200) throw new Error(`${template}: ${describeAnswer(answer)}`);
    return withoutAddresses(answer.json);
  };
  const exams = await read('/exams', {
    filter: JSON.stringify({ status: { in: ['draft', 'open', 'closed', 'deleted'] } }),
  });
  const examList = isObject(exams) && Array.isArray(exams.exams) ? exams.exams.filter(isObject) : [];
  const underExams: Record<string, unknown> = {};
  for (const exam of examList) {
    if (exam.status === 'deleted' || typeof exam.id !== 'number') continue;
    underExams[String(exam.id)] = {
      documents: await read('/exams/:exam_id/documents', { exam_id: exam.id }),
      attachments: await read('/exams/:exam_id/attachments', { exam_id: exam.id }),
    };
  }
  return {
    exams,
    underExams,
    sessions: await read('/student_sessions', {
      filter: JSON.stringify({ archived: { in: [true, false] } }),
    }),
    institute: await read('/institutes/:id', { id: world.instituteA }),
    users: await read('/institutes/:institute_id/users', { institute_id: world.instituteA }),
    toolProviders: await read('/tool_providers'),
    ltiResources: await read('/lti_resources'),
    identityProviders: await read('/identity_providers'),
  };
}

/**
 * The value with every `url` field (an expiring, freshly signed address), every `paused_seconds`
 * (which grows while a session's clock is paused) and every `deadline_at` (which moves on with the
 * time while it is paused) removed.
 */
function withoutAddresses(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutAddresses);
  if (!isObject(value)) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => key !== 'url' && key !== 'paused_seconds' && key !== 'deadline_at')
      .map(([key, item]) => [key, withoutAddresses(item)]),
  );
}

// ---- B's own routes naming A's records ----

/**
 * A call by an actor of B on a route B may use, naming one of A's records in a parameter (`scope`):
 * it must answer exactly as when that parameter names no record at all.
 */
export interface CrossProbe {
  readonly name: string;
  readonly actor: ActorName;
  readonly route: string;
  readonly scope: string;
  prepare(world: World): Call | Promise<Call>;
}

const probe = (
  actor: ActorName,
  route: string,
  scope: string,
  prepare: (world: World) => Call | Promise<Call>,
): CrossProbe => ({ name: `${route} by ${actor} with A's ${scope}`, actor, route, scope, prepare });

export const CROSS_PROBES: readonly CrossProbe[] = [
  probe('bTeacher', 'GET /exams/:exam_id/documents/:id', 'id', (w) =>
    call({ exam_id: w.b.exam, id: w.document }),
  ),
  probe('bTeacher', 'PATCH /exams/:exam_id/documents/:id', 'id', (w) =>
    call({ exam_id: w.b.exam, id: w.document, exam_content: 'Overwritten from B' }),
  ),
  probe('bTeacher', 'GET /exams/:exam_id/attachments/:id', 'id', (w) =>
    call({ exam_id: w.b.exam, id: w.attachment }),
  ),
  probe('bTeacher', 'GET /exams/:exam_id/documents/:document_id/attachments', 'document_id', (w) =>
    call({ exam_id: w.b.exam, document_id: w.document }),
  ),
  probe('bTeacher', 'POST /exams/:exam_id/documents/:document_id/attachments', 'document_id', (w) =>
    call({ exam_id: w.b.exam, document_id: w.document }, png()),
  ),
  probe(
    'bTeacher',
    'DELETE /exams/:exam_id/documents/:document_id/attachments/:id',
    'document_id',
    async (w) => call({ exam_id: w.b.exam, document_id: w.document, id: await freshAttachment(w) }),
  ),
  probe('bTeacher', 'GET /exams/:id/show_student', 'student_session_id', (w) =>
    call({ id: w.b.exam, student_session_id: w.session }),
  ),
  probe('bTeacher', 'DELETE /exams/:id/delete_student', 'student_session_id', async (w) =>
    call({ id: w.b.exam, student_session_id: await freshSession(w) }),
  ),
  probe('bTeacher', 'PUT /exams/:id/add_comanager', 'comanager_id', (w) =>
    call({ id: w.b.exam, comanager_id: w.targetTeacher.id }),
  ),
  probe('bTeacher', 'POST /student_sessions/:id/assign_proctor', 'proctor_id', (w) =>
    call({ id: w.b.session, proctor_id: w.members.proctor.id }),
  ),
  probe('bTeacher', 'POST /exams/:exam_id/student_sessions', 'lti_resource_id', (w) =>
    call({ exam_id: w.b.exam, ...sessionParams(), lti_resource_id: w.ltiResource }),
  ),
  probe('bTeacher', 'PATCH /student_sessions/:id', 'lti_resource_id', (w) =>
    call({ id: w.b.session, lti_resource_id: w.ltiResource }),
  ),
  probe('bAdministrator', 'GET /institutes/:institute_id/users/:id', 'id', (w) =>
    call({ institute_id: w.instituteB, id: w.targetTeacher.id }),
  ),
  probe('bAdministrator', 'PATCH /institutes/:institute_id/users/:id', 'id', async (w) =>
    call({ institute_id: w.instituteB, id: await freshUser(w), name: 'Renamed from B' }),
  ),
  probe('bAdministrator', 'DELETE /institutes/:institute_id/users/:id', 'id', async (w) =>
    call({ institute_id: w.instituteB, id: await freshUser(w) }),
  ),
  probe('bAdministrator', 'POST /institutes/:institute_id/users', 'identity_provider_id', (w) =>
    call({
      institute_id: w.instituteB,
      email: `${unique('cross')}@example.org`,
      name: 'Cross',
      role: 'teacher',
      identity_provider_id: w.identityProvider,
    }),
  ),
  probe('bAdministrator', 'POST /tool_providers', 'institute_id', (w) =>
    call({ ...toolProviderParams(), institute_id: w.instituteA }),
  ),
  probe('bAdministrator', 'POST /lti_resources', 'exam_id', (w) =>
    call({ tool_provider_id: w.b.toolProvider, resource_link_id: unique('link'), exam_id: w.exam }),
  ),
  probe('bAdministrator', 'PATCH /lti_resources/:id', 'tool_provider_id', (w) =>
    call({ id: w.b.ltiResource, tool_provider_id: w.toolProvider }),
  ),
  probe('bAdministrator', 'PATCH /lti_resources/:id', 'exam_id', (w) =>
    call({ id: w.b.ltiResource, exam_id: w.exam }),
  ),
];

/**
 * Runs a cross probe: the call naming A's record, then the same naming a missing one. The cell is
 * `hidden` when both are the same 4xx answer (the id substituted); the actual outcome says otherwise.
 */
export async function runProbe(world: World, probe: CrossProbe, prepared: Call): Promise<Cell> {
  const member = world.members[probe.actor];
  const answer = await send(member, probe.route, prepared);
  const missing = await send(member, probe.route, {
    ...prepared,
    params: { ...prepared.params, [probe.scope]: MISSING_ID },
  });
  const real = prepared.params[probe.scope] ?? '';
  const detail = `real: ${describeAnswer(answer)} | missing ${probe.scope}: ${describeAnswer(missing)}`;
  let actual = 'hidden';
  if (answer.status !== missing.status || answer.status < 400 || answer.status > 499) {
    actual = `${answer.status} where a missing ${probe.scope} gets ${missing.status}`;
  } else if (!asIfReal(missing, real).body.equals(answer.bytes)) {
    actual = `${answer.status} whose body differs from the missing-id answer`;
  } else if (asIfReal(missing, real).headers !== headerLines(answer)) {
    actual = `${answer.status} whose headers differ from the missing-id answer`;
  }
  return { route: probe.name, actor: probe.actor, expected: 'hidden', actual, detail };
}
