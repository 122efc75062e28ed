import { LOCALES } from '../../i18n/locales.ts';
import { OVERRIDE_MAX } from '../../domain/message-overrides/message-override.ts';
import {
  commonErrors,
  errorBody,
  idParam,
  nullableInteger,
  nullableString,
  nullableTime,
  signedParams,
  updateRouteSchema,
  v3Headers,
} from './common.schemas.ts';

const tags = ['institutes'];

/** One message as the wording screen shows it. */
export const wordedMessageRecord = {
  type: 'object',
  properties: {
    key: { type: 'string', example: 'room.setup.heading' },
    english: { type: 'string', description: 'The English catalogue’s message (ICU MessageFormat)' },
    catalogue: { type: 'string', description: 'The catalogue’s message in the locale asked for' },
    override: {
      ...nullableString,
      description: 'The institute’s own wording in that locale; null when it uses the catalogue’s',
    },
    updated_at: { ...nullableTime, description: 'When the wording was saved; null without one' },
    updated_by: { ...nullableInteger, description: 'The user who saved it; null without one' },
  },
  required: ['key', 'english', 'catalogue', 'override', 'updated_at', 'updated_by'],
} as const;

const locale = {
  type: 'string',
  enum: [...LOCALES],
  description: 'The language of the wording',
} as const;

export const listMessageOverridesSchema = {
  tags,
  summary: 'The messages an institute may reword, with its wording (administrators)',
  description:
    'Every message under candidate., room., phone., lti. and email. of the catalogues, sorted by key, ' +
    'with the English, the catalogue’s message in `locale` and the institute’s own wording ' +
    '(docs/languages.md, "An institute’s own wording").',
  headers: v3Headers,
  params: idParam(),
  querystring: {
    type: 'object',
    properties: { ...signedParams, locale },
    required: ['locale', 'timestamp', 'nonce', 'signature'],
  },
  response: {
    200: {
      type: 'object',
      properties: { locale, messages: { type: 'array', items: wordedMessageRecord } },
      required: ['locale', 'messages'],
    },
    404: errorBody,
    422: errorBody,
    ...commonErrors,
  },
} as const;

export const saveMessageOverrideSchema = updateRouteSchema(
  {
    tags,
    summary: 'Save or remove an institute’s wording of a message (administrators)',
    description:
      'Saves `message` as the institute’s wording of `key` in `locale`, or removes the wording when ' +
      '`message` is empty. The key must be a message of the English catalogue under candidate., room., ' +
      'phone., lti. or email. (422 `is not a message an institute may reword`); the message must parse ' +
      'as ICU MessageFormat and use the same placeholders and tags as the catalogue’s (422 naming what ' +
      `differs, e.g. 'The message has missing placeholder {name}.'); at most ${OVERRIDE_MAX} characters. ` +
      'Recorded in the audit log.',
  },
  { type: 'object', properties: { message: wordedMessageRecord }, required: ['message'] },
  {
    type: 'object',
    properties: {
      ...signedParams,
      locale,
      key: { type: 'string' },
      message: { type: ['string', 'null'], description: 'The wording; empty or null removes it' },
    },
    required: ['locale', 'key', 'timestamp', 'nonce', 'signature'],
  },
);
