import crypto from 'node:crypto';

/**
 * Expiring file addresses: `{PUBLIC_URL}/files/<id>?expires=<epoch seconds>&signature=<hex>`, where
 * the signature is an HMAC-SHA256 of the path and the expiry under the server's URL-signing key.
 */
export interface UrlSigner {
  /** The address of file `fileId`, valid for `seconds` from `now` (ms). Returns it with its expiry (ms). */
  sign(fileId: number, now: number, seconds: number): { url: string; expiresAt: number };
  /** True when the signature matches and the expiry has not passed at `now` (ms). */
  verify(fileId: string, expires: string | undefined, signature: string | undefined, now: number): boolean;
}

export function createUrlSigner(publicUrl: string, key: Buffer): UrlSigner {
  const mac = (fileId: string, expires: string) =>
    crypto.createHmac('sha256', key).update(`/files/${fileId}\n${expires}`).digest('hex');
  return {
    sign(fileId, now, seconds) {
      const expires = String(Math.floor(now / 1000) + seconds);
      return {
        url: `${publicUrl}/files/${fileId}?expires=${expires}&signature=${mac(String(fileId), expires)}`,
        expiresAt: Number(expires) * 1000,
      };
    },
    verify(fileId, expires, signature, now) {
      if (expires === undefined || signature === undefined) return false;
      if (!/^\d{1,12}$/.test(expires) || !/^[0-9a-f]{64}$/.test(signature)) return false;
      const expected = Buffer.from(mac(fileId, expires), 'latin1');
      if (!crypto.timingSafeEqual(expected, Buffer.from(signature, 'latin1'))) return false;
      return Number(expires) * 1000 >= now;
    },
  };
}
