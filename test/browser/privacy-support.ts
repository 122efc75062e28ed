/**
 * The privacy panel (docs/room.md "Privacy panel") stands before every check in the room and
 * before the camera on the phone: a browser test that goes through the setup accepts it first.
 */
import type { Page } from 'playwright-core';

/** What shows once the panel is accepted: the room's checks or the phone's camera step. */
const AFTER_PANEL = '#checks-heading, #camera-heading';

/**
 * Waits for the room's or the phone's setup and accepts its privacy panel when it shows (a panel
 * already accepted in this tab, or a setup past it, needs nothing). Returns once the checks (room)
 * or the camera buttons (phone) are on the page.
 */
export async function acceptPrivacy(page: Page, timeout = 60_000): Promise<void> {
  await page.locator(`#privacy-accept, ${AFTER_PANEL}`).first().waitFor({ timeout });
  const accept = page.locator('#privacy-accept');
  if (await accept.isVisible()) await accept.click();
  await page.locator(AFTER_PANEL).first().waitFor({ timeout });
}
