/**
 * Episodes of the automated flags (docs/automated-flags.md). Each detector says, every time it looks,
 * whether its signal holds ("no face now", "speech now"). Once a signal has held for its threshold an
 * episode opens and is reported at once, without an end; when the signal has then been gone for a
 * moment the same episode is reported again with its end. So a reviewer gets one incident per
 * episode, never one per frame, and its start is when the signal began rather than when the
 * threshold was crossed.
 */
import type { FlagType, RoomFlagRequest } from '../../shared/candidate-api.ts';

export type { FlagType };

/** One report of an episode, as POST /api/room/:token/flags takes it. */
export type FlagReport = Required<Pick<RoomFlagRequest, 'key' | 'type' | 'confidence' | 'offset_time'>> & {
  end_offset_time: number | null;
};

interface Signal {
  since: number;
  startOffset: number;
  lastSeen: number;
  confidence: number;
  open: { key: string; offset: number } | null;
}

/** How long a signal must be gone before its episode ends, so one missed frame does not split it. */
export const END_GRACE_MS = 1500;

/** A short random episode id; the server finds the episode's incident by it (at most 64 characters). */
function episodeKey(type: FlagType): string {
  const random = new Uint32Array(2);
  crypto.getRandomValues(random);
  return `${type}-${random[0]?.toString(36) ?? ''}${random[1]?.toString(36) ?? ''}`;
}

/** A confidence as the API takes it: 0 to 1, two decimals. */
function round(value: number): number {
  return Math.round(Math.min(1, Math.max(0, value)) * 100) / 100;
}

export class Episodes {
  private readonly report: (report: FlagReport) => void;
  private readonly offsetAt: () => number;
  private readonly now: () => number;
  private readonly signals = new Map<FlagType, Signal>();

  /**
   * @param report sends one report (never throws)
   * @param offsetAt seconds since the exam's start, now
   * @param now the clock in milliseconds (performance.now; tests hold it still)
   */
  constructor(
    report: (report: FlagReport) => void,
    offsetAt: () => number,
    now: () => number = () => performance.now(),
  ) {
    this.report = report;
    this.offsetAt = offsetAt;
    this.now = now;
  }

  /**
   * Says whether `type`'s signal holds now, with the detector's confidence (0 to 1). An episode opens
   * once the signal has held for `thresholdMs`; it ends once the signal has been gone for `graceMs`.
   */
  set(
    type: FlagType,
    active: boolean,
    confidence: number,
    thresholdMs: number,
    graceMs = END_GRACE_MS,
  ): void {
    const now = this.now();
    const signal = this.signals.get(type);
    if (active) {
      if (signal === undefined) {
        // The exam offset is read when the signal begins, since the episode starts there.
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

  /** Opens the episode of a signal that has held for `thresholdMs`, and reports it. */
  private check(type: FlagType, thresholdMs: number): void {
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
   * Ends a signal: an open episode is reported again with its end; a signal that never reached its
   * threshold is simply forgotten.
   */
  close(type: FlagType): void {
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
  closeAll(): void {
    for (const type of [...this.signals.keys()]) this.close(type);
  }

  /** Whether `type` has an episode open now. */
  isOpen(type: FlagType): boolean {
    return this.signals.get(type)?.open != null;
  }
}
