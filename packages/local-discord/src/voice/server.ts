/**
 * The local Discord's voice server, on 127.0.0.1 only: the voice gateway (v8, over TLS) plus the UDP media
 * socket. It decrypts the `aead_aes256_gcm_rtpsize` RTP packets @discordjs/voice sends and decodes
 * each Opus frame back to PCM, so an end-to-end test can check that the bot was heard, for how long
 * and how loudly. Protocol facts: Discord's voice gateway (v8) and
 * UDP documentation; message shapes checked against @discordjs/voice 0.19.2 (Networking, VoiceWebSocket,
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
 * DAVE: a client offering `max_dave_protocol_version` 1 gets version 1, and the server acts as the
 * call's MLS delivery service and external sender (dave/gateway.ts). Audio is end to end encrypted
 * only between members of the group, so a test puts simulated listeners in the call:
 *   const alice = voice.simulateListener({ guildId, channelId, userId: aliceId });
 *   await voice.waitForDave(guildId); // the bot is in the group, every transition executed
 * Each packet then records what every listener made of it (`heardBy`), and its `opus` is the frame a
 * listener decrypted. A client offering 0 downgrades the call to transport encryption only, as
 * Discord did before DAVE was required. `daveProtocolVersion: 0` turns DAVE off in the server.
 *
 * Deliberate differences from Discord: Hello is sent on open (as Discord does) rather than after
 * Identify; only `aead_aes256_gcm_rtpsize` is offered; heartbeat timeouts are not implemented;
 * one call per guild unless the local Discord announces each bot's channel (`announceCall`).
 *
 * The websocket protocol is in signalling.ts, the UDP side in media.ts, utterance grouping in
 * utterances.ts, the DAVE group in dave/.
 */
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { EventEmitter } from 'node:events';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { WebSocketServer } from 'ws';
import { LocalDiscordError } from '../errors.ts';
import { bindOnLoopback, listenOnLoopback, LOOPBACK_HOST } from '../loopback.ts';
import { loopbackCertificate } from './certificate.ts';
import { DaveGateway } from './dave/gateway.ts';
import type { SimulatedListener } from './dave/listener.ts';
import { UdpMedia } from './media.ts';
import { VoiceSignalling } from './signalling.ts';
import {
  DEFAULT_OPTIONS,
  type FakeVoiceServerEvents,
  type FakeVoiceServerOptions,
  type ReceivedPacket,
  type ResolvedOptions,
  type UdpStats,
  type Utterance,
  type VoiceSession,
  type WaitForAudioOptions,
} from './types.ts';
import { groupUtterances } from './utterances.ts';

export { trustCertificate } from './certificate.ts';
export { VoiceCloseCode } from './signalling.ts';
export type * from './types.ts';
export { groupUtterances, rmsDb, type GroupingOptions } from './utterances.ts';

