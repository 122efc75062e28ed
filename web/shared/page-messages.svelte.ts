/**
 * A candidate page's two live regions as state any component may write: the alert (an error the
 * student must read, announced at once) and the polite status (progress a screen reader hears
 * without anything extra on screen). PageMessages.svelte shows them. Each holds a catalogue Phrase
 * (shown in the page's language of the moment) or plain words.
 */
import type { Phrase } from './phrase.ts';

export class PageMessages {
  alert: Phrase | string = $state.raw('');
  status: Phrase | string = $state.raw('');

  /** Shows an error in the alert region. */
  showError(message: Phrase | string): void {
    this.alert = message;
  }

  /** Empties and hides the alert region. */
  clearError(): void {
    this.alert = '';
  }

  /** Announces progress politely. */
  announce(message: Phrase | string): void {
    this.status = message;
  }
}
