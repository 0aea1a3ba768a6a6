import { ChannelType, MessageType, type Message } from 'discord.js';
import { type Repositories } from '../../db/repositories.ts';
import { speakingVoice } from '../../usecases/member-voice.ts';
import { type GuildSettings } from '../../domain/guild-settings.ts';
import { type ReadingSettings } from '../../domain/reading.ts';
import type { Dictionary } from '../../speech/text/dictionary.ts';
import { speakableName, type NameReader } from '../../speech/text/names.ts';
import { FILTERED, NAME_MAX_CHARS } from '../../speech/text/text.ts';
import { fastSpeed, readLimit } from '../../speech/text/fast-reading.ts';
import { countChars } from '../../tts/chars.ts';
import type { FilterEntry } from '../../domain/filters.ts';
import type { FloodGate } from './flood.ts';
import type { SpeechScheduler } from '../../speech/queue/scheduler.ts';
import { textAudience, type Utterance, type UtteranceInput } from '../../speech/queue/utterance.ts';
import type { SessionInfo, VoiceManager } from '../../voice/manager.ts';
import { peopleInCall, whoCanHear } from '../audience/hearing.ts';
import { guildLang, t } from '../../i18n/texts.ts';
import { messageText } from './message-text.ts';
import type { UtteranceMeta } from '../delivery/meta.ts';
import type { Notices } from '../delivery/notices.ts';
import { describeQueueRefusal } from '../delivery/outcomes.ts';
import { audienceCanView } from '../audience/visibility.ts';
import { whyNotRead, type NotRead } from '../../domain/reading-rules.ts';
import type { Arrival, Fate, FateDetail } from '../diagnosis/fates.ts';
import { contentEvidence, shapeOf } from '../diagnosis/message-content.ts';

/** What a message's text depends on besides the message (AutoReader #body). */
interface BodyOptions {
  reading: ReadingSettings;
  nickname: string | null;
  settings: GuildSettings;
  dictionary: Dictionary;
  /** The server's filters (a message one skips is FILTERED). */
  filters: readonly FilterEntry[];
  /** The voice channel of the session it is read in (null: posted as a file). */
  voiceChannelId: string | null;
}

/** What AutoReader works with. */
interface AutoReadDeps {
  voice: VoiceManager;
  repos: Repositories;
  names: NameReader;
  scheduler: SpeechScheduler;
  notices: Notices;
  /** Who a message of the channel read in `session` is for now (audience/audiences.ts `audience`): the scheduler merges only within one. */
  audience: (guildId: string, channelId: string, session?: SessionInfo | null) => string;
  /** A message not queued: refused (member queue full) or skipped (nobody can hear it); for the metrics. */
  onNotQueued?: (outcome: 'refused' | 'skipped') => void;
  /** Where each message's fate is recorded (diagnosis/fates.ts): why it was not queued, or that it was. */
  fates?: { note(arrival: Arrival, fate: Fate, detail?: FateDetail): void };
  /** Clock time, as the scheduler stamps arrivals. */
  now?: () => number;
  /** The flood limit's counts and summaries (without it, no limit applies). */
  flood?: FloodGate;
}

