import type { Db } from '../../db/database.ts';
import { isForeignKeyViolation, isUniqueViolation } from '../../db/unique.ts';
import { type Actor, canAdministerInstitutes, instituteStanding } from '../access.ts';
import type { Clock } from '../clock.ts';
import { DependentExists, Forbidden, NotFound, Taken } from '../errors.ts';
import type { FilesService } from '../files/files.service.ts';
import { parseId } from '../ids.ts';
import type { Params } from '../input.ts';
import { type Page, parseListQuery } from '../listing.ts';
import {
  INSTITUTE_LIST_FIELDS,
  type Institute,
  type InstituteAttributes,
  newInstituteDefaults,
  readInstituteChanges,
} from './institute.ts';
import {
  deleteInstituteTree,
  findInstitute,
  insertInstitute,
  listInstitutes,
  updateInstitute,
} from './institutes.repository.ts';

export interface InstitutesService {
  /**
   * Creates an institute from `name` and `short_name` (and any optional setting sent), with no
   * access check: for the CLI and tests. Returns it; throws ParamMissing, Invalid, or Taken on a used name.
   */
  create(params: Params): Promise<Institute>;
  /** Creates an institute for a superuser. Returns it; throws Forbidden, ParamMissing, Invalid or Taken. */
  createAs(actor: Actor, params: Params): Promise<Institute>;
  /** One page of every institute, for a superuser. Throws Forbidden or Invalid (filter, sort, page). */
  list(actor: Actor, params: Params): Promise<Page<Institute>>;
  /**
   * The institute `id` names, for its administrators and superusers. Throws NotFound (missing or
   * another institute) or Forbidden (a member of it who may not read its settings).
   */
  get(actor: Actor, id: string | number): Promise<Institute>;
  /**
   * The name of the actor's own institute, which every member may know (the console's header shows
   * it; the settings stay for administrators). Returns it, or '' when the institute is gone.
   */
  ownName(actor: Actor): Promise<string>;
  /** Applies the sent settings. Returns the institute; throws NotFound, Forbidden, ParamMissing, Invalid or Taken. */
  update(actor: Actor, id: string | number, params: Params): Promise<Institute>;
  /**
   * Destroys the institute with everything in it, in one transaction; its stored files go after the
   * commit. Throws NotFound (missing, or another institute for a non-superuser), Forbidden (not a
   * superuser) or DependentExists (the caller's own institute).
   */
  destroy(actor: Actor, id: string | number): Promise<void>;
}

/** How many stored files are released per call to the files service (keeps `in (...)` lists short). */
const FILE_BATCH = 500;

/**
 * Builds the institutes service. `files` removes the stored files of a destroyed institute; without
 * it their records and objects are left behind (unreferenced, for a later sweep).
 */
export function createInstitutesService(deps: {
  db: Db;
  clock: Clock;
  files?: Pick<FilesService, 'remove'>;
}): InstitutesService {
  const { db, clock, files } = deps;

  async function insert(params: Params): Promise<Institute> {
    const changes = readInstituteChanges(params, 'create');
    const attributes = { ...newInstituteDefaults(), ...changes } as InstituteAttributes;
    try {
      return await insertInstitute(db, attributes, clock.now());
    } catch (error) {
      if (isUniqueViolation(error)) throw new Taken('name');
      throw error;
    }
  }

  /** The institute when the actor's standing towards it allows `need`; NotFound or Forbidden otherwise. */
  async function standingFor(actor: Actor, id: string | number, need: 'read' | 'manage'): Promise<Institute> {
    const numeric = parseId(id);
    const institute = numeric === undefined ? undefined : await findInstitute(db, numeric);
    if (institute === undefined) throw new NotFound('Institute', id);
    const standing = instituteStanding(actor, institute.id);
    if (standing === 'hidden') throw new NotFound('Institute', id);
    if (standing === 'forbidden' || (need === 'manage' && standing !== 'manage')) throw new Forbidden();
    return institute;
  }

  async function releaseFiles(fileIds: readonly number[]): Promise<void> {
    if (files === undefined) return;
    for (let start = 0; start < fileIds.length; start += FILE_BATCH) {
      await files.remove(fileIds.slice(start, start + FILE_BATCH));
    }
  }

  return {
    create: insert,

    async createAs(actor, params) {
      if (!canAdministerInstitutes(actor)) throw new Forbidden();
      return insert(params);
    },

    async list(actor, params) {
      if (!canAdministerInstitutes(actor)) throw new Forbidden();
      return listInstitutes(db, parseListQuery(params, INSTITUTE_LIST_FIELDS));
    },

    get: (actor, id) => standingFor(actor, id, 'read'),

    async ownName(actor) {
      return (await findInstitute(db, actor.instituteId))?.name ?? '';
    },

    async update(actor, id, params) {
      const institute = await standingFor(actor, id, 'manage');
      const changes = readInstituteChanges(params, 'update');
      let saved: Institute | undefined;
      try {
        saved = await updateInstitute(db, institute.id, changes, clock.now());
      } catch (error) {
        if (isUniqueViolation(error)) throw new Taken('name');
        throw error;
      }
      if (saved === undefined) throw new NotFound('Institute', id);
      return saved;
    },

    async destroy(actor, id) {
      // Visibility first, so another institute answers 404 to a non-superuser, as if it did not exist.
      const numeric = parseId(id);
      const known = numeric === undefined ? undefined : await findInstitute(db, numeric);
      if (known === undefined || instituteStanding(actor, known.id) === 'hidden') {
        throw new NotFound('Institute', id);
      }
      if (!canAdministerInstitutes(actor)) throw new Forbidden();
      if (known.id === actor.instituteId) {
        throw new DependentExists('Cannot delete the institute the calling user belongs to');
      }
      let fileIds: number[] | undefined;
      try {
        fileIds = await db.transaction().execute((trx) => deleteInstituteTree(trx, known.id));
      } catch (error) {
        if (isForeignKeyViolation(error)) {
          throw new DependentExists('Cannot delete record because dependent exams exist');
        }
        throw error;
      }
      if (fileIds === undefined) throw new NotFound('Institute', id);
      // After the commit: a rolled-back destroy must not lose files its rows still point at.
      await releaseFiles(fileIds);
    },
  };
}
