/**
 * The pseudo-locale check for the browser tests: a page shown in `en-XA` (every catalogue letter
 * accented, in brackets) must show no plain English. Text that comes from the catalogue has no plain
 * ASCII letter left, so any visible run of two or more plain letters is either data (a name, an
 * email, the exam's name, a file name, which the caller allows) or a string that skipped the
 * catalogue.
 */
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';

/** The month names Intl writes in English dates (the pseudo-locale formats dates as English does). */
const MONTHS = Array.from({ length: 12 }, (_, month) =>
  (['long', 'short'] as const).map((width) =>
    new Intl.DateTimeFormat('en', { month: width, timeZone: 'UTC' }).format(Date.UTC(2026, month, 15)),
  ),
).flat();

/**
 * What Intl writes in the pseudo-locale's English formats and the product's own name: allowed
 * everywhere (dates' months, times' AM/PM and zones).
 */
export const PSEUDO_ALWAYS_ALLOWED: readonly string[] = ['Invigil', 'AM', 'PM', 'UTC', 'GMT', ...MONTHS];

/** One piece of visible text with plain English in it, and the element it sits in. */
export interface EnglishLeak {
  readonly text: string;
  readonly where: string;
}

/**
 * The visible texts of `page` (text nodes, and the aria-label, title, alt and placeholder of visible
 * elements, and the document's title) that still hold two or more plain ASCII letters in a row once
 * every `allow` string (data: names, emails, exam names) is taken out. Returns them with where.
 */
export async function englishLeaks(page: Page, allow: readonly string[] = []): Promise<EnglishLeak[]> {
  const allowed = [...PSEUDO_ALWAYS_ALLOWED, ...allow].sort((a, b) => b.length - a.length);
  return page.evaluate((allowed) => {
    const leaks: { text: string; where: string }[] = [];
    const plain = (text: string): boolean => {
      let rest = text;
      for (const data of allowed) rest = rest.split(data).join(' ');
      return /[A-Za-z]{2,}/.test(rest);
    };
    const describe = (element: Element): string =>
      `${element.tagName.toLowerCase()}${element.id === '' ? '' : `#${element.id}`}`;
    const visible = (element: Element): boolean =>
      element.closest('[hidden], script, style, noscript, template') === null &&
      (!('checkVisibility' in element) ||
        element.checkVisibility({ opacityProperty: false, visibilityProperty: true }) ||
        element.closest('.visually-hidden') !== null);
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node !== null; node = walker.nextNode()) {
      const text = node.textContent ?? '';
      const parent = node.parentElement;
      if (parent === null || text.trim() === '' || !visible(parent)) continue;
      if (plain(text)) leaks.push({ text: text.trim(), where: describe(parent) });
    }
    for (const element of document.body.querySelectorAll('[aria-label], [title], [alt], [placeholder]')) {
      if (!visible(element)) continue;
      for (const name of ['aria-label', 'title', 'alt', 'placeholder']) {
        const value = element.getAttribute(name);
        if (value !== null && plain(value))
          leaks.push({ text: value, where: `${describe(element)}[${name}]` });
      }
    }
    if (plain(document.title)) leaks.push({ text: document.title, where: 'title' });
    return leaks;
  }, allowed);
}

/** Fails naming every visible piece of plain English on `page` (see englishLeaks) at `stage`. */
export async function assertNoEnglish(
  page: Page,
  stage: string,
  allow: readonly string[] = [],
): Promise<void> {
  const leaks = await englishLeaks(page, allow);
  assert.deepEqual(
    leaks.map((leak) => `${leak.where}: ${leak.text}`),
    [],
    `plain English in the pseudo-locale at ${stage}`,
  );
}
