import { EventEmitter } from 'node:events';
import {
  AudioPlayerStatus,
  createAudioPlayer,
  entersState,
  joinVoiceChannel,
  NoSubscriberBehavior,
  VoiceConnectionDisconnectReason,
  VoiceConnectionStatus,
  type AudioPlayer,
  type AudioPlayerError,
  type AudioPlayerState,
  type AudioResource,
  type DiscordGatewayAdapterCreator,
  type VoiceConnection,
  type VoiceConnectionDisconnectedState,
  type VoiceConnectionState,
} from '@discordjs/voice';
import { sleep } from '../util/clock.ts';
import type { Logger } from '../util/log.ts';
import { moments } from '../util/moments.ts';
import { callCanEncrypt } from './dave.ts';
import { VoiceSessionError } from './errors.ts';
import { clipPackets, clipsOf, opusResource, resourceFor } from './resources.ts';
import type { PacketClock } from './packet-clock.ts';
import { reusePacketBuffers } from './packet-buffers.ts';
import { cacheTransportKey } from './transport-key.ts';

/**
 * What the voice layer can play: Ogg Opus made once at cache time, else an MP3 (`mp3` in memory or
 * `mp3Path`), decoded and encoded in this process as it plays (src/audio/mp3-opus.ts): a cache
 * miss plays from its download while its Ogg is still being made.
 */
export interface PlayableAudio {
  oggPath?: string;
  mp3Path?: string;
  mp3?: Buffer;
  durationMs?: number;
  /** Clips played back to back as one utterance (a cached name, then its line). */
  parts?: PlayableAudio[];
  /** Its author's volume (0 to 2; absent = 1), applied to every part as it is decoded (src/audio/gain.ts). */
  volume?: number;
}

export interface VoiceSessionOptions {
  guildId: string;
  channelId: string;
  /** The text channel read aloud while connected (/join binds the channel it was typed in). */
  textChannelId: string | null;
  adapterCreator: DiscordGatewayAdapterCreator;
  /** The bot account's voice connection group: several accounts each have one connection in a server. */
  group?: string;
  logger: Logger;
  /** Time to reach Ready when joining or before playing (the guide's 20 s). */
  readyTimeoutMs?: number;
  /** Time the guide's recipe waits for Signalling/Connecting after a Disconnected. */
  reconnectGraceMs?: number;
  /** Rejoins attempted after disconnects the library does not recover from itself. */
  maxRejoins?: number;
  /** Pause before the first rejoin; each further attempt waits twice as long as the one before. */
  rejoinBackoffMs?: number;
  /**
   * How long audio waits, once the connection is Ready, for the call's end-to-end encryption
   * (DAVE) to be able to encrypt it; after that it plays anyway, with a warning (src/voice/dave.ts).
   */
  daveReadyTimeoutMs?: number;
  /**
   * 'cached' plays the Ogg Opus made once at cache time (no ffmpeg per play), else decodes the MP3
   * in this process; 'mp3' runs ffmpeg on the MP3 every time (the baseline `npm run bench:voice`
   * compares against).
   */
  playback?: 'cached' | 'mp3';
  /**
   * DAVE end-to-end encryption. Discord requires it (since March 2026), so only tests turn it off:
   * the negative control proving the DAVE tests fail without it.
   */
  daveEncryption?: boolean;
  /** Paces the player's packets (a voice worker's clock); without it, @discordjs/voice's own loop does. */
  clock?: PacketClock;
}

/** The timings and switches a session is built with; the rest of its options say where it is. */
export type VoiceSessionPolicy = Pick<
  VoiceSessionOptions,
  'readyTimeoutMs' | 'reconnectGraceMs' | 'maxRejoins' | 'rejoinBackoffMs' | 'daveReadyTimeoutMs' | 'playback' | 'daveEncryption'
>;

const DEFAULTS = {
  readyTimeoutMs: 20_000,
  reconnectGraceMs: 5_000,
  maxRejoins: 3,
  rejoinBackoffMs: 2_000,
  daveReadyTimeoutMs: 3_000,
  playback: 'cached',
  daveEncryption: true,
} as const satisfies Required<VoiceSessionPolicy>;

/** A clip's first voice packet left for the call, `ms` after `play` was asked to play it (metrics). */
export interface ClipStarted {
  guildId: string;
  ms: number;
}

/**
 * Why a session's call was recovered without anyone asking: its voice worker crashed or hung and
 * the call was rejoined from a new one, the silent-stall watchdog rejoined it, a clip that did not
 * finish in time was ended, or Discord dropped the connection and it came back (resumed, rejoined
 * after a close, or connected to the voice server Discord moved it to).
 */
