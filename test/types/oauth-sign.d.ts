/**
 * Types for `oauth-sign` (a devDependency without its own): the independent OAuth 1.0a signer the
 * LTI 1.1 tests sign launches with, as a platform would.
 */
declare module 'oauth-sign' {
  /** Parameter values: a string, or an array of strings for a repeated name. */
  type OauthParams = Record<string, string | readonly string[]>;

  /** The base64 HMAC-SHA1 signature of a request (RFC 5849 section 3.4.2). */
  export function hmacsign(
    httpMethod: string,
    baseUri: string,
    params: OauthParams,
    consumerSecret: string,
    tokenSecret?: string,
  ): string;

  /** The base64 HMAC-SHA256 signature of a request. */
  export function hmacsign256(
    httpMethod: string,
    baseUri: string,
    params: OauthParams,
    consumerSecret: string,
    tokenSecret?: string,
  ): string;

  /** The signature base string of RFC 5849 section 3.4.1. */
  export function generateBase(httpMethod: string, baseUri: string, params: OauthParams): string;
}
