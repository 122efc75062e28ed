/**
 * The page's media as the live client handles it: its own copies of the tracks, and the encodings
 * the proctor gets (src/live/protocol.ts describes the m-line order).
 */
import type { Media, StreamKind } from './types.ts';

/** The camera as the proctor gets it: about 640×360 at 15 frames a second. */
const CAMERA_HEIGHT = 360;
const CAMERA_FPS = 15;
const CAMERA_BITRATE = 600_000;
/** The screen at a low frame rate (text stays sharp; motion does not matter). */
const SCREEN_WIDTH = 1280;
const SCREEN_FPS = 2;
const SCREEN_BITRATE = 400_000;

export const NO_MEDIA: Media = { camera: null, screen: null };

/**
 * Own copies of the tracks to publish: the proctor's copy can be stopped, scaled and hinted without
 * touching the streams the room records (and the LiveKit client stops what it unpublishes).
 */
export function cloneMedia(media: Media): Media {
  const copy = (stream: MediaStream | null) => {
    const tracks = stream?.getTracks().filter((track) => track.readyState === 'live') ?? [];
    return tracks.length === 0 ? null : new MediaStream(tracks.map((track) => track.clone()));
  };
  const screen = copy(media.screen);
  for (const track of screen?.getVideoTracks() ?? []) track.contentHint = 'detail';
  return { camera: copy(media.camera), screen };
}

/** Stops the copies cloneMedia made. */
export function stopMedia(media: Media): void {
  for (const stream of [media.camera, media.screen]) stream?.getTracks().forEach((track) => track.stop());
}

/** True when `media` has a track to send. */
export function hasTracks(media: Media): boolean {
  return (media.camera?.getTracks().length ?? 0) + (media.screen?.getTracks().length ?? 0) > 0;
}

/** A key naming the original tracks, so publishing the same streams again changes nothing. */
export function mediaKey(media: Media): string {
  return [media.camera, media.screen]
    .map((stream) =>
      (stream?.getTracks() ?? [])
        .filter((track) => track.readyState === 'live')
        .map((track) => track.id)
        .join('+'),
    )
    .join('|');
}

/**
 * The encoding of the camera (about 640×360 at 15 fps) or the screen (at most 1280 wide, 2 fps),
 * scaled from what the track delivers; the capture itself is left as the recording wants it.
 */
export function encodingFor(kind: StreamKind, track: MediaStreamTrack | null): RTCRtpEncodingParameters {
  const settings = track?.getSettings() ?? {};
  if (kind === 'camera') {
    const height = settings.height ?? CAMERA_HEIGHT;
    return {
      maxFramerate: CAMERA_FPS,
      maxBitrate: CAMERA_BITRATE,
      scaleResolutionDownBy: Math.max(1, height / CAMERA_HEIGHT),
    };
  }
  const width = settings.width ?? SCREEN_WIDTH;
  return {
    maxFramerate: SCREEN_FPS,
    maxBitrate: SCREEN_BITRATE,
    scaleResolutionDownBy: Math.max(1, width / SCREEN_WIDTH),
  };
}

/** The three tracks in m-line order: camera video, microphone, screen video. */
export function tracksInOrder(
  media: Media,
): readonly [MediaStreamTrack | null, MediaStreamTrack | null, MediaStreamTrack | null] {
  return [
    media.camera?.getVideoTracks()[0] ?? null,
    media.camera?.getAudioTracks()[0] ?? null,
    media.screen?.getVideoTracks()[0] ?? null,
  ];
}

/** What the phone publishes of `media`: its camera's video alone (no sound, no screen). */
export function cameraVideoOnly(media: Media): Media {
  const video = media.camera?.getVideoTracks() ?? [];
  return { camera: video.length === 0 ? null : new MediaStream(video), screen: null };
}
