import type { Db } from '../../db/database.ts';
import { catalogue } from '../../i18n/catalogues.ts';
import type { Locale } from '../../i18n/locales.ts';
import type { Messages } from '../../i18n/translate.ts';
import { type Actor, instituteStanding } from '../access.ts';
import type { Clock } from '../clock.ts';
import { Forbidden, NotFound } from '../errors.ts';
import { parseId } from '../ids.ts';
import type { Params } from '../input.ts';
import {
  isOverridableKey,
  type MessageOverride,
  overridableKeys,
  PAGE_PREFIXES,
  readOverrideChange,
  readOverrideLocale,
} from './message-override.ts';
import { deleteOverride, listOverrides, upsertOverride } from './message-overrides.repository.ts';

/** One message as the wording screen shows it: the English, the catalogue's in the locale, the institute's. */
export interface WordedMessage {
  readonly key: string;
  readonly english: string;
  readonly catalogue: string;
  readonly override: MessageOverride | null;
}

/**
 * The messages of `instituteId` reworded in `locale` (key → message), for a translator's overrides:
 * the emails of the institute's students (src/domain/mail), and the candidate pages. Returns an empty
 * object when there are none.
 */
export async function institutesOverrides(db: Db, instituteId: number, locale: string): Promise<Messages> {
  const overrides = await listOverrides(db, instituteId, locale);
  return Object.fromEntries(
    overrides.filter((override) => isOverridableKey(override.key)).map((o) => [o.key, o.message]),
  );
}

/**
 * The page messages (PAGE_PREFIXES) an institute reworded, by locale: `{ nl: { key: message } }`,
 * for the room's and the phone's views. Returns an empty object when there are none.
 */
export async function pageOverrides(
  db: Db,
  instituteId: number,
): Promise<Readonly<Record<string, Readonly<Record<string, string>>>>> {
  const byLocale: Record<string, Record<string, string>> = {};
  for (const override of await listOverrides(db, instituteId)) {
    if (!PAGE_PREFIXES.some((prefix) => override.key.startsWith(prefix))) continue;
    if (!isOverridableKey(override.key)) continue;
    (byLocale[override.locale] ??= {})[override.key] = override.message;
  }
  return byLocale;
}

/** An institute's own wording of candidate messages and emails, for its administrators. */
export interface MessageOverridesService {
  /**
   * Every message the institute may reword, in `locale` (params `locale`, required), with its
   * English, the catalogue's wording and the institute's. Returns them sorted by key. Throws
   * NotFound (Institute), Forbidden (not its administrator), ParamMissing or Invalid (`locale`).
   */
  list(
    actor: Actor,
    instituteId: string | number,
    params: Params,
  ): Promise<{ locale: Locale; messages: WordedMessage[] }>;
  /**
   * Saves the institute's wording of `key` in `locale` (`message`), or removes it when `message` is
   * empty (readOverrideChange). Returns the message as the list shows it. Throws as list, and
   * Invalid (`key`, `message`: the mismatch with the catalogue's placeholders and tags).
   */
  save(actor: Actor, instituteId: string | number, params: Params): Promise<WordedMessage>;
}

export function createMessageOverridesService(deps: { db: Db; clock: Clock }): MessageOverridesService {
  const { db, clock } = deps;

  /** The institute `id` names, when the actor administers it. */
  async function administered(actor: Actor, id: string | number): Promise<number> {
    const numeric = parseId(id);
    if (numeric === undefined) throw new NotFound('Institute', id);
    const exists = await db
      .selectFrom('institutes')
      .select('id')
      .where('id', '=', numeric)
      .executeTakeFirst();
    if (exists === undefined) throw new NotFound('Institute', id);
    const standing = instituteStanding(actor, numeric);
    if (standing === 'hidden') throw new NotFound('Institute', id);
    if (standing !== 'manage') throw new Forbidden();
    return numeric;
  }

  function worded(key: string, locale: Locale, override: MessageOverride | null): WordedMessage {
    const english = catalogue('en')[key] ?? '';
    return { key, english, catalogue: catalogue(locale)[key] ?? english, override };
  }

  return {
    async list(actor, id, params) {
      const instituteId = await administered(actor, id);
      const locale = readOverrideLocale(params);
      const saved = new Map((await listOverrides(db, instituteId, locale)).map((o) => [o.key, o]));
      return {
        locale,
        messages: overridableKeys().map((key) => worded(key, locale, saved.get(key) ?? null)),
      };
    },

    async save(actor, id, params) {
      const instituteId = await administered(actor, id);
      const change = readOverrideChange(params);
      if (change.message === null) {
        await deleteOverride(db, instituteId, change.locale, change.key);
        return worded(change.key, change.locale, null);
      }
      const override: MessageOverride = {
        instituteId,
        locale: change.locale,
        key: change.key,
        message: change.message,
        updatedAt: clock.now(),
        updatedBy: actor.id,
      };
      await upsertOverride(db, override);
      return worded(change.key, change.locale, override);
    },
  };
}
