import { EventEmitter } from 'node:events';
import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import {
  AudioPlayerStatus,
  createAudioPlayer,
  createAudioResource,
  entersState,
  joinVoiceChannel,
  NoSubscriberBehavior,
  StreamType,
  VoiceConnectionDisconnectReason,
  VoiceConnectionStatus,
  type AudioPlayer,
  type AudioPlayerState,
  type DiscordGatewayAdapterCreator,
  type VoiceConnection,
  type VoiceConnectionState,
} from '@discordjs/voice';
import type { Logger } from '../util/log.ts';
import { VoiceSessionError } from './errors.ts';

/** What the voice layer can play: Ogg Opus made once at cache time, else an MP3 (ffmpeg per play). */
export interface PlayableAudio {
  oggPath?: string;
  mp3Path?: string;
  mp3?: Buffer;
  durationMs?: number;
}

export interface VoiceSessionOptions {
  guildId: string;
  channelId: string;
  /** The text channel read aloud while connected (/join binds the channel it was typed in). */
  textChannelId: string | null;
  adapterCreator: DiscordGatewayAdapterCreator;
  logger: Logger;
  /** Time to reach Ready when joining or before playing (the guide's 20 s). */
  readyTimeoutMs?: number;
  /** Time the guide's recipe waits for Signalling/Connecting after a Disconnected. */
  reconnectGraceMs?: number;
  /** Rejoins attempted after disconnects the library does not recover from itself. */
  maxRejoins?: number;
  /**
   * 'cached' plays the Ogg Opus made once at cache time (no ffmpeg per play); 'mp3' runs ffmpeg on
   * the MP3 every time (the baseline `npm run bench:voice` compares against).
   */
  playback?: 'cached' | 'mp3';
  /**
   * DAVE end-to-end encryption. Discord requires it (since March 2026), so only tests turn it off:
   * the negative control proving the DAVE tests fail without it.
   */
  daveEncryption?: boolean;
}

const DEFAULTS = { readyTimeoutMs: 20_000, reconnectGraceMs: 5_000, maxRejoins: 3, playback: 'cached', daveEncryption: true } as const satisfies Partial<VoiceSessionOptions>;

export type VoiceSessionState =
  | { status: 'connecting' }
  | { status: 'ready' }
  | { status: 'reconnecting'; attempt: number }
  | { status: 'destroyed'; reason: string };

/**
 * One guild's voice connection and audio player (STYLE.md #8: a state union with one setter).
 * Playback is strictly one at a time: `play` settles exactly once per utterance, whether the audio
 * ends, is skipped, or the player errors (an error is followed by Idle; only the first counts),
 * so the scheduler's single advancing point never advances twice.
 */
export class GuildVoiceSession extends EventEmitter<{ stateChange: [VoiceSessionState, VoiceSessionState] }> {
  readonly guildId: string;
  channelId: string;
  textChannelId: string | null;
  readonly connection: VoiceConnection;
  readonly player: AudioPlayer;
  #state: VoiceSessionState = { status: 'connecting' };
  #options: Required<Omit<VoiceSessionOptions, 'textChannelId'>>;
  #rejoins = 0;
  readonly #logger: Logger;

