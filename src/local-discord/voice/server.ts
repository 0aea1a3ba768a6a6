/**
 * A fake Discord voice server on 127.0.0.1: the voice gateway (v8, over TLS) plus the UDP media
 * socket. It decrypts the `aead_aes256_gcm_rtpsize` RTP packets @discordjs/voice sends and decodes
 * each Opus frame back to PCM, so an end-to-end test can check that the bot was heard, for how long
 * and how loudly. Protocol facts: shared/notes/discord-local-protocol.md, "Voice gateway (v8) and
 * UDP"; message shapes checked against @discordjs/voice 0.19.2 (Networking, VoiceWebSocket,
 * VoiceUDPSocket).
 *
 * Trust: the client always opens `wss://${endpoint}?v=8` with the default CA store, so a test must
 * call `trustCertificate(server.caCertPem)` before it joins (same process), or start a child
 * process with NODE_EXTRA_CA_CERTS pointing at a file holding `caCertPem`.
 *
 * Usage:
 *   const voice = await startFakeVoiceServer({ expectedToken: 'voice-token' });
 *   trustCertificate(voice.caCertPem);
 *   // VOICE_SERVER_UPDATE { token: 'voice-token', guild_id, endpoint: voice.endpoint }
 *   const heard = await voice.waitForAudio({ guildId, minDurationMs: 500 });
 *   expect(heard.rmsDb).toBeGreaterThan(-40);
 *   voice.closeConnection(guildId, 4015); // 4015 resume, 4014 Disconnected, 4006 rejoin
 *   await voice.close();
 *
 * DAVE: a client offering `max_dave_protocol_version` 1 gets version 1, and the fake acts as the
 * call's MLS delivery service and external sender (dave/gateway.ts). Audio is end to end encrypted
 * only between members of the group, so a test puts simulated listeners in the call:
 *   const alice = voice.simulateListener({ guildId, channelId, userId: aliceId });
 *   await voice.waitForDave(guildId); // the bot is in the group, every transition executed
 * Each packet then records what every listener made of it (`heardBy`), and its `opus` is the frame a
 * listener decrypted. A client offering 0 downgrades the call to transport encryption only, as
 * Discord did before DAVE was required. `daveProtocolVersion: 0` turns DAVE off in the fake.
 *
 * Deliberate differences from Discord: Hello is sent on open (as Discord does) rather than after
 * Identify; only `aead_aes256_gcm_rtpsize` is offered; heartbeat timeouts are not implemented;
 * one call per guild (simulated listeners name its channel).
 */
import { execFile } from 'node:child_process';
import { createDecipheriv, randomBytes, randomInt } from 'node:crypto';
import { createSocket, type RemoteInfo, type Socket as UdpSocket } from 'node:dgram';
import { EventEmitter } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { getCACertificates, setDefaultCACertificates } from 'node:tls';
import opus, { type OpusEncoder } from '@discordjs/opus';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import { DaveGateway, type DaveEvent, type DaveParticipant } from './dave/gateway.ts';
import { OPUS_SILENCE_FRAME } from './dave/frame.ts';
import type { SimulatedListener } from './dave/listener.ts';
import { BINARY_DAVE_OPS, DAVE_PROTOCOL_VERSION } from './dave/opcodes.ts';

/** Voice gateway opcodes the fake speaks (Discord voice gateway v8). */
const Op = {
  Identify: 0,
  SelectProtocol: 1,
  Ready: 2,
  Heartbeat: 3,
  SessionDescription: 4,
  Speaking: 5,
  HeartbeatAck: 6,
  Resume: 7,
  Hello: 8,
  Resumed: 9,
} as const;

/** Close codes the fake itself uses (Discord voice close event codes). */
export const VoiceCloseCode = {
  UnknownOpcode: 4001,
  FailedToDecode: 4002,
  NotAuthenticated: 4003,
  AuthenticationFailed: 4004,
  AlreadyAuthenticated: 4005,
  SessionNoLongerValid: 4006,
  SessionTimeout: 4009,
  ServerNotFound: 4011,
  UnknownProtocol: 4012,
  Disconnected: 4014,
  VoiceServerCrashed: 4015,
  UnknownEncryptionMode: 4016,
  E2EERequired: 4017,
} as const;

const CLOSE_REASONS: Record<number, string> = {
  4001: 'Unknown opcode',
  4002: 'Failed to decode payload',
  4003: 'Not authenticated',
  4004: 'Authentication failed',
  4005: 'Already authenticated',
  4006: 'Session no longer valid',
  4009: 'Session timeout',
  4011: 'Server not found',
  4012: 'Unknown protocol',
  4014: 'Disconnected',
  4015: 'Voice server crashed',
  4016: 'Unknown encryption mode',
  4017: 'E2EE/DAVE protocol required',
};

