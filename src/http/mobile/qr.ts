import { renderSVG } from 'uqr';

/**
 * The phone's pairing address as an SVG QR code: dark modules on white with a quiet zone, medium
 * error correction (a phone camera reads it from a screen at arm's length). Returns the SVG text.
 */
export function pairingQrSvg(url: string): string {
  return renderSVG(url, { ecc: 'M', border: 2, pixelSize: 8, blackColor: '#000', whiteColor: '#fff' });
}
