import { EventEmitter } from 'node:events';
import type { DiscordGatewayAdapterCreator } from '@discordjs/voice';
import { warmMp3Decoder } from '../audio/mp3-opus.ts';
import type { Logger } from '../util/log.ts';
import { VoiceSessionError } from './errors.ts';
import { GuildVoiceSession, type ClipStarted, type PlayableAudio, type VoiceSession, type VoiceSessionPolicy } from './session.ts';
import { VoiceWorkerPool } from './worker-pool.ts';

export interface JoinRequest {
  guildId: string;
  channelId: string;
  textChannelId: string | null;
  adapterCreator: DiscordGatewayAdapterCreator;
  /** A stage channel: the bot enters its audience and is heard only once it is a speaker (`setSuppressed`). */
  stage?: boolean;
}

/** Where sessions are remembered across a restart (src/db/voice-sessions.ts). */
export interface VoiceSessionMemory {
  save(guildId: string, voiceChannelId: string, textChannelId: string | null): Promise<void>;
  forget(guildId: string): Promise<void>;
}

/** A session that ended without /leave: disconnected by someone (4014) or unable to reconnect. */
export interface EndedSession {
  guildId: string;
  voiceChannelId: string;
  textChannelId: string | null;
  reason: string;
}

const SHUTDOWN = 'shutdown';

/**
 * Every guild's voice session. A session that ends for any reason (leave, kick, failed rejoin)
 * is forgotten at once, so "/join says I'm already in" after a disconnect cannot happen. Sessions
 * are remembered (`memory`) until the bot leaves for good, so a restart can rejoin them; one
 * that ends without /leave is announced with 'ended', so the reader can be told.
 */
export class VoiceManager extends EventEmitter<{ ended: [EndedSession]; clipStarted: [ClipStarted] }> {
  readonly #sessions = new Map<string, VoiceSession>();
  /** Guilds whose session is in a stage's audience: connected, but nobody hears the bot. */
  readonly #suppressed = new Set<string>();
  readonly #logger: Logger;
  readonly #memory: VoiceSessionMemory | undefined;
  readonly #sessionOptions: VoiceSessionPolicy;
  /** Voice workers running the connections (`workers` > 0), else they run on this thread. */
  readonly #workers: VoiceWorkerPool | undefined;

  constructor(options: { logger: Logger; memory?: VoiceSessionMemory; workers?: number } & VoiceSessionPolicy) {
    super();
    const { logger, memory, workers, ...sessionOptions } = options;
    this.#logger = logger;
    this.#memory = memory;
    this.#sessionOptions = sessionOptions;
    if (workers) this.#workers = new VoiceWorkerPool({ size: workers, logger });
    // The first cache miss plays from its MP3 at once: the decoder is compiled before it comes.
    if (sessionOptions.playback !== 'mp3') void warmMp3Decoder();
  }

