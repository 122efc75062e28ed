import type { Db } from '../../db/database.ts';
import type { ServerKeys } from '../../security/keys.ts';
import { type Actor, configStanding } from '../access.ts';
import type { Clock } from '../clock.ts';
import { Forbidden, Invalid, NotFound, NotFoundMessage, Taken } from '../errors.ts';
import { findVisibleExam } from '../exams/exam-access.ts';
import { findExam } from '../exams/exams.repository.ts';
import { parseId } from '../ids.ts';
import type { Params } from '../input.ts';
import { type Page, parseListQuery } from '../listing.ts';
import type { StudentSession } from '../student-sessions/student-session.ts';
import { findStudentSessionByLms } from '../student-sessions/student-sessions.repository.ts';
import {
  configListScope,
  findManageableToolProvider,
  requireConfigManager,
} from '../tool-providers/tool-provider-access.ts';
import { findToolProvider } from '../tool-providers/tool-providers.repository.ts';
import {
  LTI_RESOURCE_LIST_FIELDS,
  type LtiResource,
  type LtiResourceChanges,
  readLtiResourceChanges,
  readLtiStudentQuery,
} from './lti-resource.ts';
import {
  deleteLtiResource,
  findLtiResource,
  insertLtiResource,
  isResourceLinkTaken,
  listLtiResources,
  type LtiResourceColumns,
  updateLtiResource,
} from './lti-resources.repository.ts';

/**
 * LTI-resource use cases, and the LMS's lookup of a student session. Resources are institute
 * configuration: administrators manage them, teachers and auditors read them, other roles may not
 * (configStanding). Ids are taken as sent, so a 404 names them as the client wrote them.
 */
export interface LtiResourcesService {
  /** One page of the resources the actor may read, filtered and sorted by `params`. Throws Forbidden or Invalid. */
  list(actor: Actor, params: Params): Promise<Page<LtiResource>>;
  /** Returns a resource the actor may read. Throws NotFound (Lti Resource) or Forbidden. */
  get(actor: Actor, id: string | number): Promise<LtiResource>;
  /**
   * Creates a resource of a tool provider (`tool_provider_id`, `resource_link_id` required;
   * `exam_id`, `context_id`, `title`) in the provider's institute. Returns it; throws Forbidden,
   * ParamMissing, NotFound (Tool Provider, Exam), Invalid, or Taken on `resource_link_id` when the
   * provider already has that link.
   */
  create(actor: Actor, params: Params): Promise<LtiResource>;
  /** Applies the sent changes. Returns the resource as saved; throws as get and create do. */
  update(actor: Actor, id: string | number, params: Params): Promise<LtiResource>;
  /** Deletes the resource (sessions that came through it keep their LMS ids). Throws NotFound or Forbidden. */
  destroy(actor: Actor, id: string | number): Promise<void>;
  /**
   * The session of a visible exam that an LMS knows by `student_lms_id` and `resource_link_id`
   * (and `context_id` when sent): the latest attempt, one not archived first. Returns it; throws
   * NotFound (Exam), ParamMissing, or NotFoundMessage naming the LMS ids.
   */
  findStudent(actor: Actor, examId: string | number, params: Params): Promise<StudentSession>;
}

/**
 * Builds the LTI-resource use cases over the database and the clock (`keys` is wired for the LTI
 * launch that verifies with a provider's secret). Returns the service; throws nothing.
 */
