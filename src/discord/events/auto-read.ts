import { ChannelType, type Message } from 'discord.js';
import {
  effectiveVoice,
  type DictionaryEntry,
  type GuildSettings,
  type ReadingSettings,
  type Repositories,
} from '../../db/repositories.ts';
import type { NameReader } from '../../speech/names.ts';
import { textAudience, type SpeechScheduler, type Utterance, type UtteranceInput } from '../../speech/queue.ts';
import type { VoiceManager } from '../../voice/manager.ts';
import { whoCanHear } from './hearing.ts';
import { guildLang, t } from '../i18n.ts';
import { messageText } from './message-text.ts';
import type { UtteranceMeta } from '../delivery/meta.ts';
import type { Notices } from '../delivery/notices.ts';
import { describeQueueRefusal } from '../delivery/outcomes.ts';
import { audienceCanView } from './visibility.ts';
import { whyNotRead, type NotRead } from './reading-rules.ts';

/** What a message's text depends on besides the message (AutoReader #body). */
interface BodyOptions {
  reading: ReadingSettings;
  nickname: string | null;
  settings: GuildSettings;
  dictionary: readonly DictionaryEntry[];
}

/** What AutoReader works with. */
export interface AutoReadDeps {
  voice: VoiceManager;
  repos: Repositories;
  names: NameReader;
  scheduler: SpeechScheduler;
  notices: Notices;
  /** Who a message of the channel is for now (delivery.ts `audience`): the scheduler merges only within one. */
  audience: (guildId: string, channelId: string) => string;
  /** A message not queued: refused (member queue full) or skipped (nobody can hear it); for the metrics. */
  onNotQueued?: (outcome: 'refused' | 'skipped') => void;
}

/**
 * messageCreate -> utterance: where an auto-read message becomes speech, as one straight line
 *: in scope? whose (reading-rules.ts)? heard by anyone? wanted? speakable? whose
 * name first? Then it is queued, or its author is told why not. Delivery takes it from the queue
 * (src/discord/delivery/delivery.ts).
 */
export class AutoReader {
  /** Auto-read messages not read because every listener was deafened, per guild. */
  readonly #unheard = new Map<string, number>();
  readonly #deps: AutoReadDeps;

  constructor(deps: AutoReadDeps) {
    this.#deps = deps;
  }

  /**
   * Reads a message aloud when it is in the bound or voice text channel, or an auto-read channel,
   * while the bot is in voice. Without a voice session only auto-read channels with MP3 posts
   * turned on are read (no characters spent for nobody).
   */
  read(message: Message): void {
    if (!message.inGuild() || message.system) return;
    const { guildId, channelId } = message;
    const inVoice = this.#deps.voice.isConnected(guildId);
    const reading = this.#deps.repos.reading.get(guildId);
    // A thread's message is read when the thread itself is read (the bound channel) or, with
    // threads on, when its parent is: a forum's posts are threads of the forum.
    const scope = this.#inScope(guildId, channelId, inVoice) ? channelId : this.#threadScope(message, reading, inVoice);
    if (scope === null) return;
    const user = this.#deps.repos.userSettings.get(guildId, message.author.id);
    if (this.#whyNotRead(message, reading, user.muted) !== undefined) return;
    if (inVoice && whoCanHear(message.guild, this.#deps.voice.voiceChannel(guildId)) === 'deaf') {
      // Nobody can hear it: not synthesised, not read later, counted as skipped.
      this.#unheard.set(guildId, (this.#unheard.get(guildId) ?? 0) + 1);
      this.#deps.onNotQueued?.('skipped');
      return;
    }
    const settings = this.#deps.repos.guildSettings.get(guildId);
    const lang = guildLang(settings.locale);
    // No one hears text from a channel they could not read: when someone in the call cannot view
    // this channel, its messages are not read there; an MP3 channel gets its file instead.
    const voiceChannelId = inVoice ? this.#deps.voice.voiceChannel(guildId) : null;
    const hidden = voiceChannelId !== null && !audienceCanView(message.guild, message.channel, { voiceChannelId, postChannelId: null });
    if (hidden && !this.#deps.repos.autoRead.postsAudio(guildId, scope)) {
      this.#deps.onNotQueued?.('skipped');
      const content = t(lang, 'autoread.hidden_from_listeners', { voice: `<#${voiceChannelId}>` });
      void this.#deps.notices.tellAuthor({ guildId, userId: message.author.id, channelId, messageId: message.id }, 'hidden', content);
      return;
    }
    const dictionary = this.#deps.repos.dictionary.list(guildId, message.author.id);
    const { name, body } = this.#body(message, { reading, nickname: user.nickname, settings, dictionary });
    if (!body) return;
    const prefix = this.#deps.names.prefix(guildId, message.author.id, name, lang, settings.readAuthorNames, dictionary);
    const result = this.#deps.scheduler.enqueue({
      guildId,
      userId: message.author.id,
      channelId,
      kind: 'auto',
      text: prefix + body,
      ...(prefix ? { prefix } : {}),
      lang,
      ...effectiveVoice(settings, user),
      audience: hidden ? textAudience(channelId) : this.#deps.audience(guildId, channelId),
      meta: {
        delivery: { kind: 'message', channelId, messageId: message.id },
        lang,
        ...(hidden ? { attachOnly: true } : {}),
      } satisfies UtteranceMeta,
    });
    if (!result.ok) {
      this.#deps.onNotQueued?.('refused');
      const content = describeQueueRefusal(lang, result);
      void this.#deps.notices.tellAuthor({ guildId, userId: message.author.id, channelId, messageId: message.id }, result.reason, content);
    }
  }