  /** Joins (or moves to) a voice channel and waits until the connection is Ready. */
  async join(request: JoinRequest): Promise<VoiceSession> {
    const existing = this.#sessions.get(request.guildId);
    if (existing && existing.state.status !== 'destroyed') {
      existing.textChannelId = request.textChannelId;
      if (existing.channelId !== request.channelId) {
        this.#setStage(request);
        existing.move(request.channelId);
      }
      await existing.ready();
      this.#remember(request.guildId, existing.channelId, existing.textChannelId);
      return existing;
    }
    this.#setStage(request);
    const { stage: _stage, ...joining } = request;
    const options = { ...this.#sessionOptions, ...joining };
    const session = this.#workers ? this.#workers.open(options) : new GuildVoiceSession({ ...options, logger: this.#logger });
    this.#sessions.set(request.guildId, session);
    session.on('clipStarted', (started) => this.emit('clipStarted', started));
    let wasReady = false;
    session.on('stateChange', (_old, next) => {
      if (next.status === 'ready') wasReady = true;
      if (next.status !== 'destroyed' || this.#sessions.get(request.guildId) !== session) return;
      this.#sessions.delete(request.guildId);
      this.#suppressed.delete(request.guildId);
      this.#logger.info({ guildId: request.guildId, reason: next.reason }, 'voice session ended');
      // Ended by something other than /leave or a shutdown: not rejoined after a restart, and
      // whoever listens tells the channel that reading stopped.
      if (next.reason === SHUTDOWN) return;
      this.#forget(request.guildId);
      if (wasReady)
        this.emit('ended', {
          guildId: request.guildId,
          voiceChannelId: session.channelId,
          textChannelId: session.textChannelId,
          reason: next.reason,
        });
    });
    await session.ready();
    this.#remember(request.guildId, session.channelId, session.textChannelId);
    return session;
  }

  /** Leaves the guild's voice channel for good (not rejoined after a restart); false when not connected. */
  leave(guildId: string): boolean {
    this.#forget(guildId);
    const session = this.#sessions.get(guildId);
    if (!session) return false;
    this.#sessions.delete(guildId);
    this.#suppressed.delete(guildId);
    session.destroy('left');
    return true;
  }

  /** The bot was disconnected by someone (its voice state went to no channel): ends the session, emitting 'ended'. */
  disconnected(guildId: string, reason: string): boolean {
    const session = this.#sessions.get(guildId);
    if (!session) return false;
    session.destroy(reason);
    return true;
  }

  /** Someone moved the bot to another channel of the guild: the session's scope follows. */
  moved(guildId: string, channelId: string): boolean {
    const session = this.#sessions.get(guildId);
    if (!session || session.channelId === channelId) return false;
    session.channelId = channelId;
    this.#remember(guildId, channelId, session.textChannelId);
    return true;
  }

  /**
   * Connected where the bot is heard: in a stage, only while it is a speaker. Everything that
   * decides whether to read aloud or play asks this, so in a stage's audience auto-read spends
   * nothing and /say is attached; `voiceChannel` still names the channel it is in.
   */
  isConnected(guildId: string): boolean {
    return this.#sessions.has(guildId) && !this.#suppressed.has(guildId);
  }

  /** In a stage's audience (true) or a speaker (false), from the bot's own voice state's `suppress`. */
  setSuppressed(guildId: string, suppressed: boolean): void {
    if (suppressed && this.#sessions.has(guildId)) this.#suppressed.add(guildId);
    else this.#suppressed.delete(guildId);
  }

  /** Whether the bot is in a stage's audience, waiting to be made a speaker. */
  isSuppressed(guildId: string): boolean {
    return this.#suppressed.has(guildId);
  }

  voiceChannel(guildId: string): string | null {
    return this.#sessions.get(guildId)?.channelId ?? null;
  }

  boundTextChannel(guildId: string): string | null {
    return this.#sessions.get(guildId)?.textChannelId ?? null;
  }

  /** Plays one utterance in the guild's channel (see GuildVoiceSession.play). */
  play(guildId: string, audio: PlayableAudio, signal: AbortSignal): Promise<void> {
    const session = this.#sessions.get(guildId);
    if (!session) return Promise.reject(new VoiceSessionError('no_session', { guildId }));
    return session.play(audio, signal);
  }

  get size(): number {
    return this.#sessions.size;
  }

  // Remembering is best effort and never holds up voice: a failed write is logged.
  #remember(guildId: string, voiceChannelId: string, textChannelId: string | null): void {
    this.#memory
      ?.save(guildId, voiceChannelId, textChannelId)
      .catch((error: unknown) => this.#logger.warn({ err: error, guildId }, 'could not remember the voice session'));
  }

  #forget(guildId: string): void {
    this.#memory
      ?.forget(guildId)
      .catch((error: unknown) => this.#logger.warn({ err: error, guildId }, 'could not forget the voice session'));
  }

  /** Shutdown: leaves every channel but keeps them remembered, so the next start rejoins them. */
  destroyAll(): void {
    for (const session of [...this.#sessions.values()]) session.destroy(SHUTDOWN);
    this.#sessions.clear();
    this.#suppressed.clear();
    void this.#workers?.close();
  }

  // Whoever enters a stage joins its audience until Discord says it is a speaker.
  #setStage(request: JoinRequest): void {
    if (request.stage) this.#suppressed.add(request.guildId);
    else this.#suppressed.delete(request.guildId);
  }
}
