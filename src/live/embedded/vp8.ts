/**
 * Whether an RTP payload of VP8 (RFC 7741) is the first packet of a key frame: the payload
 * descriptor's S bit set with partition 0 (the start of a frame), and the VP8 payload header that
 * follows the descriptor with its P bit clear (P is the inverse key frame flag). Reads the bytes in
 * place; returns false for anything too short to tell.
 */
export function isVp8KeyFrameStart(payload: Uint8Array): boolean {
  const first = payload[0];
  if (first === undefined) return false;
  const start = (first & 0x10) !== 0;
  const partition = first & 0x07;
  if (!start || partition !== 0) return false;
  let offset = 1;
  if ((first & 0x80) !== 0) {
    // X: the extension byte says which optional fields follow.
    const extension = payload[1];
    if (extension === undefined) return false;
    offset = 2;
    if ((extension & 0x80) !== 0) {
      // I: a picture id of one byte, or two when its M bit is set.
      const pictureId = payload[offset];
      if (pictureId === undefined) return false;
      offset += (pictureId & 0x80) !== 0 ? 2 : 1;
    }
    // L: TL0PICIDX; T or K: one byte of TID/Y/KEYIDX.
    if ((extension & 0x40) !== 0) offset += 1;
    if ((extension & 0x30) !== 0) offset += 1;
  }
  const header = payload[offset];
  return header !== undefined && (header & 0x01) === 0;
}
