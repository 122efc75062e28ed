import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ALL_FORMATS, EncodedPacketSink, FilePathSource, Input } from 'mediabunny';
import {
  type AssembleInput,
  type ChunkRef,
  NoPlayableRecording,
  assembleRecording,
} from '../../../src/domain/recordings/assemble.ts';
import { Mp4BoxReader } from '../../../src/domain/recordings/mp4-boxes.ts';
import { mp4Chunks, topLevelBoxes } from '../../helpers/mp4-fixtures.ts';

const STARTED_AT = 1_700_000_000_000;

/** What the assembled file holds, read back by mediabunny. */
async function probe(file: string): Promise<{
  duration: number;
  video: { codec: string | null; packets: number; firstMs: number; keyTimes: number[] };
  audio: { codec: string | null; packets: number } | undefined;
  mime: string;
}> {
  const input = new Input({ source: new FilePathSource(file), formats: ALL_FORMATS });
  try {
    const [video] = await input.getVideoTracks();
    assert.ok(video, 'a video track');
    const keyTimes: number[] = [];
    let packets = 0;
    let firstMs = Number.POSITIVE_INFINITY;
    for await (const packet of new EncodedPacketSink(video).packets()) {
      packets += 1;
      firstMs = Math.min(firstMs, packet.timestamp * 1000);
      if (packet.type === 'key') keyTimes.push(packet.timestamp);
    }
    const [audio] = await input.getAudioTracks();
    let audioPackets = 0;
    if (audio) for await (const _packet of new EncodedPacketSink(audio).packets()) audioPackets += 1;
    return {
      duration: await input.computeDuration(),
      video: { codec: await video.getCodec(), packets, firstMs, keyTimes },
      audio: audio ? { codec: await audio.getCodec(), packets: audioPackets } : undefined,
      mime: await input.getMimeType(),
    };
  } finally {
    input.dispose();
  }
}