export type VoiceRecoveryCause = 'worker_crash' | 'worker_hang' | 'stall' | 'play_timeout' | 'resumed' | 'rejoined' | 'server_moved';
export const VOICE_RECOVERY_CAUSES = [
  'worker_crash',
  'worker_hang',
  'stall',
  'play_timeout',
  'resumed',
  'rejoined',
  'server_moved',
] as const satisfies readonly VoiceRecoveryCause[];

/** A session's call recovered (see VoiceRecoveryCause). */
export interface VoiceRecovery {
  guildId: string;
  cause: VoiceRecoveryCause;
}

/** What a voice session emits, wherever its connection runs. */
export type VoiceSessionEvents = {
  stateChange: [VoiceSessionState, VoiceSessionState];
  clipStarted: [ClipStarted];
  recovered: [VoiceRecovery];
};

export type VoiceSessionState =
  { status: 'connecting' } | { status: 'ready' } | { status: 'reconnecting'; attempt: number } | { status: 'destroyed'; reason: string };

/**
 * One guild's voice session as the manager uses it, wherever its connection runs: a
 * GuildVoiceSession on this thread, or its stand-in for one in a voice worker (src/voice/worker-pool.ts).
 */
export interface VoiceSession extends EventEmitter<VoiceSessionEvents> {
  readonly guildId: string;
  channelId: string;
  textChannelId: string | null;
  readonly state: VoiceSessionState;
  /** Resolves once the connection is Ready, else ends the session and throws (join_timeout, destroyed). */
  ready(): Promise<void>;
  /** Plays one utterance; settles exactly once (see GuildVoiceSession.play). */
  play(audio: PlayableAudio, signal: AbortSignal): Promise<void>;
  /** Moves the connection to another channel of the guild (channelId is set too). */
  move(channelId: string): void;
  /** Leaves the channel; idempotent. */
  destroy(reason?: string): void;
}

/**
 * One guild's voice connection and audio player (a state union with one setter).
 * Playback is strictly one at a time: `play` settles exactly once per utterance, whether the audio
 * ends, is skipped, or the player errors, so the scheduler's single advancing point never advances
 * twice. The player is subscribed to the connection only while what it sends would reach the call
 * end-to-end encrypted (bounded by `daveReadyTimeoutMs`); until then it waits, paused.
 */
export class GuildVoiceSession extends EventEmitter<VoiceSessionEvents> implements VoiceSession {
  readonly guildId: string;
  channelId: string;
  textChannelId: string | null;
  readonly connection: VoiceConnection;
  readonly player: AudioPlayer;
  #state: VoiceSessionState = { status: 'connecting' };
  readonly #options: Required<VoiceSessionPolicy>;
  readonly #clock: PacketClock | undefined;
  readonly #logger: Logger;
  /** Aborted (with the reason) when the session is destroyed: ends playback and backoff waits. */
  readonly #closed = new AbortController();
  #rejoins = 0;
  /** Which recovery (after a Disconnected) is current; an older one still waiting stops. */
  #recovery = 0;
  /** The bounded wait for DAVE after the connection became Ready; `expired` once it ran out. */
  #daveWait: { timer: NodeJS.Timeout | undefined; expired: boolean } = { timer: undefined, expired: false };
  /** The clip whose first packet is awaited, and when it was asked to play. */
  #firstPacket: { resource: AudioResource; since: number } | undefined;
  /** Voice packets sent so far (a voice worker reports them, so the main thread sees a silent stall). */
  #packets = 0;
  /** How the Ready connection was lost, until it is Ready again (then it counts as recovered). */
  #lost: VoiceRecoveryCause | undefined;
  /** A move asked for (/join elsewhere): the reconnection it makes is no recovery. */
  #moving = false;

