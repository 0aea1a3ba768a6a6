/** The public shapes of the local voice server: its options, sessions, packets, utterances and events. */
import { performance } from 'node:perf_hooks';
import type { DaveEvent } from './dave/gateway.ts';
import { DAVE_PROTOCOL_VERSION } from './dave/opcodes.ts';

export interface FakeVoiceServerOptions {
  /** When set, an Identify or Resume with another token is closed with 4004. */
  expectedToken?: string;
  /** Sent in Hello; the client heartbeats at this interval (Discord sends about 13750). */
  heartbeatIntervalMs?: number;
  /** A packet whose decoded PCM is quieter than this (dBFS RMS) counts as silent. */
  silenceThresholdDb?: number;
  /** A pause in arrival longer than this ends an utterance (see `groupUtterances`). */
  utteranceGapMs?: number;
  /** This much consecutive silence ends an utterance (see `groupUtterances`). */
  utteranceSilenceMs?: number;
  /** Monotonic milliseconds used for `receivedAt` and friends (default performance.now). */
  now?: () => number;
  /** The highest DAVE protocol version offered (default 1; 0 answers every client with 0). */
  daveProtocolVersion?: number;
  /**
   * How long a session closed with a resumable code stays in its DAVE group waiting for the
   * client to resume, before it counts as gone.
   */
  resumeGraceMs?: number;
  /**
   * How many received packets `packets` keeps (the oldest are dropped first). Tests keep them all;
   * a long-running server (the playground) bounds its memory with this. A bound of 1024 or more may
   * be exceeded by an eighth before the oldest are dropped at once.
   */
  maxRetainedPackets?: number;
  /**
   * Decode every Opus frame back to PCM (default true). A load benchmark turns it off so that
   * hearing 10 000 packets a second does not take a core: then `pcm` is empty and only the Opus
   * silence frame counts as silent.
   */
  decodeOpus?: boolean;
  /**
   * SO_RCVBUF of the UDP socket (0: the system default). A load benchmark raises it so that its
   * measurements are not packets this server dropped while busy.
   */
  udpReceiveBufferBytes?: number;
}

export type ResolvedOptions = Required<Omit<FakeVoiceServerOptions, 'expectedToken'>> & FakeVoiceServerOptions;

export const DEFAULT_OPTIONS = {
  heartbeatIntervalMs: 13_750,
  silenceThresholdDb: -60,
  // @discordjs/voice never pauses mid-resource unless the connection is not Ready (resume, rejoin),
  // and it ends every resource with silence frames and speaking off, so the gap rule only matters
  // for stalls; 1 s keeps a stalled shared 2-core machine from splitting one message in two.
  utteranceGapMs: 1000,
  // Longer than a pause between sentences; the library's own end of resource is marked by
  // speaking 0, which ends an utterance at once.
  utteranceSilenceMs: 1000,
  now: () => performance.now(),
  daveProtocolVersion: DAVE_PROTOCOL_VERSION,
  resumeGraceMs: 5000,
  maxRetainedPackets: Infinity,
  decodeOpus: true,
  udpReceiveBufferBytes: 0,
} as const satisfies Required<Omit<FakeVoiceServerOptions, 'expectedToken'>>;

/** One voice session: created by an Identify, kept across Resumes. */
export interface VoiceSession {
  /** The guild id (Discord calls it server_id in the voice gateway). */
  serverId: string;
  /** The voice channel, when the local Discord announced the call (`announceCall`). */
  channelId?: string;
  userId: string;
  sessionId: string;
  ssrc: number;
  /** The 32-byte transport key sent in Session Description. */
  secretKey: Buffer;
  /** `now()` at Identify. */
  identifiedAt: number;
  /** What the client offered in Identify. */
  maxDaveProtocolVersion: number | undefined;
  /** The DAVE version Session Description announced (0: transport encryption only). */
  daveProtocolVersion: number | undefined;
  /** Sequence number of the last message sent to the client (binary DAVE messages included). */
  seq: number;
  /** The encryption mode chosen in Select Protocol, once chosen. */
  mode: string | undefined;
  /** The client's UDP address as it announced it in Select Protocol. */
  clientAddress: { address: string; port: number } | undefined;
  /** True while no websocket is attached (closed by either side and not resumed yet). */
  closed: boolean;
  /** False once the session was ended by a close code that forbids resuming. */
  resumable: boolean;
  /** Close codes of every websocket this session had, in order. */
  closeCodes: number[];
  /** How many times the client resumed this session. */
  resumes: number;
  /** Heartbeats received. */
  heartbeats: number;
  /** Last speaking flags the client sent (op 5), 0 when not speaking. */
  speaking: number;
  /** Speaking-off signals received so far; stamped on packets to split utterances. */
  speakingOffCount: number;
}

