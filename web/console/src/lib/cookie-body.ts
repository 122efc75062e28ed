/**
 * Bodies of the console's writes. The generated types describe the signed (HMAC) form of each
 * operation, whose body carries `timestamp`, `nonce` and `signature`; a request with the staff
 * session cookie sends none of them (the CSRF header stands in), and the service does not ask for them.
 */

/** The parameters only a signed request carries. */
type SigningField = 'timestamp' | 'nonce' | 'signature';

/**
 * Returns `body` typed as the operation's body `T` (taken from the call it is passed to), after
 * checking every other field against `T`. Throws nothing.
 */
export function cookieBody<T extends object>(body: Omit<T, SigningField>): T {
  return body as T;
}