  constructor(options: VoiceSessionOptions) {
    super();
    this.#options = { ...DEFAULTS, ...options } as Required<Omit<VoiceSessionOptions, 'textChannelId'>>;
    this.guildId = options.guildId;
    this.channelId = options.channelId;
    this.textChannelId = options.textChannelId;
    this.#logger = options.logger.child({ guildId: options.guildId });
    this.connection = joinVoiceChannel({
      guildId: options.guildId,
      channelId: options.channelId,
      adapterCreator: options.adapterCreator,
      selfDeaf: true,
      selfMute: false,
      daveEncryption: this.#options.daveEncryption,
    });
    this.player = createAudioPlayer({ behaviors: { noSubscriber: NoSubscriberBehavior.Pause } });
    this.connection.subscribe(this.player);
    // Unhandled 'error' events crash the process; both emitters always have a listener.
    this.connection.on('error', (error) => this.#logger.warn({ err: error }, 'voice connection error'));
    this.player.on('error', (error) => this.#logger.warn({ err: error }, 'audio player error'));
    this.connection.on('stateChange', (oldState, newState) => void this.#onConnectionState(oldState, newState));
  }

  get state(): VoiceSessionState {
    return this.#state;
  }

  #setState(next: VoiceSessionState): void {
    const previous = this.#state;
    if (previous.status === 'destroyed') return;
    this.#state = next;
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

  async #onConnectionState(oldState: VoiceConnectionState, newState: VoiceConnectionState): Promise<void> {
    if (newState.status === VoiceConnectionStatus.Ready) {
      this.#rejoins = 0;
      this.#setState({ status: 'ready' });
      return;
    }
    if (newState.status === VoiceConnectionStatus.Destroyed) {
      this.#setState({ status: 'destroyed', reason: 'connection destroyed' });
      this.player.stop(true);
      return;
    }
    if (newState.status !== VoiceConnectionStatus.Disconnected || oldState.status === VoiceConnectionStatus.Disconnected) return;
    // The official guide's recipe: a Disconnected that moves on to Signalling/Connecting within 5 s
    // is a channel move or a reconnect in progress; otherwise the bot was removed (4014) or lost.
    this.#setState({ status: 'reconnecting', attempt: this.#rejoins + 1 });
    try {
      await Promise.race([
        entersState(this.connection, VoiceConnectionStatus.Signalling, this.#options.reconnectGraceMs),
        entersState(this.connection, VoiceConnectionStatus.Connecting, this.#options.reconnectGraceMs),
      ]);
    } catch {
      const kicked = newState.reason === VoiceConnectionDisconnectReason.WebSocketClose && newState.closeCode === 4014;
      if (kicked || this.#rejoins >= this.#options.maxRejoins) {
        this.#logger.info({ channelId: this.channelId, closeCode: 'closeCode' in newState ? newState.closeCode : undefined, rejoins: this.#rejoins }, 'voice disconnected; cleaning up');
        this.destroy(kicked ? 'disconnected (4014)' : 'too many rejoins');
        return;
      }
      this.#rejoins += 1;
      this.#logger.info({ channelId: this.channelId, attempt: this.#rejoins }, 'voice disconnected; rejoining');
      if (this.connection.state.status !== VoiceConnectionStatus.Destroyed) this.connection.rejoin();
    }
  }

  /**
   * Plays one utterance to its end. Settles exactly once: resolved when the audio ends or `signal`
   * aborts (skip), rejected when the player errors or the connection cannot get Ready.
   */
  async play(audio: PlayableAudio, signal: AbortSignal): Promise<void> {
    if (this.#state.status === 'destroyed') throw new VoiceSessionError('destroyed', { guildId: this.guildId });
    if (signal.aborted) return;
    if (this.connection.state.status !== VoiceConnectionStatus.Ready) {
      try {
        // /skip while waiting for Ready must count (issue 9 §5): the wait ends on the skip too.
        await entersState(this.connection, VoiceConnectionStatus.Ready, AbortSignal.any([signal, AbortSignal.timeout(this.#options.readyTimeoutMs)]));
      } catch (error) {
        if (signal.aborted) return;
        throw new VoiceSessionError('not_ready', { guildId: this.guildId, cause: error });
      }
      if (signal.aborted) return;
    }
    // Pre-encoded Ogg Opus needs no ffmpeg; never inlineVolume (it forces per-frame re-encoding).
    const resource = audio.oggPath && this.#options.playback === 'cached'
      ? createAudioResource(createReadStream(audio.oggPath), { inputType: StreamType.OggOpus })
      : createAudioResource(audio.mp3Path ?? Readable.from([audio.mp3 ?? Buffer.alloc(0)]), { inputType: StreamType.Arbitrary });
    await new Promise<void>((resolve, reject) => {
      let settled = false;
      const settle = (error?: unknown) => {
        if (settled) return;
        settled = true;
        this.player.off('stateChange', onState);
        this.player.off('error', onError);
        signal.removeEventListener('abort', onAbort);
        this.off('stateChange', onSession);
        if (error) reject(new VoiceSessionError('playback_failed', { guildId: this.guildId, cause: error }));
        else resolve();
      };
      const onState = (oldState: AudioPlayerState, newState: AudioPlayerState) => {
        if (newState.status === AudioPlayerStatus.Idle && oldState.status !== AudioPlayerStatus.Idle) settle();
      };
      const onError = (error: Error) => settle(error);
      const onAbort = () => this.player.stop(true);
      const onSession = (_old: VoiceSessionState, next: VoiceSessionState) => {
        if (next.status === 'destroyed') settle(new VoiceSessionError('destroyed', { guildId: this.guildId }));
      };
      this.player.on('stateChange', onState);
      this.player.on('error', onError);
      this.on('stateChange', onSession);
      signal.addEventListener('abort', onAbort, { once: true });
      this.player.play(resource);
    });
  }

  /** Leaves the channel and frees the player; idempotent. */
  destroy(reason = 'left'): void {
    if (this.#state.status === 'destroyed') return;
    this.#setState({ status: 'destroyed', reason });
    this.player.stop(true);
    if (this.connection.state.status !== VoiceConnectionStatus.Destroyed) this.connection.destroy();
  }
}
