/**
 * A candidate page's two live regions as state any component may write: the alert (an error the
 * student must read, announced at once) and the polite status (progress a screen reader hears
 * without anything extra on screen). PageMessages.svelte shows them.
 */
export class PageMessages {
  alert = $state('');
  status = $state('');

  /** Shows an error in the alert region. */
  showError(message: string): void {
    this.alert = message;
  }

  /** Empties and hides the alert region. */
  clearError(): void {
    this.alert = '';
  }

  /** Announces progress politely. */
  announce(message: string): void {
    this.status = message;
  }
}
