import type { DiscordGatewayAdapterCreator } from '@discordjs/voice';
import type { Logger } from '../util/log.ts';
import { GuildVoiceSession, type PlayableAudio, type VoiceSessionOptions } from './session.ts';

export interface JoinRequest {
  guildId: string;
  channelId: string;
  textChannelId: string | null;
  adapterCreator: DiscordGatewayAdapterCreator;
}

/**
 * Every guild's voice session. A session that ends for any reason (leave, kick, failed rejoin)
 * is forgotten at once, so "/join says I'm already in" after a disconnect cannot happen.
 */
export class VoiceManager {
  readonly #sessions = new Map<string, GuildVoiceSession>();
  readonly #logger: Logger;
  readonly #sessionOptions: Pick<VoiceSessionOptions, 'readyTimeoutMs' | 'reconnectGraceMs' | 'maxRejoins' | 'playback' | 'daveEncryption'>;

  constructor(options: { logger: Logger } & Pick<VoiceSessionOptions, 'readyTimeoutMs' | 'reconnectGraceMs' | 'maxRejoins' | 'playback' | 'daveEncryption'>) {
    const { logger, ...sessionOptions } = options;
    this.#logger = logger;
    this.#sessionOptions = sessionOptions;
  }

  /** Joins (or moves to) a voice channel and waits until the connection is Ready. */
  async join(request: JoinRequest): Promise<GuildVoiceSession> {
    const existing = this.#sessions.get(request.guildId);
    if (existing && existing.state.status !== 'destroyed') {
      existing.textChannelId = request.textChannelId;
      if (existing.channelId !== request.channelId) {
        existing.channelId = request.channelId;
        existing.connection.rejoin({ channelId: request.channelId, selfDeaf: true, selfMute: false });
      }
      await existing.ready();
      return existing;
    }
    const session = new GuildVoiceSession({ ...this.#sessionOptions, ...request, logger: this.#logger });
    this.#sessions.set(request.guildId, session);
    session.on('stateChange', (_old, next) => {
      if (next.status === 'destroyed' && this.#sessions.get(request.guildId) === session) {
        this.#sessions.delete(request.guildId);
        this.#logger.info({ guildId: request.guildId, reason: next.reason }, 'voice session ended');
      }
    });
    await session.ready();
    return session;
  }

  /** Leaves the guild's voice channel; false when not connected. */
  leave(guildId: string): boolean {
    const session = this.#sessions.get(guildId);
    if (!session) return false;
    session.destroy('left');
    this.#sessions.delete(guildId);
    return true;
  }

  isConnected(guildId: string): boolean {
    return this.#sessions.has(guildId);
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
    if (!session) return Promise.reject(new Error(`no voice session in guild ${guildId}`));
    return session.play(audio, signal);
  }

  get size(): number {
    return this.#sessions.size;
  }

  destroyAll(): void {
    for (const guildId of [...this.#sessions.keys()]) this.leave(guildId);
  }
}