describe('assembling fragmented-MP4 chunks (Safari)', () => {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'invigil-mp4-assemble-'));
  /** First recorder: 20 s in 5 chunks of 4 s. Second (a reload): 12 s in 3 chunks. */
  let first: Buffer[] = [];
  let second: Buffer[] = [];
  let screen: Buffer[] = [];

  before(() => {
    first = mp4Chunks(directory, 'first', { seconds: 20 });
    second = mp4Chunks(directory, 'second', { seconds: 12, pattern: 'smptebars' });
    screen = mp4Chunks(directory, 'screen', { seconds: 12, audio: false });
  });

  after(() => fs.rmSync(directory, { recursive: true, force: true }));

  /** An input over these chunks, arriving at the given times (ms after the start); `bytes` may be cut. */
  function inputOf(
    chunks: readonly { bytes: Buffer | undefined; at: number; size?: number }[],
    overrides: Partial<AssembleInput> = {},
  ): AssembleInput & { reads: number[] } {
    const refs: ChunkRef[] = chunks.map((chunk, sequence) => ({
      sequence,
      storageKey: String(sequence),
      size: chunk.size ?? chunk.bytes?.length ?? 1000,
      createdAt: STARTED_AT + chunk.at,
    }));
    const reads: number[] = [];
    return {
      chunks: refs,
      reads,
      read(ref) {
        reads.push(ref.sequence);
        const bytes = chunks[ref.sequence]?.bytes;
        if (bytes === undefined) return Promise.resolve(undefined);
        // In small pieces, as storage streams them: a box spans pieces.
        const pieces: Uint8Array[] = [];
        for (let at = 0; at < bytes.length; at += 16_384) pieces.push(bytes.subarray(at, at + 16_384));
        return Promise.resolve(pieces);
      },
      startedAt: STARTED_AT,
      endedAt: null,
      outputPath: path.join(directory, `out-${Math.random().toString(16).slice(2)}.mp4`),
      gapThresholdMs: 5000,
      ...overrides,
    };
  }

  it('cuts the fixtures as Safari does: init segment and a fragment in chunk 0, one fragment in each other', () => {
    assert.equal(first.length, 5);
    assert.deepEqual(
      topLevelBoxes(first[0] ?? Buffer.alloc(0)).map(([type]) => type),
      ['ftyp', 'moov', 'moof', 'mdat'],
    );
    for (const chunk of first.slice(1)) {
      assert.deepEqual(
        topLevelBoxes(chunk).map(([type]) => type),
        ['moof', 'mdat'],
      );
    }
  });

  it('writes one seekable MP4 (H.264 + AAC, copied) as long as the recording, without gaps', async () => {
    const input = inputOf(first.map((bytes, index) => ({ bytes, at: (index + 1) * 4000 })));
    const result = await assembleRecording(input);
    assert.equal(result.contentType, 'video/mp4');
    assert.equal(result.segments, 1);
    assert.equal(result.chunksDamaged, 0);
    assert.deepEqual(result.gaps, []);
    assert.ok(Math.abs(result.durationSeconds - 20) < 0.5, `duration ${result.durationSeconds}`);
    const file = await probe(input.outputPath);
    assert.equal(file.video.codec, 'avc');
    assert.equal(file.audio?.codec, 'aac');
    assert.equal(file.video.packets, 20 * 15, 'every frame copied');
    assert.ok(Math.abs(file.duration - 20) < 0.5, `file duration ${file.duration}`);
    // Seekable: the file ends with an mfra (fragment random access) index naming each fragment.
    const boxes = topLevelBoxes(fs.readFileSync(input.outputPath)).map(([type]) => type);
    assert.equal(boxes.at(-1), 'mfra');
    assert.deepEqual(boxes.slice(0, 2), ['ftyp', 'moov']);
    assert.deepEqual(
      file.video.keyTimes.slice(0, 3).map((time) => Math.round(time)),
      [0, 4, 8],
    );
  });

  it('places a reload (a new init segment) by its arrival and reports the gap between', async () => {
    // The second recorder's first chunk arrives at 40 s: it began at 36 s, 16 s after the first ended.
    const input = inputOf([
      ...first.map((bytes, index) => ({ bytes, at: (index + 1) * 4000 })),
      ...second.map((bytes, index) => ({ bytes, at: 40_000 + index * 4000 })),
    ]);
    const result = await assembleRecording(input);
    assert.equal(result.segments, 2);
    assert.equal(result.gaps.length, 1);
    const [gap] = result.gaps;
    assert.ok(gap && Math.abs(gap.start - 20) < 0.5 && Math.abs(gap.end - 36) < 0.5, JSON.stringify(gap));
    assert.ok(Math.abs(result.durationSeconds - 48) < 0.5, `duration ${result.durationSeconds}`);
    const file = await probe(input.outputPath);
    assert.equal(file.video.packets, 32 * 15);
    assert.ok(
      file.video.keyTimes.some((time) => Math.abs(time - 36) < 0.1),
      'the reload starts at 36 s',
    );
    assert.ok(Math.abs(file.duration - 48) < 0.5, `file duration ${file.duration}`);
  });

  it('keeps a gap at the start, and one at the end up to when the recording ended', async () => {
    // The first chunk arrives at 14 s: recording began 10 s late. The exam ended at 60 s.
    const input = inputOf(
      first.map((bytes, index) => ({ bytes, at: 14_000 + index * 4000 })),
      { endedAt: STARTED_AT + 60_000 },
    );
    const result = await assembleRecording(input);
    assert.deepEqual(
      result.gaps.map((gap) => [Math.round(gap.start), Math.round(gap.end)]),
      [
        [0, 10],
        [30, 60],
      ],
    );
    const file = await probe(input.outputPath);
    assert.ok(Math.abs(file.video.firstMs - 10_000) < 100, `first frame at ${file.video.firstMs} ms`);
  });

  it('loses only a missing chunk’s fragment and resumes at the next one', async () => {
    const chunks = first.map((bytes, index) => ({
      bytes: index === 2 ? undefined : bytes,
      at: (index + 1) * 4000,
    }));
    const input = inputOf(chunks, { gapThresholdMs: 3000 });
    const result = await assembleRecording(input);
    assert.equal(result.chunksDamaged, 1);
    assert.equal(result.segments, 1);
    assert.deepEqual(
      result.gaps.map((gap) => [Math.round(gap.start), Math.round(gap.end)]),
      [[8, 12]],
    );
    const file = await probe(input.outputPath);
    assert.equal(file.video.packets, 16 * 15);
  });

  it('drops a fragment cut short and resynchronises at the next chunk’s fragment', async () => {
    const cut = first.map((bytes, index) => ({
      bytes: index === 1 ? bytes.subarray(0, Math.floor(bytes.length / 2)) : bytes,
      size: bytes.length,
      at: (index + 1) * 4000,
    }));
    const result = await assembleRecording(inputOf(cut, { gapThresholdMs: 3000 }));
    assert.equal(result.chunksDamaged, 1);
    assert.deepEqual(
      result.gaps.map((gap) => [Math.round(gap.start), Math.round(gap.end)]),
      [[4, 8]],
    );
    assert.ok(Math.abs(result.durationSeconds - 20) < 0.5);
  });

  it('skips fragments whose init segment is lost until the next recorder starts', async () => {
    const input = inputOf([
      { bytes: undefined, at: 4000 },
      ...first.slice(1).map((bytes, index) => ({ bytes, at: (index + 2) * 4000 })),
      ...second.map((bytes, index) => ({ bytes, at: 30_000 + index * 4000 })),
    ]);
    const result = await assembleRecording(input);
    assert.equal(result.segments, 1);
    assert.equal(result.chunksDamaged, 1);
    const file = await probe(input.outputPath);
    assert.equal(file.video.packets, 12 * 15, 'only the second recorder’s frames');
  });

  it('assembles a stream without sound (the screen’s) to a video-only MP4', async () => {
    const input = inputOf(screen.map((bytes, index) => ({ bytes, at: (index + 1) * 4000 })));
    const result = await assembleRecording(input);
    const file = await probe(input.outputPath);
    assert.equal(file.audio, undefined);
    assert.equal(file.video.packets, 12 * 15);
    assert.ok(Math.abs(result.durationSeconds - 12) < 0.5);
  });

  it('refuses a stream with no readable chunk as unplayable', async () => {
    const input = inputOf([
      { bytes: undefined, at: 4000 },
      { bytes: first[1], at: 8000 },
    ]);
    await assert.rejects(assembleRecording(input), NoPlayableRecording);
  });

  it('streams: each chunk is read once, in order, and the file grows while the chunks are read', async () => {
    // 20 copies of the 5-chunk recording (reloads each time): 400 s.
    const chunks = Array.from({ length: 20 }, (_, round) =>
      first.map((bytes, index) => ({ bytes, at: round * 20_000 + (index + 1) * 4000 })),
    ).flat();
    const input = inputOf(chunks);
    const sizes: number[] = [];
    const result = await assembleRecording({
      ...input,
      progress: () => {
        sizes.push(fs.existsSync(input.outputPath) ? fs.statSync(input.outputPath).size : 0);
        return Promise.resolve();
      },
    });
    assert.deepEqual(
      input.reads,
      chunks.map((_, index) => index),
    );
    assert.equal(result.segments, 20);
    assert.deepEqual(result.gaps, []);
    assert.ok(Math.abs(result.durationSeconds - 400) < 1, `duration ${result.durationSeconds}`);
    // Written as it goes (fragment by fragment), not held until the end.
    assert.ok(sizes.length >= 3 && (sizes[0] ?? 0) > 0, JSON.stringify(sizes));
    assert.ok(
      sizes.every((size, index) => index === 0 || size > (sizes[index - 1] ?? 0)),
      JSON.stringify(sizes),
    );
  });

  it('reads a box that spans chunks, and searches forward past bytes that are no box', () => {
    const units: string[] = [];
    const reader = new Mp4BoxReader({
      init: () => units.push('init'),
      fragment: () => units.push('fragment'),
    });
    const bytes = Buffer.concat([first[0] ?? Buffer.alloc(0), first[1] ?? Buffer.alloc(0)]);
    const half = Math.floor(bytes.length / 2);
    reader.push(bytes.subarray(0, half));
    reader.push(bytes.subarray(half));
    assert.deepEqual(units, ['init', 'fragment', 'fragment']);
    reader.push(Buffer.from('garbage, not a box at all'));
    reader.push(first[2] ?? Buffer.alloc(0));
    assert.deepEqual(units, ['init', 'fragment', 'fragment', 'fragment']);
    assert.equal(reader.resyncs, 1);
  });
});