export function createLtiResourcesService(deps: {
  db: Db;
  clock: Clock;
  keys: ServerKeys;
}): LtiResourcesService {
  const { db, clock } = deps;

  async function visible(actor: Actor, id: string | number) {
    const numeric = parseId(id);
    const resource = numeric === undefined ? undefined : await findLtiResource(db, numeric);
    if (resource === undefined) throw new NotFound('Lti Resource', id);
    const standing = configStanding(actor, resource.instituteId);
    if (standing === 'hidden') throw new NotFound('Lti Resource', id);
    if (standing === 'forbidden') throw new Forbidden();
    return { resource, standing };
  }

  async function manageable(actor: Actor, id: string | number): Promise<LtiResource> {
    const { resource, standing } = await visible(actor, id);
    if (standing !== 'manage') throw new Forbidden();
    return resource;
  }

  /** The exam `examId` names, which must be one of the institute's. Returns its id, or null to unlink. */
  async function examFor(
    actor: Actor,
    instituteId: number,
    examId: string | number | null,
  ): Promise<number | null> {
    if (examId === null) return null;
    const exam = await findVisibleExam(db, actor, examId);
    if (exam.instituteId !== instituteId) {
      throw new Invalid('exam_id', "must be an exam of the tool provider's institute");
    }
    return exam.id;
  }

  /**
   * The columns of a resource once `changes` apply to `current` (undefined on create). Throws
   * NotFound (Tool Provider, Exam), Forbidden, Invalid or Taken.
   */
  async function columnsAfter(
    actor: Actor,
    current: LtiResource | undefined,
    changes: LtiResourceChanges,
  ): Promise<LtiResourceColumns> {
    const provider =
      changes.toolProviderId === undefined
        ? undefined
        : await findManageableToolProvider(db, actor, changes.toolProviderId);
    const instituteId = provider?.instituteId ?? current?.instituteId;
    const toolProviderId = provider?.id ?? current?.toolProviderId;
    const resourceLinkId = changes.resourceLinkId ?? current?.resourceLinkId;
    if (instituteId === undefined || toolProviderId === undefined || resourceLinkId === undefined) {
      throw new Error('an LTI resource needs a provider and a resource link id');
    }
    let examId = current?.examId ?? null;
    if (changes.examId !== undefined) {
      examId = await examFor(actor, instituteId, changes.examId);
    } else if (examId !== null && instituteId !== current?.instituteId) {
      // The resource moves to a provider of another institute (a superuser's change) with its exam.
      const exam = await findExam(db, examId);
      if (exam?.instituteId !== instituteId) {
        throw new Invalid('exam_id', "must be an exam of the tool provider's institute");
      }
    }
    if (await isResourceLinkTaken(db, toolProviderId, resourceLinkId, current?.id ?? 0)) {
      throw new Taken('resource_link_id');
    }
    return {
      instituteId,
      toolProviderId,
      examId,
      resourceLinkId,
      contextId: changes.contextId !== undefined ? changes.contextId : (current?.contextId ?? null),
      title: changes.title !== undefined ? changes.title : (current?.title ?? null),
    };
  }

  return {
    async list(actor, params) {
      return listLtiResources(db, configListScope(actor), parseListQuery(params, LTI_RESOURCE_LIST_FIELDS));
    },

    async get(actor, id) {
      return (await visible(actor, id)).resource;
    },

    async create(actor, params) {
      requireConfigManager(actor);
      const columns = await columnsAfter(actor, undefined, readLtiResourceChanges(params, 'create'));
      try {
        return await insertLtiResource(db, columns, clock.now());
      } catch (error) {
        // Its provider was deleted between the lookup and the insert.
        if ((await findToolProvider(db, columns.toolProviderId)) === undefined) {
          throw new NotFound('Tool Provider', columns.toolProviderId);
        }
        throw error;
      }
    },

    async update(actor, id, params) {
      const resource = await manageable(actor, id);
      const columns = await columnsAfter(actor, resource, readLtiResourceChanges(params, 'update'));
      const saved = await updateLtiResource(db, resource.id, columns, clock.now());
      if (saved === undefined) throw new NotFound('Lti Resource', id);
      return saved;
    },

    async destroy(actor, id) {
      const resource = await manageable(actor, id);
      await deleteLtiResource(db, resource.id);
    },

    async findStudent(actor, examId, params) {
      const exam = await findVisibleExam(db, actor, examId);
      const query = readLtiStudentQuery(params);
      const session = await findStudentSessionByLms(db, exam.id, query);
      if (session === undefined) {
        throw new NotFoundMessage(
          `Couldn't find Student Session with 'id'=${query.lmsUserId} and 'resource_link_id'=${query.resourceLinkId}`,
        );
      }
      return session;
    },
  };
}
