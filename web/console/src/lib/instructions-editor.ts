/** What the instructions screen may ask of its rich-text editor (components/InstructionsEditor.svelte). */
export interface InstructionsEditorControl {
  /** Inserts `text` where the cursor was last (or at the end), and gives the editor the focus back. */
  insertAtCursor(text: string): void;
  /** Replaces the whole document without reporting a change (a change made by the service). */
  replaceContent(html: string): void;
  /** The document as HTML ('' when empty). */
  currentHtml(): string;
}
