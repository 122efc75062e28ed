import type { Db } from '../../db/database.ts';
import { type Actor, configStanding, isSuperuser, type Standing } from '../access.ts';
import { Forbidden, NotFound } from '../errors.ts';
import { parseId } from '../ids.ts';
import { type Params, shownValue } from '../input.ts';
import { findInstitute } from '../institutes/institutes.repository.ts';
import type { ConfigListScope, ToolProvider } from './tool-provider.ts';
import { findToolProvider } from './tool-providers.repository.ts';

/**
 * The provider `id` names, when the actor may read it. Returns it with the actor's standing
 * (`read` or `manage`); throws NotFound when it is missing or in another institute (the two answer
 * alike), Forbidden when the actor's role may not read institute configuration.
 */
export async function findVisibleToolProvider(
  db: Db,
  actor: Actor,
  id: string | number,
): Promise<{ provider: ToolProvider; standing: Extract<Standing, 'read' | 'manage'> }> {
  const numeric = parseId(id);
  const provider = numeric === undefined ? undefined : await findToolProvider(db, numeric);
  if (provider === undefined) throw new NotFound('Tool Provider', id);
  const standing = configStanding(actor, provider.instituteId);
  if (standing === 'hidden') throw new NotFound('Tool Provider', id);
  if (standing === 'forbidden') throw new Forbidden();
  return { provider, standing };
}

/**
 * The provider `id` names, when the actor may change it. Returns it; throws NotFound as
 * findVisibleToolProvider does, or Forbidden when the actor may read it but not change it.
 */
export async function findManageableToolProvider(
  db: Db,
  actor: Actor,
  id: string | number,
): Promise<ToolProvider> {
  const { provider, standing } = await findVisibleToolProvider(db, actor, id);
  if (standing !== 'manage') throw new Forbidden();
  return provider;
}

/**
 * The configuration an actor may list: a superuser every institute's, anyone else its own
 * institute's. Returns the scope; throws Forbidden when the actor's role may not read it.
 */
export function configListScope(actor: Actor): ConfigListScope {
  if (isSuperuser(actor)) return { kind: 'all' };
  if (configStanding(actor, actor.instituteId) === 'forbidden') throw new Forbidden();
  return { kind: 'institute', instituteId: actor.instituteId };
}

/**
 * The institute a new tool provider goes to: the actor's own, or the `institute_id` parameter when
 * sent (a superuser's choice; anyone else may only name its own). Returns its id; throws NotFound
 * (Institute) for an institute that does not exist or lies outside the actor's scope, Forbidden
 * when the actor may not change that institute's configuration.
 */
export async function configInstituteForWrite(db: Db, actor: Actor, params: Params): Promise<number> {
  const raw = params.institute_id;
  const sent = raw !== undefined && raw !== null && raw !== '';
  const instituteId = sent ? parseId(raw) : actor.instituteId;
  const shown = shownValue(raw);
  if (instituteId === undefined) throw new NotFound('Institute', shown);
  const standing = configStanding(actor, instituteId);
  if (standing === 'hidden') throw new NotFound('Institute', shown);
  if (standing !== 'manage') throw new Forbidden();
  if (instituteId !== actor.instituteId && (await findInstitute(db, instituteId)) === undefined) {
    throw new NotFound('Institute', shown);
  }
  return instituteId;
}

/**
 * Throws Forbidden unless the actor may change institute configuration at all: a superuser, or an
 * actor managing its own institute's (nobody else manages another institute's). Lets a write
 * answer 403 before it validates parameters.
 */
export function requireConfigManager(actor: Actor): void {
  if (configStanding(actor, actor.instituteId) !== 'manage') throw new Forbidden();
}
