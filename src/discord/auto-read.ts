import type { Message } from 'discord.js';
import { effectiveVoice, type Repositories } from '../db/repositories.ts';
import type { NameReader } from '../speech/names.ts';
import type { SpeechScheduler } from '../speech/queue.ts';
import { normaliseMessage } from '../speech/text.ts';
import type { VoiceManager } from '../voice/manager.ts';
import { whoCanHear } from './hearing.ts';
import { guildLang, t } from './i18n.ts';
import { toPlainMessage } from './mentions.ts';
import type { UtteranceMeta } from './meta.ts';
import type { Notices } from './notices.ts';

/** What AutoReader works with. */
export interface AutoReadDeps {
  voice: VoiceManager;
  repos: Repositories;
  names: NameReader;
  scheduler: SpeechScheduler;
  notices: Notices;
  /** A message not queued: refused (member queue full) or skipped (nobody can hear it); for the metrics. */
  onNotQueued?: (outcome: 'refused' | 'skipped') => void;
}

/**
 * messageCreate -> utterance: where an auto-read message becomes speech, as one straight line
 * (STYLE.md #21): in scope? heard by anyone? wanted? speakable? whose name first? Then it is queued,
 * or its author is told why not. Delivery takes it from the queue (src/discord/delivery.ts).
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
   * turned on are read (issue 9 §6: no characters spent for nobody).
   */
  read(message: Message): void {
    if (!message.inGuild() || message.author.bot || message.webhookId || message.system) return;
    const { guildId, channelId } = message;
    const inVoice = this.#deps.voice.isConnected(guildId);
    if (!this.#inScope(guildId, channelId, inVoice)) return;
    if (inVoice && whoCanHear(message.guild, this.#deps.voice.voiceChannel(guildId)) === 'deaf') {
      // Nobody can hear it: not synthesised, not read later, counted as skipped.
      this.#unheard.set(guildId, (this.#unheard.get(guildId) ?? 0) + 1);
      this.#deps.onNotQueued?.('skipped');
      return;
    }
    const settings = this.#deps.repos.guildSettings.get(guildId);
    if (settings.ignorePrefix && message.content.startsWith(settings.ignorePrefix)) return;
    const user = this.#deps.repos.userSettings.get(guildId, message.author.id);
    if (user.muted) return;
    const lang = guildLang(settings.locale);
    const dictionary = this.#deps.repos.dictionary.list(guildId);
    const plain = toPlainMessage({
      content: message.content,
      author: { id: message.author.id, name: message.member?.displayName ?? message.author.displayName },
      guild: message.guild,
      users: message.client.users,
      attachments: [...message.attachments.values()].map((a) => ({ name: a.name, contentType: a.contentType })),
      stickers: [...message.stickers.values()].map((s) => ({ name: s.name })),
    });
    const body = normaliseMessage(plain, { lang, maxLength: settings.maxLength, dictionary });
    if (!body) return;
    const name = user.nickname ?? message.member?.displayName ?? message.author.displayName;
    const prefix = this.#deps.names.prefix(guildId, message.author.id, name, lang, settings.readAuthorNames, dictionary);
    const result = this.#deps.scheduler.enqueue({
      guildId, userId: message.author.id, channelId, kind: 'auto', text: prefix + body, ...(prefix ? { prefix } : {}), lang, ...effectiveVoice(settings, user),
      meta: { delivery: { kind: 'message', channelId, messageId: message.id }, lang } satisfies UtteranceMeta,
    });
    if (!result.ok) {
      this.#deps.onNotQueued?.('refused');
      const content = result.reason === 'member_queue_full' ? t(lang, 'queue.member_full', { limit: result.limit ?? 0 }) : t(lang, 'queue.closed');
      void this.#deps.notices.tellAuthor({ guildId, userId: message.author.id, channelId, messageId: message.id }, result.reason, content);
    }
  }

  /** Auto-read messages skipped: too old when their turn came, or nobody could hear them. */
  droppedCount(guildId: string): number {
    return this.#deps.scheduler.stats(guildId).dropped + (this.#unheard.get(guildId) ?? 0);
  }

  /** The bound text channel, the voice channel's own chat, or an auto-read channel; only MP3 channels without voice. */
  #inScope(guildId: string, channelId: string, inVoice: boolean): boolean {
    if (!inVoice) return this.#deps.repos.autoRead.postsAudio(guildId, channelId);
    return this.#deps.voice.boundTextChannel(guildId) === channelId || this.#deps.voice.voiceChannel(guildId) === channelId || this.#deps.repos.autoRead.isAutoRead(guildId, channelId);
  }
}
