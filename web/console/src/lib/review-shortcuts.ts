/**
 * The review screen's keyboard shortcuts (docs/review.md): Space or K plays and pauses, J/← and L/→
 * skip 5 seconds, N and P go to the next and previous incident. A key typed into a field, or one
 * that activates the focused button, is left to that control.
 */
import type { ReviewPlayer } from './review-player.svelte';
import { nextIncident, previousIncident, type TimedIncident } from './review-time';

/** How far Back, Forward and their keys move the playhead (s). */
export const SKIP_SECONDS = 5;

/** Returns whether a key press belongs to the control it happened in (typing, a radio group, a button). */
export function belongsToControl(event: KeyboardEvent): boolean {
  const target = event.target;
  if (!(target instanceof HTMLElement)) return false;
  if (target.isContentEditable || target.closest('textarea, select') !== null) return true;
  if (target instanceof HTMLInputElement) return true;
  const activates = event.key === ' ' || event.key === 'Enter';
  return activates && target.closest('button, a, summary') !== null;
}

/** Moves the playhead to `seconds`; nothing when there is no such place. */
export function seekTo(player: ReviewPlayer, seconds: number | undefined): void {
  if (seconds !== undefined) player.seek(seconds);
}

/**
 * Returns what the key of `event` does to `player` (moving between `incidents` for N and P), or
 * undefined when it is no shortcut, carries a modifier or belongs to the focused control. Throws
 * nothing.
 */
export function reviewShortcut(
  event: KeyboardEvent,
  player: ReviewPlayer,
  incidents: readonly TimedIncident[],
): (() => void) | undefined {
  if (event.ctrlKey || event.metaKey || event.altKey || belongsToControl(event)) return undefined;
  const key = event.key.length === 1 ? event.key.toLowerCase() : event.key;
  const actions: Record<string, () => void> = {
    ' ': () => player.toggle(),
    k: () => player.toggle(),
    j: () => player.skip(-SKIP_SECONDS),
    ArrowLeft: () => player.skip(-SKIP_SECONDS),
    l: () => player.skip(SKIP_SECONDS),
    ArrowRight: () => player.skip(SKIP_SECONDS),
    n: () => seekTo(player, nextIncident(incidents, player.current)?.at),
    p: () => seekTo(player, previousIncident(incidents, player.current)?.at),
  };
  return actions[key];
}