const ENCRYPTION_MODE = 'aead_aes256_gcm_rtpsize';
const RTP_OPUS_PAYLOAD_TYPE = 0x78;
const RTP_HEADER_LENGTH = 12;
const GCM_TAG_LENGTH = 16;
const NONCE_SUFFIX_LENGTH = 4;
const IP_DISCOVERY_LENGTH = 74;
const KEEPALIVE_LENGTH = 8;
const SAMPLE_RATE = 48_000;
const CHANNELS = 2;

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
}

type ResolvedOptions = Required<Omit<FakeVoiceServerOptions, 'expectedToken'>> & FakeVoiceServerOptions;

const DEFAULT_OPTIONS = {
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
} as const satisfies Required<Omit<FakeVoiceServerOptions, 'expectedToken'>>;

/** One voice session: created by an Identify, kept across Resumes. */
export interface VoiceSession {
  /** The guild id (Discord calls it server_id in the voice gateway). */
  serverId: string;
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
  /** The session's speaking-off count when this packet arrived. */
  speakingOffCount: number;
}

/** A spoken stretch of one ssrc, from its first to its last non-silent packet (see `groupUtterances`). */
export interface Utterance {
  guildId: string;
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

/** Bookkeeping for one voice websocket. */
interface Connection {
  ws: WebSocket;
  session: VoiceSession | undefined;
  /** Set when the fake closes it, so the close event can tell who closed. */
  closedByServer: boolean;
}

/** Counts of datagrams that did not become packets. */
export interface UdpStats {
  keepalives: number;
  ipDiscoveries: number;
  rejected: number;
}

/**
 * Makes a self-signed certificate for IP 127.0.0.1 with the openssl CLI (node:crypto cannot issue
 * X.509 certificates). Cached: one certificate per process, so trusting it once is enough.
 */
let certificatePromise: Promise<{ key: string; cert: string }> | undefined;
function loopbackCertificate(): Promise<{ key: string; cert: string }> {
  certificatePromise ??= (async () => {
    const dir = await mkdtemp(join(tmpdir(), 'fake-voice-cert-'));
    try {
      const keyPath = join(dir, 'key.pem');
      const certPath = join(dir, 'cert.pem');
      await new Promise<void>((resolve, reject) => {
        execFile(
          'openssl',
          [
            'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
            '-keyout', keyPath, '-out', certPath, '-days', '2', '-subj', '/CN=fake-discord-voice',
            '-addext', 'subjectAltName=IP:127.0.0.1',
          ],
          (error) => (error ? reject(new Error(`openssl could not make a certificate: ${error.message}`)) : resolve()),
        );
      });
      return { key: await readFile(keyPath, 'utf8'), cert: await readFile(certPath, 'utf8') };
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  })();
  certificatePromise.catch(() => {
    certificatePromise = undefined;
  });
  return certificatePromise;
}

/**
 * Adds `pem` to this process's default CA store (Node >= 24.5), so TLS clients that pass no `ca`,
 * such as @discordjs/voice's `ws`, accept the fake's certificate. Idempotent.
 */
export function trustCertificate(pem: string): void {
  const current = getCACertificates('default');
  if (current.some((c) => c.trim() === pem.trim())) return;
  setDefaultCACertificates([...current, pem]);
}

/** RMS loudness of 16-bit samples in dBFS (-Infinity for all zeros or no samples). */
export function rmsDb(samples: Int16Array | readonly Int16Array[]): number {
  const parts = samples instanceof Int16Array ? [samples] : samples;
  let sum = 0;
  let count = 0;
  for (const part of parts) {
    for (const s of part) sum += s * s;
    count += part.length;
  }
  if (count === 0 || sum === 0) return -Infinity;
  return 20 * Math.log10(Math.sqrt(sum / count) / 32768);
}

export interface GroupingOptions {
  /** A pause in arrival longer than this ends an utterance. */
  gapMs: number;
  /** This much consecutive silence (decoded duration) ends an utterance. */
  silenceMs: number;
  /** The current `now()`, to tell whether the last run has ended by a gap. */
  now: number;
  /** Each ssrc's current speaking-off count: a higher count than the run's means it ended. */
  speakingOffCounts?: ReadonlyMap<number, number>;
}

/**
 * Groups packets (in arrival order) into utterances per ssrc. An utterance runs from a non-silent
 * packet to the last non-silent one before a break: a speaking-off signal, `silenceMs` of
 * consecutive silence, or an arrival gap over `gapMs`. Shorter silences stay inside (pauses
 * between sentences; @discordjs/voice also slips one silence frame in after a resume).
 * @discordjs/voice ends each resource with 5 silence frames and speaking 0, so two messages played
 * back to back are two utterances.
 */
export function groupUtterances(packets: readonly ReceivedPacket[], options: GroupingOptions): Utterance[] {
  const { gapMs, silenceMs, now, speakingOffCounts } = options;
  const done: Utterance[] = [];
  const open = new Map<number, { packets: ReceivedPacket[]; trailingSilenceMs: number }>();
  const finish = (ssrc: number) => {
    const run = open.get(ssrc);
    open.delete(ssrc);
    if (run) done.push(toUtterance(run.packets, true));
  };
  for (const packet of packets) {
    const run = open.get(packet.ssrc);
    const last = run?.packets.at(-1);
    if (last && (packet.receivedAt - last.receivedAt > gapMs || packet.speakingOffCount !== last.speakingOffCount)) {
      finish(packet.ssrc);
    }
    const current = open.get(packet.ssrc);
    if (packet.silent) {
      if (!current) continue;
      current.trailingSilenceMs += packetMs(packet);
      if (current.trailingSilenceMs >= silenceMs) finish(packet.ssrc);
      else current.packets.push(packet);
      continue;
    }
    if (current) {
      current.packets.push(packet);
      current.trailingSilenceMs = 0;
    } else {
      open.set(packet.ssrc, { packets: [packet], trailingSilenceMs: 0 });
    }
  }
  for (const [ssrc, run] of open) {
    const last = run.packets.at(-1)!;
    const spokeOff = (speakingOffCounts?.get(ssrc) ?? last.speakingOffCount) > last.speakingOffCount;
    done.push(toUtterance(run.packets, spokeOff || now - last.receivedAt > gapMs));
  }
  return done.sort((a, b) => a.start - b.start);
}

/** Decoded duration of one packet (20 ms assumed when it did not decode). */
function packetMs(packet: ReceivedPacket): number {
  return packet.pcm.length > 0 ? (packet.pcm.length / CHANNELS / SAMPLE_RATE) * 1000 : 20;
}

function toUtterance(run: ReceivedPacket[], complete: boolean): Utterance {
  // Trailing silence (kept while it might have been a pause) is not part of the utterance.
  let lastLoud = run.length - 1;
  while (lastLoud > 0 && run[lastLoud]!.silent) lastLoud--;
  const packets = run.slice(0, lastLoud + 1);
  const first = packets[0]!;
  const last = packets.at(-1)!;
  return {
    guildId: first.guildId,
    ssrc: first.ssrc,
    start: first.receivedAt,
    end: last.receivedAt,
    durationMs: packets.reduce((ms, p) => ms + packetMs(p), 0),
    rmsDb: rmsDb(packets.filter((p) => !p.silent).map((p) => p.pcm)),
    complete,
    daveFrames: packets.filter((p) => p.daveFramed).length,
    plainFrames: packets.filter((p) => !p.daveFramed && !p.frame.equals(OPUS_SILENCE_FRAME)).length,
    packets,
  };
}

/**
 * The running fake. Sessions and packets are plain arrays so tests can inspect them directly;
 * events ('identify', 'resume', 'speaking', 'packet', ...) let tests wait for protocol steps.
 */
export class FakeVoiceServer extends EventEmitter<FakeVoiceServerEvents> {
  /** "127.0.0.1:PORT": what VOICE_SERVER_UPDATE's `endpoint` should carry. */
  readonly endpoint: string;
  /** The self-signed certificate (SAN IP:127.0.0.1) the voice gateway serves; trust it first. */
  readonly caCertPem: string;
  readonly udpPort: number;
  readonly sessions: VoiceSession[] = [];
  readonly packets: ReceivedPacket[] = [];
  readonly udpStats: UdpStats = { keepalives: 0, ipDiscoveries: 0, rejected: 0 };
  /** The DAVE delivery service and external sender of every guild's call. */
  readonly dave: DaveGateway;
  readonly #options: ResolvedOptions;
  readonly #https: HttpsServer;
  readonly #wss: WebSocketServer;
  readonly #udp: UdpSocket;
  readonly #connections = new Set<Connection>();
  readonly #decoders = new Map<number, OpusEncoder>();
  /** Messages sent with a seq, replayed after a resume past the client's seq_ack (buffered resume). */
  readonly #outbox = new WeakMap<VoiceSession, { seq: number; data: string | Buffer }[]>();
  /** Each session's place in its guild's DAVE call, once Session Description was sent. */
  readonly #participants = new WeakMap<VoiceSession, DaveParticipant>();
  /** Sessions closed with a resumable code, leaving their DAVE call unless they resume in time. */
  readonly #resumeTimers = new Map<VoiceSession, NodeJS.Timeout>();
  #closed = false;

  /** Use `startFakeVoiceServer`; the constructor takes already-listening sockets. */
  constructor(
    parts: { https: HttpsServer; wss: WebSocketServer; udp: UdpSocket; cert: string },
    options: ResolvedOptions,
  ) {
    super();
    this.#https = parts.https;
    this.#wss = parts.wss;
    this.#udp = parts.udp;
    this.caCertPem = parts.cert;
    this.#options = options;
    this.endpoint = `127.0.0.1:${(this.#https.address() as AddressInfo).port}`;
    this.udpPort = (this.#udp.address() as AddressInfo).port;
    this.#wss.on('connection', (ws) => this.#onConnection(ws));
    this.#udp.on('message', (msg, rinfo) => this.#onDatagram(msg, rinfo));
    this.dave = new DaveGateway({ protocolVersion: options.daveProtocolVersion, emit: (event) => this.emit('dave', event) });
  }

  /**
   * Puts a simulated listener (a davey session in this process) in `guildId`'s call in
   * `channelId`; it joins the DAVE group and decrypts what the other members send.
   */
  simulateListener(options: { guildId: string; channelId: string; userId: string }): SimulatedListener {
    return this.dave.addListener(options);
  }

  /** Resolves once `guildId`'s call is end-to-end encrypted and at rest (DaveGateway.settled). */
  waitForDave(guildId: string, timeoutMs = 20_000): Promise<void> {
    return new Promise((resolve, reject) => {
      const check = () => {
        if (!this.dave.settled(guildId)) return;
        cleanup();
        resolve();
      };
      // Listeners answer a turn of the event loop later, so poll as well as listen.
      const poll = setInterval(check, 10);
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`fake voice: guild ${guildId}'s call did not settle on DAVE within ${timeoutMs} ms: ${JSON.stringify(this.dave.snapshot(guildId), (_k, v: unknown) => (typeof v === 'bigint' ? Number(v) : v))}`));
      }, timeoutMs);
      const cleanup = () => {
        clearInterval(poll);
        clearTimeout(timer);
        this.off('dave', check);
      };
      this.on('dave', check);
      check();
    });
  }

  /** Utterances heard so far, optionally for one guild (see `groupUtterances`). */
  utterances(guildId?: string): Utterance[] {
    const packets = guildId === undefined ? this.packets : this.packets.filter((p) => p.guildId === guildId);
    const speakingOffCounts = new Map(this.sessions.map((s) => [s.ssrc, s.speakingOffCount]));
    return groupUtterances(packets, {
      gapMs: this.#options.utteranceGapMs,
      silenceMs: this.#options.utteranceSilenceMs,
      now: this.#options.now(),
      speakingOffCounts,
    });
  }

  /**
   * Resolves with the first complete utterance matching `opts` (already heard or still to come);
   * rejects after `timeoutMs` with a summary of what was heard.
   */
  waitForAudio(opts: WaitForAudioOptions = {}): Promise<Utterance> {
    const { guildId, minDurationMs = 1, startedAfter = -Infinity, timeoutMs = 20_000 } = opts;
    const find = () =>
      this.utterances(guildId).find((u) => u.complete && u.durationMs >= minDurationMs && u.start >= startedAfter);
    return new Promise((resolve, reject) => {
      const check = () => {
        const found = find();
        if (found) {
          cleanup();
          resolve(found);
        }
      };
      // Completion by a gap is only visible with time passing, so poll as well as listen.
      const poll = setInterval(check, Math.max(10, Math.min(50, this.#options.utteranceGapMs / 4)));
      const timer = setTimeout(() => {
        cleanup();
        const heard = this.utterances(guildId).map((u) => `${Math.round(u.durationMs)}ms@${u.rmsDb.toFixed(1)}dB`);
        reject(
          new Error(
            `no utterance${guildId ? ` in guild ${guildId}` : ''} of >= ${minDurationMs} ms within ${timeoutMs} ms; ` +
              `heard [${heard.join(', ')}], ${this.packets.length} packets, ${this.udpStats.rejected} rejected datagrams`,
          ),
        );
      }, timeoutMs);
      const cleanup = () => {
        clearInterval(poll);
        clearTimeout(timer);
        this.off('packet', check);
        this.off('speaking', check);
      };
      this.on('packet', check);
      this.on('speaking', check);
      check();
    });
  }

  /** Resolves with the arguments of the next `event` that satisfies `predicate` (default: any). */
  waitForEvent<K extends keyof FakeVoiceServerEvents>(
    event: K,
    predicate: (...args: FakeVoiceServerEvents[K]) => boolean = () => true,
    timeoutMs = 20_000,
  ): Promise<FakeVoiceServerEvents[K]> {
    return new Promise((resolve, reject) => {
      const listener = (...args: FakeVoiceServerEvents[K]) => {
        if (!predicate(...args)) return;
        clearTimeout(timer);
        this.off(event, listener as never);
        resolve(args);
      };
      const timer = setTimeout(() => {
        this.off(event, listener as never);
        reject(new Error(`fake voice: no matching '${String(event)}' event within ${timeoutMs} ms`));
      }, timeoutMs);
      this.on(event, listener as never);
    });
  }

  /**
   * Closes the open voice websocket of `guildId`'s latest session with `code` (4015, 4014, 4006...).
   * Codes the client may resume on (4015, < 4000) keep the session resumable; others end it.
   */
  closeConnection(guildId: string, code: number): void {
    const conn = [...this.#connections].reverse().find((c) => c.session?.serverId === guildId);
    if (!conn) throw new Error(`fake voice: no open voice websocket for guild ${guildId}`);
    this.#close(conn, code);
  }

  /** Stops the gateway and the UDP socket, dropping every connection. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const conn of this.#connections) conn.ws.terminate();
    this.#connections.clear();
    await new Promise<void>((resolve) => this.#wss.close(() => resolve()));
    this.#https.closeAllConnections();
    await new Promise<void>((resolve) => this.#https.close(() => resolve()));
    await new Promise<void>((resolve) => this.#udp.close(() => resolve()));
    this.#decoders.clear();
    for (const timer of this.#resumeTimers.values()) clearTimeout(timer);
    this.#resumeTimers.clear();
  }

  #onConnection(ws: WebSocket): void {
    const conn: Connection = { ws, session: undefined, closedByServer: false };
    this.#connections.add(conn);
    // Discord sends Hello as soon as the socket opens, before Identify or Resume.
    this.#send(conn, Op.Hello, { v: 8, heartbeat_interval: this.#options.heartbeatIntervalMs }, false);
    ws.on('message', (data, isBinary) => this.#onMessage(conn, data, isBinary));
    ws.on('error', (error) => this.emit('protocolError', `websocket error: ${error.message}`));
    ws.on('close', (code) => {
      this.#connections.delete(conn);
      const session = conn.session;
      if (session && this.#currentConnection(session) === undefined) {
        session.closed = true;
        session.closeCodes.push(code);
        this.#leaveDaveCall(session, conn.closedByServer && session.resumable);
      }
      this.emit('close', session, { code, byServer: conn.closedByServer });
    });
  }

  #currentConnection(session: VoiceSession): Connection | undefined {
    for (const conn of this.#connections) if (conn.session === session) return conn;
    return undefined;
  }

  #close(conn: Connection, code: number): void {
    conn.closedByServer = true;
    // @discordjs/voice resumes only on 4015 or codes below 4000 (Networking.onWsClose).
    if (conn.session && !(code === VoiceCloseCode.VoiceServerCrashed || code < 4000)) conn.session.resumable = false;
    conn.ws.close(code, CLOSE_REASONS[code] ?? 'Closed by fake voice server');
  }

  #send(conn: Connection, op: number, d: unknown, withSeq = true): void {
    if (withSeq && conn.session) return this.#sendToSession(conn.session, op, d);
    if (conn.ws.readyState === conn.ws.OPEN) conn.ws.send(JSON.stringify({ op, d }));
  }

  /** A JSON message with the session's next seq, to its current websocket (or the replay buffer). */
  #sendToSession(session: VoiceSession, op: number, d: unknown): void {
    const seq = ++session.seq;
    this.#deliver(session, seq, JSON.stringify({ op, d, seq }));
  }

  /** A binary DAVE message: `u16 seq, u8 op, payload` (daveprotocol.com, "Voice Gateway Opcodes"). */
  #sendBinaryToSession(session: VoiceSession, op: number, payload: Buffer): void {
    const seq = ++session.seq;
    const head = Buffer.alloc(3);
    head.writeUInt16BE(seq & 0xffff, 0);
    head.writeUInt8(op, 2);
    this.#deliver(session, seq, Buffer.concat([head, payload]));
  }

  #deliver(session: VoiceSession, seq: number, data: string | Buffer): void {
    let outbox = this.#outbox.get(session);
    if (!outbox) this.#outbox.set(session, (outbox = []));
    outbox.push({ seq, data });
    if (outbox.length > 200) outbox.shift();
    const conn = this.#currentConnection(session);
    if (conn && conn.ws.readyState === conn.ws.OPEN) conn.ws.send(data);
  }

  /** The session leaves its DAVE call now, or after the resume grace when it may come back. */
  #leaveDaveCall(session: VoiceSession, mayResume: boolean): void {
    const participant = this.#participants.get(session);
    if (!participant) return;
    clearTimeout(this.#resumeTimers.get(session));
    this.#resumeTimers.delete(session);
    if (!mayResume) {
      this.dave.leave(participant);
      return;
    }
    const timer = setTimeout(() => {
      this.#resumeTimers.delete(session);
      this.dave.leave(participant);
    }, this.#options.resumeGraceMs);
    timer.unref();
    this.#resumeTimers.set(session, timer);
  }

  #onMessage(conn: Connection, data: RawData, isBinary: boolean): void {
    if (isBinary) {
      // Binary messages are DAVE's MLS traffic: `u8 op, payload` from the client.
      const bytes = Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
      const participant = conn.session && this.#participants.get(conn.session);
      if (!participant) {
        this.emit('protocolError', 'binary voice gateway message before Session Description');
        return;
      }
      const op = bytes.length > 0 ? bytes[0]! : -1;
      if (!BINARY_DAVE_OPS.has(op)) {
        this.emit('protocolError', `unexpected binary voice gateway op ${op}`);
        return;
      }
      this.dave.receiveBinary(participant, op, bytes.subarray(1));
      return;
    }
    let packet: { op?: unknown; d?: unknown };
    try {
      packet = JSON.parse(String(data)) as { op?: unknown; d?: unknown };
    } catch {
      this.emit('protocolError', 'voice gateway message is not JSON');
      this.#close(conn, VoiceCloseCode.FailedToDecode);
      return;
    }
    const d = (typeof packet.d === 'object' && packet.d !== null ? packet.d : {}) as Record<string, unknown>;
    switch (packet.op) {
      case Op.Identify:
        this.#onIdentify(conn, d);
        return;
      case Op.Resume:
        this.#onResume(conn, d);
        return;
      case Op.Heartbeat: {
        if (conn.session) conn.session.heartbeats++;
        const seqAck = typeof d.seq_ack === 'number' ? d.seq_ack : undefined;
        this.#send(conn, Op.HeartbeatAck, { t: d.t }, false);
        this.emit('heartbeat', conn.session, { seqAck });
        return;
      }
      case Op.SelectProtocol:
        this.#onSelectProtocol(conn, d);
        return;
      case Op.Speaking: {
        const session = conn.session;
        if (!session) return this.#close(conn, VoiceCloseCode.NotAuthenticated);
        const speaking = typeof d.speaking === 'number' ? d.speaking : 0;
        if (speaking === 0 && session.speaking !== 0) session.speakingOffCount++;
        session.speaking = speaking;
        this.emit('speaking', session, { speaking });
        return;
      }
      default: {
        // DAVE's text ops (23 ready for transition, 31 invalid commit or welcome).
        const participant = conn.session && this.#participants.get(conn.session);
        if (participant && typeof packet.op === 'number' && this.dave.receiveJson(participant, packet.op, d)) return;
        this.emit('protocolError', `unhandled voice gateway op ${String(packet.op)}`);
      }
    }
  }

  #tokenOk(token: unknown): boolean {
    return this.#options.expectedToken === undefined || token === this.#options.expectedToken;
  }

  #onIdentify(conn: Connection, d: Record<string, unknown>): void {
    if (conn.session) return this.#close(conn, VoiceCloseCode.AlreadyAuthenticated);
    const { server_id, user_id, session_id, token, max_dave_protocol_version } = d;
    if (typeof server_id !== 'string' || typeof user_id !== 'string' || typeof session_id !== 'string') {
      this.emit('protocolError', 'identify is missing server_id, user_id or session_id');
      return this.#close(conn, VoiceCloseCode.FailedToDecode);
    }
    if (!this.#tokenOk(token)) return this.#close(conn, VoiceCloseCode.AuthenticationFailed);
    let ssrc: number;
    do ssrc = randomInt(1, 2 ** 31);
    while (this.sessions.some((s) => s.ssrc === ssrc));
    const session: VoiceSession = {
      serverId: server_id,
      userId: user_id,
      sessionId: session_id,
      ssrc,
      secretKey: randomBytes(32),
      identifiedAt: this.#options.now(),
      maxDaveProtocolVersion: typeof max_dave_protocol_version === 'number' ? max_dave_protocol_version : undefined,
      daveProtocolVersion: undefined,
      seq: 0,
      mode: undefined,
      clientAddress: undefined,
      closed: false,
      resumable: true,
      closeCodes: [],
      resumes: 0,
      heartbeats: 0,
      speaking: 0,
      speakingOffCount: 0,
    };
    this.sessions.push(session);
    conn.session = session;
    this.#send(conn, Op.Ready, { ssrc, ip: '127.0.0.1', port: this.udpPort, modes: [ENCRYPTION_MODE], experiments: [] });
    this.emit('identify', session);
  }

  #onSelectProtocol(conn: Connection, d: Record<string, unknown>): void {
    const session = conn.session;
    if (!session) return this.#close(conn, VoiceCloseCode.NotAuthenticated);
    const data = (typeof d.data === 'object' && d.data !== null ? d.data : {}) as Record<string, unknown>;
    if (d.protocol !== 'udp') return this.#close(conn, VoiceCloseCode.UnknownProtocol);
    if (data.mode !== ENCRYPTION_MODE) return this.#close(conn, VoiceCloseCode.UnknownEncryptionMode);
    session.mode = ENCRYPTION_MODE;
    if (typeof data.address === 'string' && typeof data.port === 'number') {
      session.clientAddress = { address: data.address, port: data.port };
    }
    // Version 0 keeps the client on transport encryption only; 1 makes it a DAVE group member.
    const daveVersion = this.dave.negotiate(session.serverId, session.maxDaveProtocolVersion ?? 0);
    session.daveProtocolVersion = daveVersion;
    this.#send(conn, Op.SessionDescription, {
      mode: ENCRYPTION_MODE,
      secret_key: [...session.secretKey],
      dave_protocol_version: daveVersion,
      audio_codec: 'opus',
    });
    this.emit('selectProtocol', session);
    const participant: DaveParticipant = {
      kind: 'client',
      userId: session.userId,
      maxProtocolVersion: session.maxDaveProtocolVersion ?? 0,
      sendJson: (op, payload) => this.#sendToSession(session, op, payload),
      sendBinary: (op, payload) => this.#sendBinaryToSession(session, op, payload),
    };
    this.#participants.set(session, participant);
    this.dave.join(session.serverId, participant, daveVersion);
  }

  #onResume(conn: Connection, d: Record<string, unknown>): void {
    if (conn.session) return this.#close(conn, VoiceCloseCode.AlreadyAuthenticated);
    const session = this.sessions.findLast((s) => s.serverId === d.server_id && s.sessionId === d.session_id);
    if (!this.#tokenOk(d.token)) return this.#close(conn, VoiceCloseCode.AuthenticationFailed);
    if (!session || !session.resumable || this.#currentConnection(session)) {
      return this.#close(conn, VoiceCloseCode.SessionNoLongerValid);
    }
    conn.session = session;
    session.closed = false;
    session.resumes++;
    clearTimeout(this.#resumeTimers.get(session));
    this.#resumeTimers.delete(session);
    const seqAck = typeof d.seq_ack === 'number' ? d.seq_ack : -1;
    this.#send(conn, Op.Resumed, null);
    // Buffered resume: what the client missed while away, in order.
    for (const { seq, data } of this.#outbox.get(session) ?? []) {
      if (seq > seqAck && conn.ws.readyState === conn.ws.OPEN) conn.ws.send(data);
    }
    this.emit('resume', session, { seqAck });
  }

  #onDatagram(msg: Buffer, rinfo: RemoteInfo): void {
    if (msg.length === KEEPALIVE_LENGTH) {
      this.udpStats.keepalives++;
      return;
    }
    if (msg.length === IP_DISCOVERY_LENGTH && msg.readUInt16BE(0) === 1 && msg.readUInt16BE(2) === 70) {
      this.#answerIpDiscovery(msg, rinfo);
      return;
    }
    const result = this.#decryptRtp(msg);
    if (typeof result === 'string') {
      this.udpStats.rejected++;
      this.emit('protocolError', result);
      return;
    }
    this.packets.push(result);
    this.emit('packet', result);
  }

  #answerIpDiscovery(msg: Buffer, rinfo: RemoteInfo): void {
    const ssrc = msg.readUInt32BE(4);
    if (!this.sessions.some((s) => s.ssrc === ssrc)) {
      this.udpStats.rejected++;
      this.emit('protocolError', `IP discovery for unknown ssrc ${ssrc}`);
      return;
    }
    this.udpStats.ipDiscoveries++;
    const reply = Buffer.alloc(IP_DISCOVERY_LENGTH);
    reply.writeUInt16BE(2, 0);
    reply.writeUInt16BE(70, 2);
    reply.writeUInt32BE(ssrc, 4);
    reply.write(rinfo.address, 8, 'utf8'); // NUL-terminated: the rest is already zero.
    reply.writeUInt16BE(rinfo.port, IP_DISCOVERY_LENGTH - 2);
    this.#udp.send(reply, rinfo.port, rinfo.address);
  }

  /** Decrypts one `aead_aes256_gcm_rtpsize` packet; returns a reason string when it cannot. */
  #decryptRtp(msg: Buffer): ReceivedPacket | string {
    if (msg.length < RTP_HEADER_LENGTH + GCM_TAG_LENGTH + NONCE_SUFFIX_LENGTH) return `short datagram (${msg.length} bytes)`;
    const first = msg[0]!;
    if (first >> 6 !== 2) return 'not RTP version 2';
    if ((msg[1]! & 0x7f) !== RTP_OPUS_PAYLOAD_TYPE) return `RTP payload type ${msg[1]! & 0x7f} is not Opus (0x78)`;
    const ssrc = msg.readUInt32BE(8);
    const session = this.sessions.findLast((s) => s.ssrc === ssrc);
    if (!session || session.mode === undefined) return `RTP for unknown ssrc ${ssrc}`;
    if (!session.resumable) return `RTP for ended session (ssrc ${ssrc})`;
    // rtpsize: the unencrypted part is the fixed header, the CSRCs and, with the X bit, the 4-byte
    // extension header; the extension body is encrypted at the start of the plaintext.
    const csrcCount = first & 0x0f;
    const hasExtension = (first & 0x10) !== 0;
    let headerLength = RTP_HEADER_LENGTH + 4 * csrcCount;
    let extensionBodyLength = 0;
    if (hasExtension) {
      if (msg.length < headerLength + 4) return 'truncated RTP extension header';
      extensionBodyLength = 4 * msg.readUInt16BE(headerLength + 2);
      headerLength += 4;
    }
    const tagStart = msg.length - NONCE_SUFFIX_LENGTH - GCM_TAG_LENGTH;
    if (tagStart < headerLength) return 'datagram shorter than its RTP header';
    const nonceSuffix = msg.subarray(msg.length - NONCE_SUFFIX_LENGTH);
    const iv = Buffer.concat([nonceSuffix, Buffer.alloc(8)]);
    let plaintext: Buffer;
    try {
      const decipher = createDecipheriv('aes-256-gcm', session.secretKey, iv);
      decipher.setAAD(msg.subarray(0, headerLength));
      decipher.setAuthTag(msg.subarray(tagStart, tagStart + GCM_TAG_LENGTH));
      plaintext = Buffer.concat([decipher.update(msg.subarray(headerLength, tagStart)), decipher.final()]);
    } catch {
      return `RTP from ssrc ${ssrc} failed to decrypt`;
    }
    if ((first & 0x20) !== 0 && plaintext.length > 0) {
      const padding = plaintext[plaintext.length - 1]!;
      if (padding <= plaintext.length) plaintext = plaintext.subarray(0, plaintext.length - padding);
    }
    const frame = Buffer.from(plaintext.subarray(extensionBodyLength));
    // End-to-end encryption sits inside the transport encryption: the listeners decrypt the frame.
    const hearing = this.dave.hear(session.serverId, session.userId, frame);
    const undecryptable = hearing.opus === undefined;
    const opusFrame = hearing.opus ?? frame;
    if (undecryptable) this.emit('protocolError', `DAVE frame from ssrc ${ssrc} was decrypted by no listener`);
    let pcm: Int16Array = new Int16Array(0);
    let decodeError = false;
    if (!undecryptable) {
      try {
        let decoder = this.#decoders.get(ssrc);
        if (!decoder) {
          decoder = new opus.OpusEncoder(SAMPLE_RATE, CHANNELS);
          this.#decoders.set(ssrc, decoder);
        }
        const raw = decoder.decode(opusFrame);
        pcm = new Int16Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.byteLength));
      } catch {
        decodeError = true;
        this.emit('protocolError', `Opus frame from ssrc ${ssrc} did not decode`);
      }
    }
    const silent = undecryptable || decodeError || opusFrame.equals(OPUS_SILENCE_FRAME) || rmsDb(pcm) < this.#options.silenceThresholdDb;
    return {
      guildId: session.serverId,
      ssrc,
      seq: msg.readUInt16BE(2),
      timestamp: msg.readUInt32BE(4),
      nonce: nonceSuffix.readUInt32BE(0),
      receivedAt: this.#options.now(),
      frame,
      daveFramed: hearing.framed,
      heardBy: hearing.heardBy,
      opus: opusFrame,
      pcm,
      silent,
      decodeError,
      undecryptable,
      speakingOffCount: session.speakingOffCount,
    };
  }
}

/** Starts a fake Discord voice server (TLS voice gateway + UDP) on 127.0.0.1 ephemeral ports. */
export async function startFakeVoiceServer(options: FakeVoiceServerOptions = {}): Promise<FakeVoiceServer> {
  const defined = Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined));
  const merged: ResolvedOptions = { ...DEFAULT_OPTIONS, ...defined };
  const { key, cert } = await loopbackCertificate();
  const https = createHttpsServer({ key, cert });
  const wss = new WebSocketServer({ server: https });
  const udp = createSocket('udp4');
  await new Promise<void>((resolve, reject) => {
    https.once('error', reject);
    https.listen(0, '127.0.0.1', () => {
      https.off('error', reject);
      resolve();
    });
  });
  await new Promise<void>((resolve, reject) => {
    udp.once('error', reject);
    udp.bind(0, '127.0.0.1', () => {
      udp.off('error', reject);
      resolve();
    });
  });
  return new FakeVoiceServer({ https, wss, udp, cert }, merged);
}
