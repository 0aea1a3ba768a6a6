import type { Client } from 'discord.js';
import { audienceOf, type ReadyUtterance, textAudience, voiceAudience, voiceChannelOf } from '../../speech/queue/utterance.ts';
import type { VoiceManager } from '../../voice/manager.ts';

/** What Audiences works with: the client's voice states and the voice sessions. */
export interface AudiencesDeps {
  client: Client;
  voice: Pick<VoiceManager, 'isConnected' | 'boundTo' | 'at' | 'sessions'>;
}

/**
 * Who hears what is queued now: the audience (a voice session, or one text channel whose MP3s are
 * posted) a message or a request is for, whether what was queued for one is still heard, and the
 * voice channel a batch is played in. Auto-read, /say and /narrate, delivery and the start-up ask
 * the same rules.
 */
export class Audiences {
  readonly #deps: AudiencesDeps;

  constructor(deps: AudiencesDeps) {
    this.#deps = deps;
  }

  /**
   * Who a message of `channelId` queued now is for (the scheduler merges only within one): the
   * voice session that reads it (`session`, default: the one the channel is bound to, else the
   * server's first) when its audio will be played there, else the text channel, where its MP3 is
   * posted (no voice session).
   */
  audience(guildId: string, channelId: string, session?: { channelId: string; suppressed: boolean } | null): string {
    const readIn = session === undefined ? this.#sessionFor(guildId, channelId) : session;
    const voiceChannel = readIn && !readIn.suppressed ? readIn.channelId : null;
    return voiceChannel ? voiceAudience(voiceChannel) : textAudience(channelId);
  }

  /** Whether what was queued for `audience` can still be played there: a voice session heard now. */
  stillHeard(guildId: string, audience: string): boolean {
    const channelId = voiceChannelOf(audience);
    return channelId !== null && this.#deps.voice.isConnected(guildId, channelId);
  }

  /**
   * Who a /say or /narrate asked in `channelId` (by `userId`) now is for: the voice session that
   * would play it (the one the channel is bound to, else the asker's, else the server's first) while
   * it is heard (explicit requests are played there whenever they can), else the text channel it was
   * asked in. Everything the session may play is one audience, so it is played one at a time, in order.
   */
  requestAudience(guildId: string, channelId: string, userId?: string): string {
    const session = this.#sessionFor(guildId, channelId, userId);
    return session && !session.suppressed ? voiceAudience(session.channelId) : textAudience(channelId);
  }

  /**
   * The voice channel a batch is played in, or null: the session of its voice audience; what was
   * asked for in a text channel (/say, /narrate) in the session that channel is bound to, else the
   * one of the asker's voice channel, else the server's first. Only a session heard now counts.
   */
  playedIn(ready: ReadyUtterance): string | null {
    const first = ready.items[0]!;
    const queuedFor = voiceChannelOf(audienceOf(first));
    const channelId = queuedFor ?? this.#sessionFor(ready.guildId, first.channelId, first.userId)?.channelId;
    return channelId && this.#deps.voice.isConnected(ready.guildId, channelId) ? channelId : null;
  }

  /** The session that reads text channel `channelId`: the one bound to it (or to its voice chat), else the server's first. */
  #sessionFor(guildId: string, channelId: string, userId?: string) {
    const { voice } = this.#deps;
    const memberChannel = userId ? this.#deps.client.guilds.cache.get(guildId)?.voiceStates.cache.get(userId)?.channelId : undefined;
    return (
      voice.boundTo(guildId, channelId) ?? (memberChannel ? voice.at(guildId, memberChannel) : undefined) ?? voice.sessions(guildId)[0]
    );
  }
}