/** One RTP packet that decrypted correctly. */
export interface ReceivedPacket {
  guildId: string;
  /** The sender's voice channel, when its call was announced. */
  channelId?: string;
  /** The sender (a bot's user id). */
  userId?: string;
  ssrc: number;
  seq: number;
  timestamp: number;
  /** The 4-byte nonce counter that followed the packet. */
  nonce: number;
  /** `now()` when the datagram arrived. */
  receivedAt: number;
  /** The transport plaintext: a DAVE protocol frame when end-to-end encrypted, else the Opus frame. */
  frame: Buffer;
  /** `frame` passed DAVE's protocol frame check (it carries the E2EE framing). */
  daveFramed: boolean;
  /** What each simulated listener in the call made of `frame` (see SimulatedListener.hear). */
  heardBy: Record<string, 'decrypted' | 'plain' | 'failed'>;
  /** The Opus frame decoded: the one a listener decrypted, else `frame` when it is not E2EE. */
  opus: Buffer;
  /** Decoded 48 kHz stereo interleaved PCM (empty when `decodeError`). */
  pcm: Int16Array;
  /** The Opus silence frame, or PCM quieter than the threshold, or undecodable, or undecryptable. */
  silent: boolean;
  decodeError: boolean;
  /** DAVE-framed, and no simulated listener could decrypt it (nothing was decoded). */
  undecryptable: boolean;
  /** The session's speaking-off count when this packet arrived (when it was processed, for a held one: `holdPackets`). */
  speakingOffCount: number;
}

/** A spoken stretch of one ssrc, from its first to its last non-silent packet (see `groupUtterances`). */
export interface Utterance {
  guildId: string;
  /** The speaker's voice channel, when its call was announced. */
  channelId?: string;
  /** Who spoke (a bot's user id). */
  userId?: string;
  ssrc: number;
  /** `receivedAt` of the first and last packet. */
  start: number;
  end: number;
  /** Audio duration from the decoded samples (20 ms per usual frame), not from arrival times. */
  durationMs: number;
  /** Loudness of the non-silent packets' samples, dBFS RMS. */
  rmsDb: number;
  /** True once something ended it: speaking off, a long silence, or a gap. */
  complete: boolean;
  /** Packets (silence frames aside) that carried the DAVE framing, and that did not. */
  daveFrames: number;
  plainFrames: number;
  packets: ReceivedPacket[];
}

export interface WaitForAudioOptions {
  guildId?: string;
  /** Only what was said in this voice channel (its call must have been announced). */
  channelId?: string;
  /** Only what this user (bot) said. */
  userId?: string;
  /** Only an utterance at least this long counts (default: any non-empty one). */
  minDurationMs?: number;
  /** Only utterances whose first packet arrived at or after this `now()` value count. */
  startedAfter?: number;
  /** Rejects after this many wall-clock milliseconds (default 20 000). */
  timeoutMs?: number;
}

export interface FakeVoiceServerEvents {
  identify: [session: VoiceSession];
  selectProtocol: [session: VoiceSession];
  resume: [session: VoiceSession, info: { seqAck: number }];
  speaking: [session: VoiceSession, info: { speaking: number }];
  heartbeat: [session: VoiceSession | undefined, info: { seqAck: number | undefined }];
  packet: [packet: ReceivedPacket];
  close: [session: VoiceSession | undefined, info: { code: number; byServer: boolean }];
  /** A step of the DAVE protocol (dave/gateway.ts). */
  dave: [event: DaveEvent];
  /** Something the fake rejected (bad payload, failed decryption, unknown ssrc). Never 'error'. */
  protocolError: [message: string];
}

/** Counts of datagrams that did not become packets. */
export interface UdpStats {
  keepalives: number;
  ipDiscoveries: number;
  rejected: number;
}
