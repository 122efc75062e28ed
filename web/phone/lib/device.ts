/** The longest device description the server keeps. */
const MAX_DEVICE_TEXT = 120;

const BROWSERS: readonly (readonly [RegExp, string])[] = [
  [/SamsungBrowser\/(\d+)/, 'Samsung Internet'],
  [/EdgA?\/(\d+)/, 'Edge'],
  [/OPR\/(\d+)/, 'Opera'],
  [/FxiOS\/(\d+)/, 'Firefox'],
  [/CriOS\/(\d+)/, 'Chrome'],
  [/Firefox\/(\d+)/, 'Firefox'],
  [/Chrome\/(\d+)/, 'Chrome'],
  [/Version\/(\d+(?:\.\d+)?).*Safari/, 'Safari'],
];

/** Chromium's client hints (not in every browser's types). */
interface UserAgentHints {
  readonly platform: string;
  getHighEntropyValues(hints: string[]): Promise<{ platformVersion?: string }>;
}

/** The system named by the user agent: "Android 14", "iOS 17.4", "Windows". */
function systemOf(agent: string): string {
  const android = /Android (\d+(?:\.\d+)?)/.exec(agent)?.[1];
  const ios = /(?:iPhone|iPad|iPod).*? OS (\d+)[_.](\d+)/.exec(agent);
  if (android !== undefined) return `Android ${android}`;
  if (ios !== null) return `iOS ${ios[1]}.${ios[2]}`;
  if (/Macintosh/.test(agent)) return navigator.maxTouchPoints > 1 ? 'iPadOS' : 'macOS';
  if (/Windows/.test(agent)) return 'Windows';
  if (/CrOS/.test(agent)) return 'ChromeOS';
  if (/Linux/.test(agent)) return 'Linux';
  return 'an unknown system';
}

/**
 * The phone's browser and system in a few words ("Chrome 131 on Android 14"), from the user agent;
 * Chromium's client hints give the real Android version its reduced user agent hides. Never throws.
 */
export async function deviceDescription(): Promise<string> {
  const agent = navigator.userAgent;
  let browser = 'A browser';
  for (const [pattern, name] of BROWSERS) {
    const version = pattern.exec(agent)?.[1];
    if (version !== undefined) {
      browser = `${name} ${version}`;
      break;
    }
  }
  let system = systemOf(agent);
  const hints = (navigator as Navigator & { userAgentData?: UserAgentHints }).userAgentData;
  if (hints?.platform === 'Android') {
    try {
      const { platformVersion } = await hints.getHighEntropyValues(['platformVersion']);
      const major = platformVersion?.split('.')[0];
      if (major) system = `Android ${major}`;
    } catch {
      // The user agent's own figure stands.
    }
  }
  return `${browser} on ${system}`.slice(0, MAX_DEVICE_TEXT);
}
