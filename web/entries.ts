/**
 * The entries of the web build, by the name the server asks the manifest for (src/http/web-build.ts).
 * A new page or script is one line here; its file is the entry's path relative to web/.
 */
export const WEB_ENTRIES = {
  console: 'console/index.html',
  lti: 'lti/lti.ts',
  'lti-auto-submit': 'lti/auto-submit.ts',
  'lti-platform-storage': 'lti/platform-storage.ts',
  'live-client': 'live/live-client.ts',
  livekit: 'live/livekit.ts',
  'phone-live': 'live/phone-live.ts',
  phone: 'phone/main.ts',
  practice: 'practice/main.ts',
  room: 'room/main.ts',
} as const;

export type WebEntry = keyof typeof WEB_ENTRIES;