  /**
   * A message edited while it waits to be read: what to read instead, through the same rules and
   * text as a new message (null: it would not be read now). Its name is read as decided when it
   * arrived; its voice as the member's settings are now. Changes nothing else.
   */
  edited(message: Message<true>, old: Utterance): UtteranceInput | null {
    const { guildId } = message;
    const reading = this.#deps.repos.reading.get(guildId);
    const user = this.#deps.repos.userSettings.get(guildId, message.author.id);
    if (this.#whyNotRead(message, reading, user.muted) !== undefined) return null;
    const settings = this.#deps.repos.guildSettings.get(guildId);
    const dictionary = this.#deps.repos.dictionary.list(guildId, message.author.id);
    const { body } = this.#body(message, { reading, nickname: user.nickname, settings, dictionary });
    if (!body) return null;
    const { id: _id, enqueuedAt: _at, ...input } = old;
    return { ...input, text: (old.prefix ?? '') + body, ...effectiveVoice(settings, user) };
  }

  /** The author's name as shown, and the message's speakable text (null: nothing to read, or the ignore prefix). */
  #body(message: Message<true>, o: BodyOptions) {
    // A forum post's first message has the post's id; its title is read before it.
    const channel = message.channel;
    const post = channel.isThread() && channel.parent?.type === ChannelType.GuildForum && message.id === channel.id;
    const name = o.nickname ?? message.member?.displayName ?? message.author.displayName;
    if (o.settings.ignorePrefix && message.content.startsWith(o.settings.ignorePrefix)) return { name, body: null };
    const body = messageText(
      message,
      { id: message.author.id, name },
      {
        lang: guildLang(o.settings.locale),
        maxLength: o.settings.maxLength,
        dictionary: o.dictionary,
        readEmoji: o.reading.emoji,
        forwards: o.reading.forwards,
        audience: { voiceChannelId: this.#deps.voice.voiceChannel(message.guildId), postChannelId: message.channelId },
        ...(post ? { title: channel.name } : {}),
      },
    );
    return { name, body };
  }

  /** Bots, webhooks, muted members and the role and voice-channel rules (reading-rules.ts). */
  #whyNotRead(message: Message<true>, reading: ReadingSettings, muted: boolean): NotRead | undefined {
    const { guildId } = message;
    const lists = this.#deps.repos.readingLists;
    const member = message.webhookId ? null : message.member;
    return whyNotRead(
      {
        id: message.author.id,
        bot: message.author.bot,
        webhookId: message.webhookId,
        roleIds: member ? new Set(member.roles.cache.keys()) : null,
        voiceChannelId: message.guild.voiceStates.cache.get(message.author.id)?.channelId ?? null,
      },
      {
        reading,
        allowedBots: reading.bots === 'listed' ? lists.list(guildId, 'bot') : [],
        neverRoles: lists.list(guildId, 'never_role'),
        muted,
        selfId: message.client.user.id,
        botVoiceChannelId: this.#deps.voice.voiceChannel(guildId) ?? null,
        roleExists: (id) => message.guild.roles.cache.has(id),
      },
    );
  }

  /** Auto-read messages skipped: too old when their turn came, or nobody could hear them. */
  droppedCount(guildId: string): number {
    const stale = this.#deps.scheduler.stats().reduce((n, s) => n + (s.guildId === guildId ? s.dropped : 0), 0);
    return stale + (this.#unheard.get(guildId) ?? 0);
  }

  /** The read channel a thread's message is read for (its parent), or null: not a thread, threads off, or the parent not read. */
  #threadScope(message: Message<true>, reading: ReadingSettings, inVoice: boolean): string | null {
    const parentId = message.channel.isThread() ? message.channel.parentId : null;
    if (!reading.threads || parentId === null) return null;
    return this.#inScope(message.guildId, parentId, inVoice) ? parentId : null;
  }

  /** The bound text channel, the voice channel's own chat, or an auto-read channel; only MP3 channels without voice. */
  #inScope(guildId: string, channelId: string, inVoice: boolean): boolean {
    if (!inVoice) return this.#deps.repos.autoRead.postsAudio(guildId, channelId);
    return (
      this.#deps.voice.boundTextChannel(guildId) === channelId ||
      this.#deps.voice.voiceChannel(guildId) === channelId ||
      this.#deps.repos.autoRead.isAutoRead(guildId, channelId)
    );
  }
}
