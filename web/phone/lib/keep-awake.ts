/** Keeping the phone's screen on (Screen Wake Lock API) and reading its battery (Battery Status API). */

export type WakeState = 'unknown' | 'on' | 'off' | 'unsupported' | 'refused';

/**
 * Holds a screen wake lock while a camera runs. `request()` asks again (after the page came back
 * into view, the browser drops the lock when it is hidden); `state` says how it went.
 */
export class ScreenWake {
  state: WakeState = 'unknown';
  #lock: WakeLockSentinel | undefined;
  readonly #onChange: (state: WakeState) => void;

  constructor(onChange: (state: WakeState) => void) {
    this.#onChange = onChange;
  }

  /** Asks the browser to keep the screen on, when the page is in view and none is held. Never throws. */
  async request(): Promise<void> {
    if (!('wakeLock' in navigator)) {
      this.#set('unsupported');
      return;
    }
    if (document.visibilityState !== 'visible') return;
    if (this.#lock !== undefined && !this.#lock.released) return;
    try {
      this.#lock = await navigator.wakeLock.request('screen');
      this.#lock.addEventListener('release', () => this.#set('off'));
      this.#set('on');
    } catch {
      this.#set('refused');
    }
  }

  /** Lets the screen lock again. Never throws. */
  async release(): Promise<void> {
    const held = this.#lock;
    this.#lock = undefined;
    if (held !== undefined && !held.released) await held.release().catch(() => undefined);
  }

  #set(state: WakeState): void {
    this.state = state;
    this.#onChange(state);
  }
}

/** The battery as Chromium reports it. */
export interface BatteryState {
  readonly level: number;
  readonly charging: boolean;
  addEventListener(type: 'levelchange' | 'chargingchange', listener: () => void): void;
}

/**
 * Follows the battery where the browser tells it. Returns it (null where the browser does not
 * say), calling `onChange` when its level or charging changes. Never throws.
 */
export async function watchBattery(onChange: (battery: BatteryState) => void): Promise<BatteryState | null> {
  const source = navigator as Navigator & { getBattery?: () => Promise<BatteryState> };
  if (typeof source.getBattery !== 'function') return null;
  let battery: BatteryState;
  try {
    battery = await source.getBattery();
  } catch {
    return null;
  }
  battery.addEventListener('levelchange', () => onChange(battery));
  battery.addEventListener('chargingchange', () => onChange(battery));
  return battery;
}
