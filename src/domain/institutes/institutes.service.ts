import type { Db } from '../../db/database.ts';
import { isUniqueViolation } from '../../db/unique.ts';
import type { Clock } from '../clock.ts';
import { Taken } from '../errors.ts';
import { type Params, requiredString } from '../input.ts';
import type { Institute } from './institute.ts';
import { insertInstitute } from './institutes.repository.ts';

export interface InstitutesService {
  /** Creates an institute from `name` and `short_name`. Throws ParamMissing, or Taken on a used name. */
  create(params: Params): Promise<Institute>;
}

export function createInstitutesService(deps: { db: Db; clock: Clock }): InstitutesService {
  return {
    async create(params) {
      const name = requiredString(params, 'name');
      const shortName = requiredString(params, 'short_name');
      try {
        return await insertInstitute(deps.db, { name, shortName }, deps.clock.now());
      } catch (error) {
        if (isUniqueViolation(error)) throw new Taken('name');
        throw error;
      }
    },
  };
}