/**
 * messageCreate -> utterance: where an auto-read message becomes speech, as one straight line
 *: in scope? whose (src/domain/reading-rules.ts)? heard by anyone? wanted? speakable? whose
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
   * Reads a message aloud when it is in a session's bound text channel or its voice channel's own
   * chat, or in an auto-read channel while the bot is in voice (read in the server's first
   * session). Without a voice session only auto-read channels with MP3 posts turned on are read
   * (no characters spent for nobody).
   */
  read(message: Message): void {
    // Of Discord's own messages only a poll's result is read: its author is the poll's, whose rules it follows and who pays for it.
    if (!message.inGuild() || (message.system && message.type !== MessageType.PollResult)) return;
    const { guildId, channelId } = message;
    const reading = this.#deps.repos.reading.get(guildId);
    // A thread's message is read when the thread itself is read (the bound channel) or, with
    // threads on, when its parent is: a forum's posts are threads of the forum.
    const found = this.#inScope(guildId, channelId) ?? this.#threadScope(message, reading);
    if (found === null) return;
    const { scope, session } = found;
    const user = this.#deps.repos.userSettings.get(guildId, message.author.id);
    // What becomes of it is recorded at each step below (diagnosis/fates.ts), never its text.
    const arrival: Arrival = {
      guildId,
      messageId: message.id,
      channelId,
      userId: message.author.id,
      arrivedAt: this.#deps.now?.() ?? Date.now(),
      ...(contentEvidence(shapeOf(message)) === 'blanked' ? { blank: true } : {}),
    };
    const note = (fate: Fate, detail?: FateDetail) => this.#deps.fates?.note(arrival, fate, detail);
    const notRead = this.#whyNotRead(message, reading, user.muted, session);
    if (notRead !== undefined) return notRead === 'self' ? undefined : note(notRead);
    if (session && whoCanHear(message.guild, session.channelId) === 'deaf') {
      // Nobody can hear it: not synthesised, not read later, counted as skipped.
      this.#unheard.set(guildId, (this.#unheard.get(guildId) ?? 0) + 1);
      this.#deps.onNotQueued?.('skipped');
      return note('deafened', { voiceChannelId: session.channelId });
    }
    const settings = this.#deps.repos.guildSettings.get(guildId);
    const lang = guildLang(settings.locale);
    // No one hears text from a channel they could not read: when someone in the call cannot view
    // this channel, its messages are not read there; an MP3 channel gets its file instead.
    const voiceChannelId = session?.channelId ?? null;
    const hidden = voiceChannelId !== null && !audienceCanView(message.guild, message.channel, { voiceChannelId, postChannelId: null });
    if (hidden && !this.#deps.repos.autoRead.postsAudio(guildId, scope)) {
      this.#deps.onNotQueued?.('skipped');
      const content = t(lang, 'autoread.hidden_from_listeners', { voice: `<#${voiceChannelId}>` });
      void this.#deps.notices.tellAuthor({ guildId, userId: message.author.id, channelId, messageId: message.id }, 'hidden', content);
      return note('hidden', { voiceChannelId });
    }
    const dictionary = this.#deps.repos.dictionary.list(guildId, message.author.id);
    const filters = this.#deps.repos.filters.readable(guildId);
    const { name, body, ignored } = this.#body(message, {
      reading,
      nickname: user.nickname,
      settings,
      dictionary,
      filters,
      voiceChannelId,
    });
    const author = { guildId, userId: message.author.id, channelId, messageId: message.id };
    if (body === FILTERED) {
      // Never sent to the service; its author is told once an hour, then sees a reaction (notices.ts).
      this.#deps.onNotQueued?.('skipped');
      void this.#deps.notices.tellAuthor(author, 'filtered', t(lang, 'filter.not_read'));
      return note('filtered');
    }
    if (!body) return note(ignored ? 'ignored_prefix' : arrival.blank ? 'no_content' : 'nothing_to_read');
    const audience = hidden ? textAudience(channelId) : this.#deps.audience(guildId, channelId, session);
    const meta = (messageId: string): UtteranceMeta => ({
      delivery: { kind: 'message', channelId, messageId },
      lang,
      ...(hidden ? { attachOnly: true } : {}),
    });
    // Past the flood limit: not sent, only counted in one spoken summary (flood.ts), paid like the messages by their author.
    const floodMax = this.#deps.repos.filters.settings(guildId).floodMax;
    if (this.#deps.flood?.over(guildId, message.author.id, floodMax)) {
      this.#deps.onNotQueued?.('skipped');
      const input = { guildId, userId: message.author.id, channelId, kind: 'auto' as const, lang, audience, meta: meta('') };
      this.#deps.flood.count({
        input: { ...input, ...this.#voiceOf(message, audience) },
        lang,
        name: speakableName(name, lang, dictionary, NAME_MAX_CHARS, filters),
      });
      return note('flooded', floodMax === null ? {} : { limit: floodMax });
    }
    // Named per audience: a speaker in another voice channel of the server does not make this one's named again.
    // A poll's result is nobody's words: read without a name, and whoever writes next is named.
    const pollResult = message.type === MessageType.PollResult;
    if (pollResult) this.#deps.names.forget(`${guildId}:${audience}`);
    const prefix = pollResult
      ? ''
      : this.#deps.names.prefix(`${guildId}:${audience}`, message.author.id, name, lang, settings.readAuthorNames, dictionary, filters);
    const result = this.#deps.scheduler.enqueue({
      guildId,
      userId: message.author.id,
      channelId,
      kind: 'auto',
      text: prefix + body,
      ...(prefix ? { prefix } : {}),
      lang,
      ...this.#voiceFor(message, audience, body, settings),
      audience,
      meta: {
        ...meta(message.id),
        ...(pollResult && message.reference?.messageId ? { pollMessageId: message.reference.messageId } : {}),
      } satisfies UtteranceMeta,
    });
    if (!result.ok) {
      this.#deps.onNotQueued?.('refused');
      const content = describeQueueRefusal(lang, result);
      void this.#deps.notices.tellAuthor(author, result.reason, content);
      return note(result.reason === 'member_queue_full' ? 'queue_full' : result.reason, result.limit ? { limit: result.limit } : {});
    }
    note('queued', audience.startsWith('voice:') ? { voiceChannelId: audience.slice('voice:'.length) } : {});
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
    // The session it was queued for, if it is still there.
    const queuedFor = old.audience?.startsWith('voice:') ? this.#deps.voice.at(guildId, old.audience.slice('voice:'.length)) : undefined;
    if (this.#whyNotRead(message, reading, user.muted, queuedFor) !== undefined) return null;
    const settings = this.#deps.repos.guildSettings.get(guildId);
    const dictionary = this.#deps.repos.dictionary.list(guildId, message.author.id);
    const filters = this.#deps.repos.filters.readable(guildId);
    const voiceChannelId = queuedFor?.channelId ?? null;
    const { body } = this.#body(message, { reading, nickname: user.nickname, settings, dictionary, filters, voiceChannelId });
    // Edited into a filtered word, or into nothing to read: taken back.
    if (!body || body === FILTERED) return null;
    const { id: _id, enqueuedAt: _at, ...input } = old;
    return { ...input, text: (old.prefix ?? '') + body, ...this.#voiceFor(message, old.audience ?? '', body, settings) };
  }

  /** #voiceOf, read faster when `body` is longer than the server's max length (fast-reading.ts). */
  #voiceFor(message: Message<true>, audience: string, body: string, settings: GuildSettings) {
    const voice = this.#voiceOf(message, audience);
    return { ...voice, speed: fastSpeed(voice.speed, countChars(body), settings.maxLength, settings.fastReadingCeiling) };
  }

  /**
   * The author's voice, speed, pitch and volume as their settings are now: without a voice of their
   * own, their share of the server's pool among the people in the call it is played in (the author
   * counted in). A channel whose audio is posted as a file is nobody's call.
   */
  #voiceOf(message: Message<true>, audience: string) {
    const voiceChannelId = audience.startsWith('voice:') ? audience.slice('voice:'.length) : null;
    const call = voiceChannelId === null ? undefined : peopleInCall(message.guild, voiceChannelId);
    const { voice, speed, pitch, volume } = speakingVoice(this.#deps, message.guildId, message.author.id, call);
    return { voice, speed, pitch, ...(volume === 1 ? {} : { volume }) };
  }

  /** The author's name as shown, and the message's speakable text (null: nothing to read, or the ignore prefix; FILTERED: a filter skips it). */
  #body(message: Message<true>, o: BodyOptions): { name: string; body: string | null | typeof FILTERED; ignored: boolean } {
    // A forum post's first message has the post's id; its title is read before it.
    const channel = message.channel;
    const post = channel.isThread() && channel.parent?.type === ChannelType.GuildForum && message.id === channel.id;
    const name = o.nickname ?? message.member?.displayName ?? message.author.displayName;
    if (o.settings.ignorePrefix && message.content.startsWith(o.settings.ignorePrefix)) return { name, body: null, ignored: true };
    const body = messageText(
      message,
      { id: message.author.id, name },
      {
        lang: guildLang(o.settings.locale),
        // Cut only past the ceiling times the max length: up to there it is read faster (#voiceFor).
        maxLength: readLimit(o.settings.maxLength, o.settings.fastReadingCeiling),
        dictionary: o.dictionary,
        readEmoji: o.reading.emoji,
        forwards: o.reading.forwards,
        audience: { voiceChannelId: o.voiceChannelId, postChannelId: message.channelId },
        filters: o.filters,
        ...(post ? { title: channel.name } : {}),
      },
    );
    return { name, body, ignored: false };
  }

  /** Bots, webhooks, muted members and the role and voice-channel rules (src/domain/reading-rules.ts). */
  #whyNotRead(message: Message<true>, reading: ReadingSettings, muted: boolean, session: SessionInfo | undefined): NotRead | undefined {
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
        botVoiceChannelId: session?.channelId ?? null,
        roleExists: (id) => message.guild.roles.cache.has(id),
      },
    );
  }

  /** Where a message of `channelId` (a thread's: of `parentId`) would be read now, by the rule `read` follows; null: not read. */
  scopeOf(guildId: string, channelId: string, parentId: string | null): Scope | null {
    const threads = parentId !== null && this.#deps.repos.reading.get(guildId).threads;
    return this.#inScope(guildId, channelId) ?? (threads ? this.#inScope(guildId, parentId) : null);
  }

  /** Auto-read messages skipped: too old when their turn came, or nobody could hear them. */
  droppedCount(guildId: string): number {
    return this.#deps.scheduler.droppedCount(guildId) + (this.#unheard.get(guildId) ?? 0);
  }

  /** The read channel a thread's message is read for (its parent), or null: not a thread, threads off, or the parent not read. */
  #threadScope(message: Message<true>, reading: ReadingSettings): Scope | null {
    const parentId = message.channel.isThread() ? message.channel.parentId : null;
    if (!reading.threads || parentId === null) return null;
    return this.#inScope(message.guildId, parentId);
  }

  /**
   * Whether `channelId` is read, and in which session: the session it is bound to (or whose voice
   * channel's own chat it is), else for an auto-read channel the server's first session heard;
   * without one, only an auto-read channel with MP3 posts (no session: its files are posted).
   */
  #inScope(guildId: string, channelId: string): Scope | null {
    const { voice, repos } = this.#deps;
    const bound = voice.boundTo(guildId, channelId);
    if (bound && !bound.suppressed) return { scope: channelId, session: bound };
    if (repos.autoRead.isAutoRead(guildId, channelId)) {
      const first = voice.sessions(guildId).find((s) => !s.suppressed);
      if (first) return { scope: channelId, session: first };
    }
    return repos.autoRead.postsAudio(guildId, channelId) ? { scope: channelId, session: undefined } : null;
  }
}

/** The channel a message is read for (a thread's parent when the thread is read for it), and the session it is read in. */
interface Scope {
  scope: string;
  session: SessionInfo | undefined;
}
