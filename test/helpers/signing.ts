import crypto from 'node:crypto';

/**
 * A client-side signer written independently of the server's code, the way an integrator would:
 * sort `name=value` pairs by name, join with `?`, HMAC-SHA256 hex. Values here are strings,
 * numbers and booleans (the published vectors cover arrays, hashes and floats).
 */
export type Scalar = string | number | boolean | null;

export function valueText(value: Scalar): string {
  return value === null ? '' : String(value);
}

export function canonical(params: Readonly<Record<string, Scalar>>): string {
  return Object.keys(params)
    .filter((name) => name !== 'signature')
    .sort()
    .map((name) => `${name}=${valueText(params[name] ?? null)}`)
    .join('?');
}

export function hmac(secret: string, message: string): string {
  return crypto.createHmac('sha256', secret).update(message, 'utf8').digest('hex');
}

let counter = 0;

/** A fresh nonce for each call: time-derived digits plus a counter, as many clients do. */
export function nextNonce(): string {
  counter += 1;
  return `${Math.floor(Date.now() / 1000)}${String(process.pid % 1000).padStart(3, '0')}${String(counter).padStart(6, '0')}`;
}