  constructor(options: VoiceSessionOptions) {
    super();
    const { clock, ...rest } = options;
    this.#options = { ...DEFAULTS, ...definedOnly(rest) };
    this.#clock = clock;
    this.guildId = options.guildId;
    this.channelId = options.channelId;
    this.textChannelId = options.textChannelId;
    this.#logger = options.logger.child({ guildId: options.guildId });
    this.connection = joinVoiceChannel({
      guildId: options.guildId,
      channelId: options.channelId,
      adapterCreator: options.adapterCreator,
      ...(options.group ? { group: options.group } : {}),
      selfDeaf: true,
      selfMute: false,
      daveEncryption: this.#options.daveEncryption,
    });
    cacheTransportKey(this.connection);
    // In a voice worker: packets paced by its clock, built in reused buffers.
    if (clock) reusePacketBuffers(this.connection);
    this.player = createAudioPlayer({ behaviors: { noSubscriber: NoSubscriberBehavior.Pause } });
    // Paced only while it plays: an idle session costs the worker's clock nothing.
    if (clock)
      this.player.on('stateChange', (old, next) => {
        if (next.status === AudioPlayerStatus.Idle) clock.remove(this.player);
        else clock.add(this.player);
        if (old.status === AudioPlayerStatus.Buffering && next.status === AudioPlayerStatus.Playing) clock.prime(this.player);
      });
    this.connection.subscribe(this.player);
    // Unhandled 'error' events crash the process; both emitters always have a listener.
    this.connection.on('error', (error) => this.#logger.warn({ err: error }, 'voice connection error'));
    this.player.on('error', (error) => this.#logger.warn({ err: error }, 'audio player error'));
    this.connection.on('stateChange', (oldState, newState) => this.#onConnectionState(oldState, newState));
    this.connection.on('transitioned', () => this.#gate());
    this.#watchFirstPacket();
  }

  /**
   * @discordjs/voice has no event for a packet sent: the connection's dispatchAudio (called by
   * the player every 20 ms) is wrapped to see the first one that carries the awaited clip (one
   * of its packets was read, so the one sent now is its own, not a leftover of the clip before).
   */
  #watchFirstPacket(): void {
    const connection = this.connection;
    const dispatch = connection.dispatchAudio.bind(connection);
    connection.dispatchAudio = () => {
      const sent = dispatch();
      if (sent) this.#packets++;
      const awaited = this.#firstPacket;
      if (sent && awaited && awaited.resource.playbackDuration > 0) {
        this.#firstPacket = undefined;
        this.emit('clipStarted', { guildId: this.guildId, ms: performance.now() - awaited.since });
      }
      return sent;
    };
  }

  get state(): VoiceSessionState {
    return this.#state;
  }

  /** Voice packets sent so far. */
  get packetsSent(): number {
    return this.#packets;
  }

  #setState(next: VoiceSessionState): void {
    const previous = this.#state;
    if (previous.status === 'destroyed') return;
    this.#state = next;
    if (next.status === 'destroyed') {
      clearTimeout(this.#daveWait.timer);
      this.#closed.abort(new VoiceSessionError('destroyed', { guildId: this.guildId }));
    }
    this.emit('stateChange', previous, next);
  }

  /** Resolves once the connection is Ready (20 s by default), else destroys the session and throws. */
  async ready(): Promise<void> {
    try {
      await entersState(this.connection, VoiceConnectionStatus.Ready, this.#options.readyTimeoutMs);
      if (this.#state.status !== 'destroyed') this.#setState({ status: 'ready' });
    } catch (error) {
      if (this.#state.status === 'destroyed') throw new VoiceSessionError('destroyed', { guildId: this.guildId });
      this.destroy('join_timeout');
      throw new VoiceSessionError('join_timeout', { guildId: this.guildId, cause: error });
    }
  }

  #onConnectionState(oldState: VoiceConnectionState, newState: VoiceConnectionState): void {
    this.#gate();
    if (oldState.status === newState.status) return;
    if (oldState.status === VoiceConnectionStatus.Ready && newState.status !== VoiceConnectionStatus.Destroyed && !this.#moving)
      this.#lost ??= lostHow(oldState, newState);
    if (newState.status === VoiceConnectionStatus.Ready) {
      this.#rejoins = 0;
      this.#moving = false;
      const lost = this.#lost;
      this.#lost = undefined;
      this.#setState({ status: 'ready' });
      if (lost) {
        this.#logger.info({ channelId: this.channelId, cause: lost }, 'voice connection recovered');
        this.emit('recovered', { guildId: this.guildId, cause: lost });
      }
    } else if (newState.status === VoiceConnectionStatus.Destroyed) {
      this.#setState({ status: 'destroyed', reason: 'connection destroyed' });
      this.player.stop(true);
    } else if (newState.status === VoiceConnectionStatus.Disconnected) {
      void this.#recover(newState);
    }
  }

  /**
   * After a Disconnected, the official guide's recipe: one that moves on to Signalling/Connecting
   * within the grace is a channel move or a reconnect in progress; otherwise the bot was removed
   * (4014: the session ends) or lost, and rejoins after a pause that doubles with each attempt (a
   * gateway shard reconnecting needs time, and rejoining at once only fails again).
   */
  async #recover(disconnected: VoiceConnectionDisconnectedState): Promise<void> {
    const run = ++this.#recovery;
    this.#setState({ status: 'reconnecting', attempt: this.#rejoins + 1 });
    const grace = this.#options.reconnectGraceMs;
    // The main gateway did not take a rejoin (in a voice worker it says so after the fact): nothing
    // is under way that could move on by itself, so the backoff goes on without another grace.
    if (disconnected.reason !== VoiceConnectionDisconnectReason.AdapterUnavailable) {
      try {
        await Promise.race([
          entersState(this.connection, VoiceConnectionStatus.Signalling, grace),
          entersState(this.connection, VoiceConnectionStatus.Connecting, grace),
        ]);
        return;
      } catch {
        // Not moving on by itself.
      }
    }
    if (run !== this.#recovery) return;
    const kicked = disconnected.reason === VoiceConnectionDisconnectReason.WebSocketClose && disconnected.closeCode === 4014;
    while (this.#state.status !== 'destroyed') {
      if (kicked || this.#rejoins >= this.#options.maxRejoins) {
        const closeCode = 'closeCode' in disconnected ? disconnected.closeCode : undefined;
        this.#logger.info({ channelId: this.channelId, closeCode, rejoins: this.#rejoins }, 'voice disconnected; cleaning up');
        this.destroy(kicked ? 'disconnected (4014)' : 'too many rejoins');
        return;
      }
      this.#rejoins += 1;
      const delayMs = this.#options.rejoinBackoffMs * 2 ** (this.#rejoins - 1);
      this.#setState({ status: 'reconnecting', attempt: this.#rejoins });
      this.#logger.info({ channelId: this.channelId, attempt: this.#rejoins, delayMs }, 'voice disconnected; rejoining');
      try {
        await sleep(delayMs, this.#closed.signal);
      } catch {
        return; // destroyed while waiting
      }
      if (run !== this.#recovery) return;
      // Recovered meanwhile (moved by someone, say): nothing to do.
      if (this.connection.state.status !== VoiceConnectionStatus.Disconnected) return;
      // Sent: Ready resets the count, another Disconnected starts over. Not sent: the main
      // gateway is unavailable; wait longer and try again.
      if (this.connection.rejoin()) return;
    }
  }

  /**
   * Subscribes the player to the connection unless the connection is Ready but the call cannot
   * encrypt yet (DAVE handshake after a join or a new voice session): then the player waits,
   * auto-paused, for the 'transitioned' that makes it able to, or for `daveReadyTimeoutMs`.
   */
  #gate(): void {
    const state = this.connection.state;
    if (state.status === VoiceConnectionStatus.Destroyed) return;
    const ready = state.status === VoiceConnectionStatus.Ready;
    const encrypting = ready && callCanEncrypt(this.connection);
    if (!ready || encrypting) {
      clearTimeout(this.#daveWait.timer);
      // The next handshake (a rejoin, a new voice session) gets its own bounded wait.
      this.#daveWait = { timer: undefined, expired: false };
    } else if (!this.#daveWait.timer && !this.#daveWait.expired) {
      this.#daveWait.timer = setTimeout(() => {
        this.#daveWait = { timer: undefined, expired: true };
        this.#logger.warn(
          { channelId: this.channelId, timeoutMs: this.#options.daveReadyTimeoutMs },
          'the call cannot encrypt yet (DAVE); playing anyway',
        );
        this.#gate();
      }, this.#options.daveReadyTimeoutMs);
    }
    const hold = ready && !encrypting && !this.#daveWait.expired;
    if (hold && state.subscription) state.subscription.unsubscribe();
    else if (!hold && !state.subscription) {
      this.connection.subscribe(this.player);
      if (moments.encrypting.hasSubscribers) moments.encrypting.publish({ guildId: this.guildId, at: performance.now() });
    }
  }

  /**
   * Plays one utterance to its end. Settles exactly once: resolved when the audio ends or `signal`
   * aborts (skip), rejected when the player errors, the session closes or the connection cannot
   * get Ready.
   */
  async play(audio: PlayableAudio, signal: AbortSignal): Promise<void> {
    if (this.#state.status === 'destroyed') throw new VoiceSessionError('destroyed', { guildId: this.guildId });
    if (signal.aborted) return;
    const since = performance.now();
    if (this.connection.state.status !== VoiceConnectionStatus.Ready) {
      // /skip while waiting for Ready must count: the wait ends on the skip too.
      const timeout = new AbortController();
      const timer = setTimeout(() => timeout.abort(new Error('timed out')), this.#options.readyTimeoutMs);
      try {
        await entersState(this.connection, VoiceConnectionStatus.Ready, AbortSignal.any([signal, timeout.signal, this.#closed.signal]));
      } catch (error) {
        if (signal.aborted) return;
        if (this.#closed.signal.aborted) throw this.#closed.signal.reason;
        throw new VoiceSessionError('not_ready', { guildId: this.guildId, cause: error });
      } finally {
        clearTimeout(timer);
      }
      if (signal.aborted) return;
    }
    // Clips of one utterance play as one resource of every clip's Opus packets in
    // turn, cached or a miss decoded here: no end-of-resource silence, no restart between them.
    const parts = clipsOf(audio);
    const joined = parts.length > 1 && this.#options.playback === 'cached';
    const resources = joined
      ? [
          async () => ({
            resource: opusResource(clipPackets(parts, this.guildId)),
            source: parts.every((p) => p.oggPath) ? ('ogg' as const) : ('mp3-in-process' as const),
          }),
        ]
      : parts.map((part) => () => resourceFor(part, this.#options.playback, this.guildId));
    for (const [i, make] of resources.entries()) {
      if (signal.aborted) return;
      const { resource, source } = await make();
      if (signal.aborted || this.#closed.signal.aborted) {
        resource.playStream.destroy();
        if (signal.aborted) return;
        throw this.#closed.signal.reason;
      }
      if (moments.play.hasSubscribers)
        moments.play.publish({ guildId: this.guildId, at: performance.now(), source, canEncrypt: callCanEncrypt(this.connection) });
      // The utterance's first packet is what clipStarted times.
      if (i === 0) this.#firstPacket = { resource, since };
      try {
        await this.#playToEnd(resource, signal);
      } finally {
        if (this.#firstPacket?.resource === resource) this.#firstPacket = undefined;
      }
    }
  }

  /** Plays `resource`, settling once: resolved at its end or on `signal` (skip), rejected on a player error or the session's end. */
  #playToEnd(resource: AudioResource, signal: AbortSignal): Promise<void> {
    const { promise, resolve, reject } = Promise.withResolvers<void>();
    const settled = new AbortController();
    // The one settle path: every listener below is removed here, whichever fires first.
    const settle = (error?: unknown) => {
      if (settled.signal.aborted) return;
      settled.abort();
      this.player.off('stateChange', onState);
      this.player.off('error', onError);
      if (error === undefined) resolve();
      else reject(error);
    };
    const onState = (oldState: AudioPlayerState, newState: AudioPlayerState) => {
      if (newState.status === AudioPlayerStatus.Idle && oldState.status !== AudioPlayerStatus.Idle) settle();
    };
    // An error is followed by Idle; only the error counts.
    const onError = (error: AudioPlayerError) => settle(new VoiceSessionError('playback_failed', { guildId: this.guildId, cause: error }));
    this.player.on('stateChange', onState);
    this.player.on('error', onError);
    signal.addEventListener(
      'abort',
      () => {
        settle();
        this.player.stop(true);
      },
      { signal: settled.signal },
    );
    this.#closed.signal.addEventListener('abort', () => settle(this.#closed.signal.reason), { signal: settled.signal });
    this.player.play(resource);
    return promise;
  }

  /** Moves the connection to another channel of the guild. */
  move(channelId: string): void {
    this.channelId = channelId;
    this.#moving = true;
    this.connection.rejoin({ channelId, selfDeaf: true, selfMute: false });
  }

  /** Leaves the channel and frees the player; idempotent. */
  destroy(reason = 'left'): void {
    if (this.#state.status === 'destroyed') return;
    this.#setState({ status: 'destroyed', reason });
    this.player.stop(true);
    this.#clock?.remove(this.player);
    if (this.connection.state.status !== VoiceConnectionStatus.Destroyed) this.connection.destroy();
  }
}

/**
 * How a Ready connection was lost: the same voice websocket resuming (4015, a network close), a
 * new one to the endpoint Discord just named (the voice server moved), or a rejoin (4006, 4009 and
 * other closes make the library signal again; a Disconnected makes this session rejoin).
 */
function lostHow(oldState: VoiceConnectionState, newState: VoiceConnectionState): VoiceRecoveryCause {
  if (newState.status !== VoiceConnectionStatus.Connecting) return 'rejoined';
  const before = 'networking' in oldState ? oldState.networking : undefined;
  return newState.networking === before ? 'resumed' : 'server_moved';
}

/** `options` without its undefined values, so they do not override the defaults. */
function definedOnly<T extends object>(options: T): Partial<T> {
  return Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) as Partial<T>;
}
