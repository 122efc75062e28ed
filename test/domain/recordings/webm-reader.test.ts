import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { type WebmFrame, type WebmHeader, WebmReader } from '../../../src/domain/recordings/webm-reader.ts';

const FIXTURES = path.resolve(import.meta.dirname, '../../fixtures/recordings');
const chunks = Array.from({ length: 5 }, (_, index) =>
  fs.readFileSync(path.join(FIXTURES, `camera-a-${index}.webm`)),
);
const whole = Buffer.concat(chunks);

/** Reads `pieces` in order (calling `between` after each). Returns the headers and frames seen. */
function read(
  pieces: readonly Uint8Array[],
  between: (reader: WebmReader, index: number) => void = () => undefined,
): { headers: WebmHeader[]; frames: WebmFrame[]; resyncs: number } {
  const headers: WebmHeader[] = [];
  const frames: WebmFrame[] = [];
  const reader = new WebmReader({
    segment: (header) => headers.push(header),
    frame: (frame) => frames.push(frame),
  });
  for (const [index, piece] of pieces.entries()) {
    reader.push(piece);
    between(reader, index);
  }
  return { headers, frames, resyncs: reader.resyncs };
}

function split(bytes: Buffer, size: number): Buffer[] {
  const pieces: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += size) pieces.push(bytes.subarray(at, at + size));
  return pieces;
}

describe('WebmReader', () => {
  const reference = read([whole]);

  it("reads MediaRecorder's stream: a VP8 and an Opus track, key frames every 2 s", () => {
    assert.equal(reference.headers.length, 1);
    assert.deepEqual(
      reference.headers[0]?.tracks.map((track) => [track.type, track.codecId]),
      [
        ['audio', 'A_OPUS'],
        ['video', 'V_VP8'],
      ],
    );
    const video = reference.headers[0]?.tracks.find((track) => track.type === 'video')?.number;
    const keys = reference.frames
      .filter((frame) => frame.track === video && frame.key)
      .map((frame) => frame.timestampMs);
    assert.ok(keys.length >= 7, `key frames at ${keys.join(', ')}`);
    for (let index = 1; index < keys.length; index += 1) {
      assert.ok((keys[index] ?? 0) - (keys[index - 1] ?? 0) <= 2600, `key frames ${keys.join(', ')}`);
    }
    assert.equal(reference.resyncs, 0);
  });

  it('reads the same frames whatever the pieces it is fed (a chunk ends inside a block)', () => {
    for (const size of [1, 7, 4096, 100_000]) {
      const pieces = read(split(whole, size));
      assert.equal(pieces.frames.length, reference.frames.length, `pieces of ${size}`);
      assert.deepEqual(
        pieces.frames.map((frame) => frame.timestampMs),
        reference.frames.map((frame) => frame.timestampMs),
      );
    }
  });

  it('after a missing chunk, goes on at the next cluster, video from its next key frame', () => {
    const damaged = read([chunks[0], chunks[1], chunks[3], chunks[4]] as Uint8Array[], (reader, index) => {
      if (index === 1) reader.discontinuity();
    });
    const video = damaged.headers[0]?.tracks.find((track) => track.type === 'video')?.number;
    const afterGap = damaged.frames.filter((frame) => frame.track === video && frame.timestampMs > 8000);
    assert.ok(afterGap.length > 0, 'frames after the missing chunk');
    assert.equal(afterGap[0]?.key, true, 'video resumes at a key frame');
    assert.ok(damaged.frames.length < reference.frames.length);
  });

  it('searches forward through garbage without giving up the rest', () => {
    const garbage = Buffer.alloc(5000, 0x42);
    const cut = chunks[1]?.subarray(0, 20_000) as Buffer;
    const damaged = read([chunks[0], cut, garbage, chunks[2], chunks[3], chunks[4]] as Uint8Array[]);
    assert.ok(damaged.resyncs >= 1);
    const last = damaged.frames.at(-1)?.timestampMs ?? 0;
    assert.equal(last, reference.frames.at(-1)?.timestampMs);
  });

  it('starts a new segment at a new EBML header (a reload)', () => {
    const second = Array.from({ length: 4 }, (_, index) =>
      fs.readFileSync(path.join(FIXTURES, `camera-b-${index}.webm`)),
    );
    const both = read([...chunks, ...second]);
    assert.equal(both.headers.length, 2);
  });
});

describe('WebmReader on hostile bytes', () => {
  it('never loops on a resynchronisation point that is not one, and reads what follows', () => {
    const fake = Buffer.from([0x1a, 0x45, 0xdf, 0xa3, 0x01, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]);
    const headers: WebmHeader[] = [];
    const reader = new WebmReader({ segment: (header) => headers.push(header), frame: () => undefined });
    reader.push(Buffer.concat([fake, fake, Buffer.alloc(100, 0), fake]));
    reader.push(chunks[0] as Uint8Array);
    assert.equal(headers.length, 1);
  });
});
