/**
 * The phone API (/api/mobile/<pairing token>), typed from the generated OpenAPI document. Every
 * call says whether the server was reached (the connection line follows it), and a 404 means the
 * link is gone for good: the page hears of it once, through `onGone`.
 */
import type {
  CandidateLanguage,
  CandidateLanguageFields,
  LanguageAnswer,
  LanguageRequest,
  PhoneHeartbeatRequest,
  PhoneHelloRequest,
  PhoneRecordingAnswer,
  PhoneView,
} from '../../shared/candidate-api.ts';
import { ApiError, errorOf, requestJson } from '../../shared/http.ts';

export type { PhoneView };

/** The view's languages, or undefined while the server sends none. */
export function languageOf(view: PhoneView): CandidateLanguage | undefined {
  return (view as PhoneView & CandidateLanguageFields).language;
}

/** The institute's own wording the view carries, by language; undefined when none. */
export function overridesOf(view: PhoneView): CandidateLanguageFields['message_overrides'] {
  return (view as PhoneView & CandidateLanguageFields).message_overrides;
}

export interface PhoneApiOptions {
  readonly token: string;
  /** Called after each call: true when the server answered, false when it could not be reached. */
  readonly onReachable: (reachable: boolean) => void;
  /** Called when the server no longer knows the link (404). */
  readonly onGone: () => void;
}

export class PhoneApi {
  readonly base: string;
  readonly #options: PhoneApiOptions;
  /** When each view's request was sent (performance.now()), so an older answer can be told apart. */
  readonly #asked = new WeakMap<PhoneView, number>();

  constructor(options: PhoneApiOptions) {
    this.#options = options;
    this.base = `/api/mobile/${encodeURIComponent(options.token)}`;
  }

  /**
   * Calls the phone API. Returns the parsed JSON answer; throws ApiError with the server's own
   * sentence for an error answer, or status 0 when the server could not be reached.
   */
  async call(method: string, path: string, body?: Record<string, unknown> | FormData): Promise<unknown> {
    let answer;
    try {
      answer = await requestJson(`${this.base}${path}`, method, body);
    } catch {
      this.#options.onReachable(false);
      throw new ApiError(0, 'unreachable', { key: 'phone.page.unreachable' });
    }
    this.#options.onReachable(true);
    const { status, ok, json } = answer;
    // The link was replaced by a newer code, or never existed: nothing more can work from here.
    if (status === 404) this.#options.onGone();
    // The page words the refusal by its status (web/shared/phrase.ts), the server's sentence a detail.
    if (!ok) throw new ApiError(status, errorOf(json, ''));
    return json;
  }

  /** Calls a route that answers the phone's view. Returns it; throws as `call`. */
  async view(method: string, path: string, body?: Record<string, unknown> | FormData): Promise<PhoneView> {
    const asked = performance.now();
    const view = (await this.call(method, path, body)) as PhoneView;
    this.#asked.set(view, asked);
    return view;
  }

  /** When the request that answered `view` was sent (performance.now()); 0 when not known. */
  askedAt(view: PhoneView): number {
    return this.#asked.get(view) ?? 0;
  }

  /** Saves the student's pick of language for the session. Returns the languages now; throws as `call`. */
  async chooseLanguage(language: string): Promise<CandidateLanguage> {
    const body: LanguageRequest = { language };
    const answer = (await this.call('PUT', '/language', { ...body })) as LanguageAnswer;
    return answer.language;
  }

  /** Says hello with the phone's description. Returns the view; throws as `call`. */
  hello(body: NonNullable<PhoneHelloRequest>): Promise<PhoneView> {
    return this.view('POST', '/hello', { ...body });
  }

  /** Tells the server the phone is still there. Returns the view; throws as `call`. */
  heartbeat(body: NonNullable<PhoneHeartbeatRequest>): Promise<PhoneView> {
    return this.view('POST', '/heartbeat', { ...body });
  }

  /** Posts one recording chunk. Returns the server's acknowledgement; throws as `call`. */
  async uploadChunk(form: FormData): Promise<PhoneRecordingAnswer> {
    return (await this.call('POST', '/recordings', form)) as PhoneRecordingAnswer;
  }

  /** Tells the server the phone is leaving (a beacon survives the page's unloading). */
  leave(): void {
    navigator.sendBeacon(`${this.base}/leave`);
  }
}
