// @ts-check
/**
 * Episodes of the automated flags (docs/automated-flags.md). A detector says, as often as it looks,
 * whether its signal holds ("no face now", "speech now"); an episode opens once the signal has held
 * for its threshold and is reported at once with no end, then again with its end once the signal
 * has been gone for a moment. One incident per episode, never one per frame. The episode's start is
 * when the signal began, not when the threshold was crossed, so the reviewer sees the whole of it.
 */

/**
 * @typedef {'no_face' | 'multiple_faces' | 'looking_away' | 'face_mismatch' | 'speech' | 'tab_switch'
 *   | 'screen_share_ended' | 'fullscreen_exit' | 'second_screen' | 'virtual_camera'} FlagType
 * @typedef {{ key: string, type: FlagType, confidence: number, offset_time: number,
 *   end_offset_time: number | null }} FlagReport
 * @typedef {{
 *   since: number, startOffset: number, lastSeen: number, confidence: number,
 *   open: { key: string, offset: number } | null
 * }} Signal
 */

/** How long a signal must be gone before its episode ends, so one missed frame does not split it. */
export const END_GRACE_MS = 1500;

/** A short random episode id: the server upserts by it (≤ 64 characters). */
function episodeKey(/** @type {FlagType} */ type) {
  const random = new Uint32Array(2);
  crypto.getRandomValues(random);
  return `${type}-${random[0]?.toString(36)}${random[1]?.toString(36)}`;
}

export class Episodes {
  /**
   * @param {(report: FlagReport) => void} report sends one report (never throws)
   * @param {() => number} offsetAt seconds since the exam's start, now
   * @param {() => number} [now] the clock in milliseconds (performance.now; tests hold it still)
   */
  constructor(report, offsetAt, now = () => performance.now()) {
    this.report = report;
    this.offsetAt = offsetAt;
    this.now = now;
    /** @type {Map<FlagType, Signal>} */
    this.signals = new Map();
  }

  /**
   * Says whether `type`'s signal holds now, with the detector's confidence (0..1). An episode opens
   * once it has held for `thresholdMs`; `graceMs` is how long it must be gone before the episode ends.
   * @param {FlagType} type
   * @param {boolean} active
   * @param {number} confidence
   * @param {number} thresholdMs
   * @param {number} [graceMs]
   */
  set(type, active, confidence, thresholdMs, graceMs = END_GRACE_MS) {
    const now = this.now();
    const signal = this.signals.get(type);
    if (active) {
      if (signal === undefined) {
        // The offset is taken when the signal begins: the episode starts there.
        this.signals.set(type, {
          since: now,
          startOffset: this.offsetAt(),
          lastSeen: now,
          confidence,
          open: null,
        });
      } else {
        signal.lastSeen = now;
        signal.confidence = Math.max(signal.confidence, confidence);
      }
      this.check(type, thresholdMs);
      return;
    }
    if (signal === undefined) return;
    if (now - signal.lastSeen < graceMs) return;
    this.close(type);
  }

  /**
   * Opens the episode of a signal that has held long enough.
   * @param {FlagType} type
   * @param {number} thresholdMs
   */
  check(type, thresholdMs) {
    const signal = this.signals.get(type);
    if (signal === undefined || signal.open !== null) return;
    if (this.now() - signal.since < thresholdMs) return;
    const offset = signal.startOffset;
    signal.open = { key: episodeKey(type), offset };
    this.report({
      key: signal.open.key,
      type,
      confidence: round(signal.confidence),
      offset_time: offset,
      end_offset_time: null,
    });
  }

  /**
   * Ends a signal: its open episode, if any, is reported with its end; a signal that never reached
   * its threshold is forgotten.
   * @param {FlagType} type
   */
  close(type) {
    const signal = this.signals.get(type);
    this.signals.delete(type);
    if (signal?.open == null) return;
    this.report({
      key: signal.open.key,
      type,
      confidence: round(signal.confidence),
      offset_time: signal.open.offset,
      end_offset_time: Math.max(signal.open.offset, this.offsetAt()),
    });
  }

  /** Ends every open episode (the exam is finishing or the detectors stop). */
  closeAll() {
    for (const type of [...this.signals.keys()]) this.close(type);
  }

  /** Whether `type` has an episode open now. */
  isOpen(/** @type {FlagType} */ type) {
    return this.signals.get(type)?.open != null;
  }
}

/** A confidence as the API takes it: 0..1, two decimals. */
function round(/** @type {number} */ value) {
  return Math.round(Math.min(1, Math.max(0, value)) * 100) / 100;
}
