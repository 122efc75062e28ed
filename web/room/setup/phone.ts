/**
 * The phone of a mobile_cam exam (docs/room.md "The phone"): a second camera that talks to the
 * server, never to this page. The page shows how to open the phone camera page (the QR code, or
 * the short address and the PIN) and follows the phone's state in the view.
 */
import { api } from '../state/room.svelte.ts';

/**
 * A short fingerprint of the pairing URL for the QR code's address: a new pairing token makes a
 * new address (the browser cannot show the old code from its cache), and the token itself stays
 * out of the image's address.
 */
function fingerprint(text: string): string {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index += 1) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16);
}

/** The QR code's address for this pairing URL. */
export function qrSource(pairingUrl: string | null): string {
  return `${api}/mobile/qr.svg?v=${fingerprint(pairingUrl ?? '')}`;
}
