import {
  RTCPeerConnection,
  type RTCPeerConnectionConfig,
  RTCRtpCodecParameters,
  useFIR,
  useNACK,
  usePLI,
} from 'werift';
import type { LiveConfig } from '../../config/config.ts';

/** The embedded engine's part of the configuration. */
export type EmbeddedConfig = Extract<LiveConfig, { engine: 'embedded' }>;

/** The media kinds of the three m-lines, in protocol order: camera, microphone, screen. */
export const LINE_KINDS = ['video', 'audio', 'video'] as const;
export type LineKind = (typeof LINE_KINDS)[number];
/** The media kinds of the phone's m-lines: its camera's video alone. */
export const PHONE_LINE_KINDS = ['video'] as const;

/**
 * Seconds ICE gathering waits for a STUN server's answer (werift's default is 5): an offer or answer
 * goes out only once gathering is complete, so an unreachable STUN server delays every connection by
 * this much.
 */
const STUN_GATHER_TIMEOUT_SECONDS = 3;

/**
 * The codecs every peer connection offers and accepts: VP8 for both video lines (every browser
 * encodes it in software; one codec end to end means nothing is transcoded and a subscriber never
 * meets a codec its publisher did not send) and Opus for the microphone. Fresh objects each time:
 * werift writes the payload types it assigns into them.
 */
function codecs(): NonNullable<RTCPeerConnectionConfig['codecs']> {
  return {
    video: [
      new RTCRtpCodecParameters({
        mimeType: 'video/VP8',
        clockRate: 90000,
        rtcpFeedback: [useNACK(), usePLI(), useFIR()],
      }),
    ],
    audio: [
      new RTCRtpCodecParameters({
        mimeType: 'audio/opus',
        clockRate: 48000,
        channels: 2,
        parameters: 'minptime=10;useinbandfec=1',
      }),
    ],
  };
}

/**
 * werift's settings for one peer connection of the engine: the UDP port range, the addresses
 * advertised, the TURN/STUN servers, and one transport for all three lines (BUNDLE). werift opens
 * one UDP socket (bound to all interfaces) per advertised address. Without LIVE_PUBLIC_IP those are
 * the machine's own addresses, IPv4 and IPv6; with it, that address alone (werift's
 * iceAdditionalHostAddresses, with the machine's own left out), which a 1:1 NAT or a forwarded port
 * range maps to this machine: one socket per connection. Returns a fresh object.
 */
export function peerSettings(
  config: EmbeddedConfig,
  portRange: [number, number] = [config.udpPortMin, config.udpPortMax],
): RTCPeerConnectionConfig {
  const addresses =
    config.publicIp === undefined
      ? {}
      : { iceAdditionalHostAddresses: [config.publicIp], iceUseIpv4: false, iceUseIpv6: false };
  return {
    codecs: codecs(),
    headerExtensions: { audio: [], video: [] },
    iceServers: config.iceServers.map((server) => ({ ...server })),
    icePortRange: portRange,
    ...addresses,
    iceStunGatherTimeout: STUN_GATHER_TIMEOUT_SECONDS,
    bundlePolicy: 'max-bundle',
  };
}

/** Whether the configured ICE servers include a STUN server (a `stun:` address). */
export function hasStunServer(config: EmbeddedConfig): boolean {
  return config.iceServers.some((server) => server.urls.startsWith('stun:'));
}

/**
 * Stops werift from asking Google's public STUN server for this connection's public address: werift
 * falls back to stun.l.google.com when no STUN server is configured, which would make the service
 * contact a third party for every connection (and wait for it where the network has no way out).
 * Call it after the connection has its transport (after addTransceiver or setRemoteDescription)
 * and before setLocalDescription, which gathers. Returns nothing.
 */
export function withoutFallbackStun(pc: RTCPeerConnection): void {
  for (const transport of pc.iceTransports) transport.connection.stunServer = undefined;
}

/** A new werift peer connection with the engine's settings, its sockets taken from `portRange`. */
export function newPeerConnection(config: EmbeddedConfig, portRange: [number, number]): RTCPeerConnection {
  return new RTCPeerConnection(peerSettings(config, portRange));
}

/** Ports a cursor moves on per connection: more than the sockets one connection opens. */
const PORTS_PER_CONNECTION = 4;
/** The cursor wraps before the top of the range, so the range handed to werift keeps some room. */
const TOP_MARGIN = 256;

/**
 * Where each new connection looks for its UDP ports. werift takes a socket's port by trying every
 * port of the range from the lowest up, one event loop turn per port in use; with hundreds of
 * connections open on a busy engine that made setting one up take seconds. So each connection gets
 * the range from a cursor that moves on by PORTS_PER_CONNECTION and wraps to the bottom near the
 * top: its first try is a port nobody took recently. Ranges too narrow for that are handed over
 * whole. Returns the function giving the next connection's range.
 */
export function portCursor(config: EmbeddedConfig): () => [number, number] {
  const { udpPortMin: min, udpPortMax: max } = config;
  let cursor = min;
  return () => {
    if (max - min < 2 * TOP_MARGIN) return [min, max];
    const start = cursor;
    cursor += PORTS_PER_CONNECTION;
    if (cursor > max - TOP_MARGIN) cursor = min;
    return [start, max];
  };
}

/** The media kinds of a session description's m-lines, in order. */
export function mediaKinds(sdp: string): string[] {
  return [...sdp.matchAll(/^m=(\S+) /gm)].map((match) => match[1] ?? '');
}

/** The mids of a session description's m-lines, in order. */
export function mediaIds(sdp: string): string[] {
  return [...sdp.matchAll(/^a=mid:(\S+)/gm)].map((match) => match[1] ?? '');
}

/** The ports of a session description's m-lines, in order (0: a rejected line). */
export function mediaPorts(sdp: string): number[] {
  return [...sdp.matchAll(/^m=\S+ (\d+) /gm)].map((match) => Number(match[1]));
}

/**
 * A browser's session description without its mDNS host candidates (`….local`). The engine cannot
 * resolve a browser's mDNS name (it is not on the browser's network), and werift would open a
 * multicast DNS socket per connection to try for 10 s; the browser is found through its STUN checks
 * (a peer-reflexive candidate) or its TURN relay instead. Returns the description.
 */
export function withoutMdnsCandidates(sdp: string): string {
  return sdp
    .split(/\r?\n/)
    .filter((line) => !/^a=candidate:\S+ \d+ \S+ \d+ \S+\.local /i.test(line))
    .join('\r\n');
}
