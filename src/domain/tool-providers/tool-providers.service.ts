import type { Db } from '../../db/database.ts';
import { encryptSecret, type ServerKeys } from '../../security/keys.ts';
import type { Actor } from '../access.ts';
import type { Clock } from '../clock.ts';
import { DependentExists, NotFound, Taken } from '../errors.ts';
import type { Params } from '../input.ts';
import { type Page, parseListQuery } from '../listing.ts';
import {
  readToolProviderChanges,
  settingsAfter,
  TOOL_PROVIDER_LIST_FIELDS,
  type ToolProvider,
  type ToolProviderSettings,
} from './tool-provider.ts';
import {
  configInstituteForWrite,
  configListScope,
  findManageableToolProvider,
  findVisibleToolProvider,
} from './tool-provider-access.ts';
import {
  deleteToolProviderUnlessLinked,
  findToolProvider,
  insertToolProvider,
  isConsumerKeyTaken,
  isRegistrationTaken,
  listToolProviders,
  type ToolProviderColumns,
  updateToolProvider,
} from './tool-providers.repository.ts';

/** The answer to destroying a provider whose LTI resources are still linked to exams (contract §6). */
export const DEPENDENT_LTI_RESOURCES = 'Cannot delete record because dependent lti resources exist';

/**
 * Tool-provider use cases (external platforms, LMSs). Administrators of an institute manage its
 * providers, teachers and auditors read them, other roles may not (configStanding). Ids are taken
 * as sent, so a 404 names them as the client wrote them.
 */
export interface ToolProvidersService {
  /** One page of the providers the actor may read, filtered and sorted by `params`. Throws Forbidden or Invalid. */
  list(actor: Actor, params: Params): Promise<Page<ToolProvider>>;
  /** Returns a provider the actor may read. Throws NotFound (Tool Provider) or Forbidden. */
  get(actor: Actor, id: string | number): Promise<ToolProvider>;
  /**
   * Creates a provider in the actor's institute (a superuser may name `institute_id`). Returns it;
   * throws NotFound (Institute), Forbidden, ParamMissing, Invalid, or Taken (`consumer_key`, or
   * `client_id` for a 1.3 registration that exists).
   */
  create(actor: Actor, params: Params): Promise<ToolProvider>;
  /** Applies the sent changes. Returns the provider as saved; throws as get and create do. */
  update(actor: Actor, id: string | number, params: Params): Promise<ToolProvider>;
  /**
   * Deletes the provider with its LTI resources that no exam uses. Throws NotFound, Forbidden, or
   * DependentExists while one of its resources is linked to an exam.
   */
  destroy(actor: Actor, id: string | number): Promise<void>;
}

/**
 * Builds the tool-provider use cases over the database, the clock and the server keys (the LTI 1.1
 * shared secret is stored encrypted with `keys.encryption`). Returns the service; throws nothing.
 */
export function createToolProvidersService(deps: {
  db: Db;
  clock: Clock;
  keys: ServerKeys;
}): ToolProvidersService {
  const { db, clock, keys } = deps;

  /** Throws Taken when another provider already answers to the same LTI identity. */
  async function checkUnique(settings: ToolProviderSettings, exceptId: number): Promise<void> {
    if (settings.ltiVersion === '1.1' && settings.consumerKey !== null) {
      if (await isConsumerKeyTaken(db, settings.consumerKey, exceptId)) throw new Taken('consumer_key');
      return;
    }
    if (settings.issuer === null || settings.clientId === null) return;
    const registration = {
      issuer: settings.issuer,
      clientId: settings.clientId,
      deploymentId: settings.deploymentId,
    };
    if (await isRegistrationTaken(db, registration, exceptId)) throw new Taken('client_id');
  }

  function columnsOf(settings: ToolProviderSettings): ToolProviderColumns {
    const { sharedSecret, ...rest } = settings;
    const sharedSecretEncrypted =
      typeof sharedSecret === 'string' ? encryptSecret(keys.encryption, sharedSecret) : sharedSecret;
    return { ...rest, sharedSecretEncrypted };
  }

  return {
    async list(actor, params) {
      const scope = configListScope(actor);
      return listToolProviders(db, scope, parseListQuery(params, TOOL_PROVIDER_LIST_FIELDS));
    },

    async get(actor, id) {
      return (await findVisibleToolProvider(db, actor, id)).provider;
    },

    async create(actor, params) {
      const instituteId = await configInstituteForWrite(db, actor, params);
      const settings = settingsAfter(undefined, readToolProviderChanges(params, 'create'));
      await checkUnique(settings, 0);
      return insertToolProvider(db, instituteId, columnsOf(settings), clock.now());
    },

    async update(actor, id, params) {
      const provider = await findManageableToolProvider(db, actor, id);
      const settings = settingsAfter(provider, readToolProviderChanges(params, 'update'));
      await checkUnique(settings, provider.id);
      const saved = await updateToolProvider(db, provider.id, columnsOf(settings), clock.now());
      if (saved === undefined) throw new NotFound('Tool Provider', id);
      return saved;
    },

    async destroy(actor, id) {
      const provider = await findManageableToolProvider(db, actor, id);
      if (await deleteToolProviderUnlessLinked(db, provider.id)) return;
      if ((await findToolProvider(db, provider.id)) === undefined) throw new NotFound('Tool Provider', id);
      throw new DependentExists(DEPENDENT_LTI_RESOURCES);
    },
  };
}
