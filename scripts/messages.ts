/**
 * Keeps the message catalogues (messages/<locale>.json) tidy:
 *   node scripts/messages.ts add FILE   merges FILE ({ "<locale>": { "<key>": "<message>" } }) into
 *                                       the catalogues, under a lock, keys sorted (several people or
 *                                       tools may add at once);
 *   node scripts/messages.ts remove KEY…  drops keys from every catalogue;
 *   node scripts/messages.ts sort       rewrites every catalogue with its keys sorted.
 * The checks (complete, same placeholders, no unused key) are tests: test/i18n/catalogues.test.ts.
 */
import { closeSync, openSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { MESSAGES_DIR } from '../src/i18n/catalogues.ts';
import { isLocale, LOCALES, type Locale } from '../src/i18n/locales.ts';

type Catalogue = Record<string, string>;

const file = (locale: Locale) => new URL(`${locale}.json`, MESSAGES_DIR);

function read(locale: Locale): Catalogue {
  return JSON.parse(readFileSync(file(locale), 'utf8')) as Catalogue;
}

function write(locale: Locale, messages: Catalogue): void {
  const sorted = Object.fromEntries(
    Object.entries(messages).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
  );
  const target = file(locale);
  const temporary = new URL(`.${locale}.json.tmp`, MESSAGES_DIR);
  writeFileSync(temporary, `${JSON.stringify(sorted, null, 2)}\n`);
  renameSync(temporary, target);
}

async function locked(work: () => void): Promise<void> {
  const lock = new URL('.lock', MESSAGES_DIR);
  for (let attempt = 0; ; attempt += 1) {
    try {
      closeSync(openSync(lock, 'wx'));
      break;
    } catch (error) {
      if (attempt > 600)
        throw new Error(`messages/.lock has been held for a minute: remove it if no one is adding`, {
          cause: error,
        });
      await sleep(100);
    }
  }
  try {
    work();
  } finally {
    rmSync(lock, { force: true });
  }
}

const [command, ...rest] = process.argv.slice(2);
if (command === 'add' && rest[0] !== undefined) {
  const fragment = JSON.parse(readFileSync(rest[0], 'utf8')) as Record<string, Catalogue>;
  for (const locale of Object.keys(fragment))
    if (!isLocale(locale)) throw new Error(`Unknown locale ${locale}`);
  await locked(() => {
    for (const locale of LOCALES) {
      const added = fragment[locale];
      if (added !== undefined) write(locale, { ...read(locale), ...added });
    }
  });
  console.log(`Added ${Object.keys(fragment.en ?? {}).length} English messages and their translations.`);
} else if (command === 'remove' && rest.length > 0) {
  await locked(() => {
    for (const locale of LOCALES) {
      const messages = read(locale);
      for (const key of rest) delete messages[key];
      write(locale, messages);
    }
  });
} else if (command === 'sort') {
  await locked(() => {
    for (const locale of LOCALES) write(locale, read(locale));
  });
} else {
  console.error('usage: node scripts/messages.ts add FILE | remove KEY… | sort');
  process.exitCode = 2;
}
