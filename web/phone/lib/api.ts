/**
 * The phone API (/api/mobile/<pairing token>), typed from the generated OpenAPI document. Every
 * call says whether the server was reached (the connection line follows it), and a 404 means the
 * link is gone for good: the page hears of it once, through `onGone`.
 */
import type {
  PhoneHeartbeatRequest,
  PhoneHelloRequest,
  PhoneRecordingAnswer,
  PhoneView,
} from '../../shared/candidate-api.ts';
import { ApiError, errorOf, requestJson } from '../../shared/http.ts';
import { PAGE } from '../words.ts';

export type { PhoneView };

export interface PhoneApiOptions {
  readonly token: string;
  /** Called after each call: true when the server answered, false when it could not be reached. */
  readonly onReachable: (reachable: boolean) => void;
  /** Called when the server no longer knows the link (404), with its sentence. */
  readonly onGone: (message: string) => void;
}

export class PhoneApi {
  readonly base: string;
  readonly #options: PhoneApiOptions;

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
      throw new ApiError(0, PAGE.unreachable);
    }
    this.#options.onReachable(true);
    const { status, ok, json } = answer;
    // The link was replaced by a newer code, or never existed: nothing more can work from here.
    if (status === 404) this.#options.onGone(errorOf(json, PAGE.linkGone));
    if (!ok) throw new ApiError(status, errorOf(json, PAGE.answered(status)));
    return json;
  }

  /** Calls a route that answers the phone's view. Returns it; throws as `call`. */
  async view(method: string, path: string, body?: Record<string, unknown> | FormData): Promise<PhoneView> {
    return (await this.call(method, path, body)) as PhoneView;
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
