/**
 * Word lists whose words come from the catalogue each time they are read, so a screen that shows
 * them follows a language switch without rebuilding the list (the words are getters calling t()).
 */
import { t } from '../../../shared/i18n.svelte.ts';

/** A `[value, words]` pair whose words are the message `key`, read on each access. */
export function wordsPair<V extends string>(value: V, key: string): readonly [V, string] {
  const pair: [V, string] = [value, ''];
  Object.defineProperty(pair, 1, { get: () => t(key), enumerable: true });
  return pair;
}

/** An object with the keys of `keys`, each read as its message (`{ webcam: 'console.x.webcam' }`). */
export function wordsRecord<K extends string>(
  keys: Readonly<Record<K, string>>,
): Readonly<Record<K, string>> {
  const words = {} as Record<K, string>;
  for (const [name, key] of Object.entries(keys) as [K, string][])
    Object.defineProperty(words, name, { get: () => t(key), enumerable: true });
  return words;
}
