/**
 * The axe-core accessibility check for the room's browser tests: injects axe's own script from the
 * package (no network) into the page and runs it over the whole document.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

/** axe-core's browser script, as the package ships it. */
const AXE_SCRIPT = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

/** One rule axe found broken, with where. */
interface AxeViolation {
  readonly id: string;
  readonly impact: string | null;
  readonly help: string;
  readonly nodes: readonly { readonly target: readonly unknown[] }[];
}

/**
 * Runs axe over `page` (WCAG 2.x A and AA rules and axe's best practices) and fails naming every
 * violation of impact serious or critical, with the elements it found it on. Returns all
 * violations found (of any impact), for a caller that wants to look further.
 */
export async function assertNoSeriousAxeViolations(page: Page, stage: string): Promise<AxeViolation[]> {
  const loaded = await page.evaluate(() => 'axe' in window);
  // addScriptTag({ path }) inserts the file as an inline <script>, which the room's CSP (no inline
  // script) rightly refuses; the same file evaluated through the DevTools protocol is not a page
  // script and passes. Either way it is the package's own file.
  if (!loaded) await page.evaluate(fs.readFileSync(AXE_SCRIPT, 'utf8'));
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(context: Document): Promise<{ violations: unknown[] }> } })
      .axe;
    const result = await axe.run(document);
    return result.violations as AxeViolation[];
  });
  const serious = violations.filter(
    (violation) => violation.impact === 'serious' || violation.impact === 'critical',
  );
  assert.deepEqual(
    serious.map(
      (violation) =>
        `${violation.impact} ${violation.id} (${violation.help}): ${violation.nodes.map((node) => JSON.stringify(node.target)).join(', ')}`,
    ),
    [],
    `axe on the ${stage} stage`,
  );
  return violations;
}
