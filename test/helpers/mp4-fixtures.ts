/**
 * Fragmented-MP4 recordings in the shape Safari's MediaRecorder writes them (H.264 + AAC; the first
 * chunk holds the init segment, ftyp + moov, and the first fragment; every later chunk one moof +
 * mdat fragment), made at test time with Debian's ffmpeg (scripts/ensure-tools.sh installs it), so
 * no large binary is committed.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const FFMPEG = process.env.FFMPEG_PATH ?? '/usr/bin/ffmpeg';

export interface Mp4RecordingOptions {
  /** Length in seconds (a multiple of fragmentSeconds). */
  readonly seconds: number;
  /** Seconds per fragment, hence per chunk (Safari: the MediaRecorder timeslice). */
  readonly fragmentSeconds?: number;
  /** With an AAC track (the webcam's); without, video only (the screen's). */
  readonly audio?: boolean;
  /** The lavfi test pattern: a second recording of a session (a reload) may use another. */
  readonly pattern?: string;
  readonly size?: string;
}

/** Whether ffmpeg is there (the tests fail with a pointer to scripts/ensure-tools.sh when not). */
export function assertFfmpeg(): void {
  if (!fs.existsSync(FFMPEG)) throw new Error(`${FFMPEG} missing: run scripts/ensure-tools.sh`);
}

/** The top-level boxes of an ISO BMFF file: [type, start, size]. */
export function topLevelBoxes(bytes: Buffer): [string, number, number][] {
  const boxes: [string, number, number][] = [];
  for (let at = 0; at + 8 <= bytes.length;) {
    const size = bytes.readUInt32BE(at);
    boxes.push([bytes.toString('latin1', at + 4, at + 8), at, size]);
    if (size < 8) break;
    at += size;
  }
  return boxes;
}

/**
 * Records `options.seconds` of a test pattern (and a tone) into a fragmented MP4 in `directory`
 * and cuts it into chunks at its moof boundaries. Returns the chunks' bytes, in order.
 */
export function mp4Chunks(directory: string, name: string, options: Mp4RecordingOptions): Buffer[] {
  assertFfmpeg();
  const fragment = options.fragmentSeconds ?? 4;
  const rate = 15;
  const file = path.join(directory, `${name}.mp4`);
  const inputs = [
    '-f',
    'lavfi',
    '-i',
    `${options.pattern ?? 'testsrc2'}=size=${options.size ?? '320x240'}:rate=${rate}`,
  ];
  const audio = options.audio ?? true;
  if (audio) inputs.push('-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=48000');
  execFileSync(FFMPEG, [
    '-hide_banner',
    '-loglevel',
    'error',
    '-y',
    ...inputs,
    '-t',
    String(options.seconds),
    '-c:v',
    'libx264',
    '-preset',
    'veryfast',
    '-profile:v',
    'main',
    '-bf',
    '0',
    '-g',
    String(rate * fragment),
    '-keyint_min',
    String(rate * fragment),
    '-sc_threshold',
    '0',
    '-pix_fmt',
    'yuv420p',
    ...(audio ? ['-c:a', 'aac', '-b:a', '64k', '-ac', '1'] : []),
    '-movflags',
    'frag_keyframe+empty_moov+default_base_moof',
    '-frag_duration',
    String(fragment * 1_000_000),
    file,
  ]);
  const bytes = fs.readFileSync(file);
  fs.rmSync(file);
  const boxes = topLevelBoxes(bytes);
  const moofs = boxes.filter(([type]) => type === 'moof').map(([, start]) => start);
  const end = boxes.find(([type]) => type === 'mfra')?.[1] ?? bytes.length; // Safari writes no mfra
  return moofs.map((start, index) => bytes.subarray(index === 0 ? 0 : start, moofs[index + 1] ?? end));
}