/**
 * The running voice server. Sessions and packets are plain arrays so tests can inspect them
 * directly; events ('identify', 'resume', 'speaking', 'packet', ...) let tests wait for protocol steps.
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
  readonly #signalling: VoiceSignalling;
  readonly #media: UdpMedia;
  /** `${guildId}:${userId}:${sessionId}` -> the voice channel the local Discord put that session in. */
  readonly #calls = new Map<string, string>();
  #closed = false;

  /** Use `startFakeVoiceServer`; the constructor takes already-listening sockets. */
  constructor(
    parts: { https: HttpsServer; wss: WebSocketServer; udp: UdpSocket; cert: string; httpsPort: number; udpPort: number },
    options: ResolvedOptions,
  ) {
    super();
    this.#https = parts.https;
    this.#wss = parts.wss;
    this.#udp = parts.udp;
    this.caCertPem = parts.cert;
    this.#options = options;
    this.endpoint = `${LOOPBACK_HOST}:${parts.httpsPort}`;
    this.udpPort = parts.udpPort;
    this.dave = new DaveGateway({ protocolVersion: options.daveProtocolVersion, emit: (event) => this.emit('dave', event) });
    this.#signalling = new VoiceSignalling({
      sessions: this.sessions,
      dave: this.dave,
      events: this,
      udpPort: this.udpPort,
      options,
      channelOf: (guildId, userId, sessionId) => this.#calls.get(`${guildId}:${userId}:${sessionId}`),
    });
    this.#media = new UdpMedia({
      udp: this.#udp,
      sessions: this.sessions,
      dave: this.dave,
      events: this,
      packets: this.packets,
      stats: this.udpStats,
      options,
    });
    this.#wss.on('connection', (ws) => this.#signalling.accept(ws));
  }

  /**
   * The local Discord tells the voice server which voice channel a bot's voice session is in
   * (`startFakeDiscord({ voiceServer })` does it on every join): its call is then that channel's,
   * so several bots in different voice channels of one guild are separate calls, each heard only by
   * the listeners of its channel. Without it a guild has one call.
   */
  announceCall(call: { guildId: string; channelId: string; userId: string; sessionId: string }): void {
    this.#calls.set(`${call.guildId}:${call.userId}:${call.sessionId}`, call.channelId);
  }

  /**
   * Load benchmarks: from now on RTP packets are only timestamped on arrival and kept; decrypting
   * them (transport and DAVE), `packets` and the 'packet' events wait for `releasePackets`, so
   * that this server's work per packet neither delays the arrival times nor takes CPU from the
   * sender while it is timed. Keepalives, IP discovery and signalling go on as usual.
   */
  holdPackets(): void {
    this.#media.hold();
  }

  /**
   * Processes every packet held since `holdPackets` in arrival order (`receivedAt` is the arrival
   * time) and stops holding. Returns how many datagrams there were and how long their processing took.
   */
  releasePackets(): { datagrams: number; ms: number } {
    return this.#media.release();
  }

  simulateListener(options: { guildId: string; channelId: string; userId: string }): SimulatedListener {
    return this.dave.addListener(options);
  }

  /** Resolves once `guildId`'s calls (or the one in `channelId`) are end-to-end encrypted and at rest (DaveGateway.settled). */
  async waitForDave(guildId: string, timeoutMs = 20_000, channelId?: string): Promise<void> {
    // Listeners answer a turn of the event loop later, so poll as well as listen.
    await this.#watch(
      () => (this.dave.settled(guildId, channelId) ? true : undefined),
      ['dave'],
      10,
      timeoutMs,
      () => {
        const snapshot = JSON.stringify(this.dave.snapshot(guildId), (_k, v: unknown) => (typeof v === 'bigint' ? Number(v) : v));
        return `guild ${guildId}'s call did not settle on DAVE within ${timeoutMs} ms: ${snapshot}`;
      },
    );
  }

  /** Utterances heard so far, optionally for one guild, one voice channel and one speaker (see `groupUtterances`). */
  utterances(guildId?: string, filter: { channelId?: string; userId?: string } = {}): Utterance[] {
    const { channelId, userId } = filter;
    const packets =
      guildId === undefined && channelId === undefined && userId === undefined
        ? this.packets
        : this.packets.filter(
            (p) =>
              (guildId === undefined || p.guildId === guildId) &&
              (channelId === undefined || p.channelId === channelId) &&
              (userId === undefined || p.userId === userId),
          );
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
    const { guildId, channelId, userId, minDurationMs = 1, startedAfter = -Infinity, timeoutMs = 20_000 } = opts;
    const heardIn = () => this.utterances(guildId, { ...(channelId ? { channelId } : {}), ...(userId ? { userId } : {}) });
    const find = () => heardIn().find((u) => u.complete && u.durationMs >= minDurationMs && u.start >= startedAfter);
    // Completion by a gap is only visible with time passing, so poll as well as listen.
    const pollMs = Math.max(10, Math.min(50, this.#options.utteranceGapMs / 4));
    return this.#watch(find, ['packet', 'speaking'], pollMs, timeoutMs, () => {
      const heard = heardIn().map((u) => `${Math.round(u.durationMs)}ms@${u.rmsDb.toFixed(1)}dB`);
      return (
        `no utterance${guildId ? ` in guild ${guildId}` : ''} of >= ${minDurationMs} ms within ${timeoutMs} ms; ` +
        `heard [${heard.join(', ')}], ${this.packets.length} packets, ${this.udpStats.rejected} rejected datagrams`
      );
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
        reject(new LocalDiscordError('timeout', { message: `no matching voice server '${String(event)}' event within ${timeoutMs} ms` }));
      }, timeoutMs);
      this.on(event, listener as never);
    });
  }

  /** Resolves with `find()` once it finds something, checking on `events` and every `pollMs`; rejects after `timeoutMs`. */
  #watch<T>(
    find: () => T | undefined,
    events: (keyof FakeVoiceServerEvents)[],
    pollMs: number,
    timeoutMs: number,
    describe: () => string,
  ): Promise<T> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const found = find();
        if (found === undefined) return;
        cleanup();
        resolve(found);
      };
      const poll = setInterval(check, pollMs);
      const timer = setTimeout(() => {
        cleanup();
        reject(new LocalDiscordError('timeout', { message: describe() }));
      }, timeoutMs);
      const cleanup = () => {
        clearInterval(poll);
        clearTimeout(timer);
        for (const event of events) this.off(event, check);
      };
      for (const event of events) this.on(event, check);
      check();
    });
  }

  /**
   * Closes the open voice websocket of `guildId`'s latest session with `code` (4015, 4014, 4006...).
   * Codes the client may resume on (4015, < 4000) keep the session resumable; others end it.
   */
  closeConnection(guildId: string, code: number, userId?: string): void {
    this.#signalling.closeConnection(guildId, code, userId);
  }

  /** Stops the gateway and the UDP socket, dropping every connection. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#signalling.closeAll();
    await new Promise<void>((resolve) => this.#wss.close(() => resolve()));
    this.#https.closeAllConnections();
    await new Promise<void>((resolve) => this.#https.close(() => resolve()));
    await new Promise<void>((resolve) => this.#udp.close(() => resolve()));
    this.#media.clear();
  }
}

/** Starts a voice server (TLS voice gateway + UDP) on 127.0.0.1 ephemeral ports. */
export async function startFakeVoiceServer(options: FakeVoiceServerOptions = {}): Promise<FakeVoiceServer> {
  const defined = Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined));
  const merged: ResolvedOptions = { ...DEFAULT_OPTIONS, ...defined };
  const { key, cert } = await loopbackCertificate();
  const https = createHttpsServer({ key, cert });
  const wss = new WebSocketServer({ server: https });
  // A larger receive buffer (capped by the kernel's net.core.rmem_max) rides out a stalled event
  // loop without dropping datagrams; unset, the system default (about 200 KiB).
  const udp = createSocket({ type: 'udp4', ...(merged.udpReceiveBufferBytes ? { recvBufferSize: merged.udpReceiveBufferBytes } : {}) });
  const httpsPort = await listenOnLoopback(https);
  const udpPort = await bindOnLoopback(udp);
  return new FakeVoiceServer({ https, wss, udp, cert, httpsPort, udpPort }, merged);
}
