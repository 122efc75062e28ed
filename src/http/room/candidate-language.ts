import type { FastifyRequest } from 'fastify';
import type { Config } from '../../config/config.ts';
import type { LanguageRequest } from '../../domain/room/language.ts';

/**
 * The `lang` of an address's query, read from the address itself (a form posted to `/m?lang=…`
 * keeps it there, beside its body); null when absent or when the address cannot be read.
 */
function langOf(url: string): string | null {
  try {
    return new URL(url, 'http://page.invalid').searchParams.get('lang');
  } catch {
    return null;
  }
}

/**
 * What a candidate's request says about their language: its Accept-Language header, the server's
 * PSEUDO_LOCALE setting and, for a page, the `?lang=` of that load (`withOverride`). Returns it for
 * resolveCandidateLanguage (src/domain/room/language.ts).
 */
export function languageRequestOf(
  request: FastifyRequest,
  config: Pick<Config, 'pseudoLocale'>,
  { withOverride = false }: { readonly withOverride?: boolean } = {},
): LanguageRequest {
  const header = request.headers['accept-language'];
  const lang = withOverride ? langOf(request.url) : null;
  return {
    acceptLanguage: typeof header === 'string' ? header : null,
    override: lang,
    pseudo: config.pseudoLocale,
  };
}
