/**
 * The web build's view of the message catalogues (messages/<locale>.json): each page gets, per
 * language, only the messages whose keys start with its prefixes, as a chunk of its own that the
 * page loads when it shows that language (web/shared/i18n.svelte.ts). A page imports
 * `virtual:messages/<page>` for its loaders; the chunks are `virtual:messages/<page>/<locale>`.
 */
import { readFileSync } from 'node:fs';
import type { Plugin } from 'vite';
import { LOCALES, PSEUDO_LOCALE, type PageLocale } from '../../src/i18n/locales.ts';
import { pseudoMessages, type Messages } from '../../src/i18n/translate.ts';

/** Which keys each page's catalogue holds, by prefix. */
export const PAGE_MESSAGES = {
  // practice.link.: the practice link on the room's landing (web/room/setup/PracticeLink.svelte).
  room: ['candidate.', 'room.', 'practice.link.'],
  phone: ['candidate.', 'phone.'],
  practice: ['candidate.', 'practice.'],
  lti: ['candidate.', 'lti.'],
  console: ['console.'],
} as const satisfies Record<string, readonly string[]>;

type Page = keyof typeof PAGE_MESSAGES;

const PREFIX = 'virtual:messages/';
const RESOLVED = `\0${PREFIX}`;

function isPage(name: string): name is Page {
  return Object.hasOwn(PAGE_MESSAGES, name);
}

export function messagesPlugin(messagesDir: URL): Plugin {
  const read = (locale: PageLocale): Messages => {
    if (locale === PSEUDO_LOCALE) return pseudoMessages(read('en'));
    const file = new URL(`${locale}.json`, messagesDir);
    return JSON.parse(readFileSync(file, 'utf8')) as Messages;
  };
  const locales: PageLocale[] = [...LOCALES, PSEUDO_LOCALE];
  return {
    name: 'invigil-messages',
    resolveId(id) {
      return id.startsWith(PREFIX) ? `\0${id}` : undefined;
    },
    load(id) {
      if (!id.startsWith(RESOLVED)) return undefined;
      const [page = '', locale] = id.slice(RESOLVED.length).split('/');
      if (!isPage(page)) throw new Error(`No messages for the page "${page}"`);
      if (locale === undefined) {
        const loaders = locales.map(
          (name) => `  ${JSON.stringify(name)}: () => import(${JSON.stringify(`${PREFIX}${page}/${name}`)}),`,
        );
        return `export const loaders = {\n${loaders.join('\n')}\n};\n`;
      }
      const chosen = locales.find((name) => name === locale);
      if (chosen === undefined) throw new Error(`No catalogue for the language "${locale}"`);
      for (const name of LOCALES) this.addWatchFile(new URL(`${name}.json`, messagesDir).pathname);
      const prefixes: readonly string[] = PAGE_MESSAGES[page];
      const messages = Object.fromEntries(
        Object.entries(read(chosen)).filter(([key]) => prefixes.some((prefix) => key.startsWith(prefix))),
      );
      return `export default ${JSON.stringify(messages)};\n`;
    },
  };
}
