import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ALL_FORMATS, EncodedPacketSink, FilePathSource, Input } from 'mediabunny';
import { type WebmFrame, type WebmHeader, WebmReader } from '../../../src/domain/recordings/webm-reader.ts';
import { WebmWriter } from '../../../src/domain/recordings/webm-writer.ts';

const FIXTURES = path.resolve(import.meta.dirname, '../../fixtures/recordings');
const camera = Buffer.concat(
  Array.from({ length: 5 }, (_, index) => fs.readFileSync(path.join(FIXTURES, `camera-a-${index}.webm`))),
);

/** The fixture recorder's header and frames. */
function readFixture(): { header: WebmHeader; frames: WebmFrame[] } {
  let header: WebmHeader | undefined;
  const frames: WebmFrame[] = [];
  const reader = new WebmReader({
    segment: (found) => (header ??= found),
    frame: (frame) => frames.push(frame),
  });
  reader.push(camera);
  if (header === undefined) throw new Error('the fixture has no header');
  return { header, frames };
}

/** The fixture's frames repeated `passes` times, each pass `period` ms after the one before. */
function repeated(frames: readonly WebmFrame[], passes: number, period: number): WebmFrame[] {
  return Array.from({ length: passes }, (_, pass) =>
    frames.map((frame) => ({ ...frame, timestampMs: frame.timestampMs + pass * period })),
  ).flat();
}

describe('WebmWriter', () => {
  const { header, frames } = readFixture();
  const video = header.tracks.find((track) => track.type === 'video');
  const lastMs = Math.max(...frames.map((frame) => frame.timestampMs));
  const period = Math.ceil((lastMs + 100) / 1000) * 1000;
  const written = repeated(frames, 10, period);
  const durationMs = 9 * period + lastMs + 33;
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'invigil-webm-writer-'));
  const file = path.join(directory, 'out.webm');
  let input: Input;

  before(async () => {
    const writer = await WebmWriter.open(file, header.tracks);
    for (const [index, frame] of written.entries()) {
      writer.add(frame.track, frame.timestampMs, frame.key, frame.data);
      if (index % 50 === 0) await writer.drain();
    }
    await writer.finish(durationMs);
    input = new Input({ source: new FilePathSource(file), formats: ALL_FORMATS });
  });

  after(() => {
    input.dispose();
    fs.rmSync(directory, { recursive: true, force: true });
  });

  it('writes a file whose duration is the one given', async () => {
    assert.ok(Math.abs((await input.computeDuration()) - durationMs / 1000) < 0.05);
  });

  it('writes Cues (named in the SeekHead), one per cluster that starts with a video key frame', () => {
    const bytes = fs.readFileSync(file);
    const cues = Buffer.from([0x1c, 0x53, 0xbb, 0x6b]);
    const named = bytes.indexOf(cues);
    assert.ok(named !== -1 && named < 200, 'the SeekHead names the Cues');
    const element = bytes.indexOf(cues, named + 4);
    assert.ok(element > named, 'the Cues follow the clusters');
    const cuePoints = bytes
      .subarray(element)
      .filter((byte, at, all) => byte === 0xbb && all[at + 2] === 0xb3).length;
    const keyFrames = written.filter((frame) => frame.track === video?.number && frame.key).length;
    assert.equal(cuePoints, keyFrames);
  });

  it('keeps every frame, in time order per track', async () => {
    const track = await input.getPrimaryVideoTrack();
    assert.ok(track !== null);
    const sink = new EncodedPacketSink(track);
    let count = 0;
    let previous = -1;
    for await (const packet of sink.packets()) {
      assert.ok(packet.timestamp >= previous);
      previous = packet.timestamp;
      count += 1;
    }
    assert.equal(count, written.filter((frame) => frame.track === video?.number).length);
  });

  it('lands a seek on the last key frame at or before the time', async () => {
    const track = await input.getPrimaryVideoTrack();
    assert.ok(track !== null);
    const target = 5 * period + 2500;
    const keys = written
      .filter((frame) => frame.track === video?.number && frame.key && frame.timestampMs <= target)
      .map((frame) => frame.timestampMs);
    const packet = await new EncodedPacketSink(track).getKeyPacket(target / 1000);
    assert.ok(packet !== null);
    assert.equal(Math.round(packet.timestamp * 1000), Math.max(...keys));
  });
});
