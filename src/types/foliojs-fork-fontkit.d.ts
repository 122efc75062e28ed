/**
 * Types for `@foliojs-fork/fontkit` (a dependency without its own): the font engine the session
 * report hands to pdf-lib (src/domain/reports/session-report.ts). Its `create` answers the font
 * object pdf-lib's own Fontkit interface describes.
 */
declare module '@foliojs-fork/fontkit' {
  import type { PDFDocument } from 'pdf-lib';

  const fontkit: Parameters<PDFDocument['registerFontkit']>[0];
  export default fontkit;
}
