import {
  DiscordAPIError,
  InteractionWebhook,
  type ChatInputCommandInteraction,
  type Client,
  type Guild,
  type Message,
  type VoiceState,
} from 'discord.js';
import { UserError } from './command.ts';
import { langOf, t, type Lang } from './i18n.ts';
import { describeFailure } from './outcomes.ts';
import { effectiveVoice, type Repositories, type StoredJob } from '../db/repositories.ts';
import type { CharacterBudget } from '../speech/budget.ts';
import { BudgetRefusedError, SpeechError } from '../speech/synthesize.ts';
import type { VoiceChecker } from '../speech/voice-check.ts';
import type { NameReader } from '../speech/names.ts';
import { joinAnnouncement } from '../speech/names.ts';
import type { ProgressEvent, ReadyUtterance, SpeechScheduler, Utterance, UtteranceInput } from '../speech/queue.ts';
import { normaliseMessage, type PlainMessage } from '../speech/text.ts';
import { countChars } from '../tts/chars.ts';
import { validateAdvanced, validateStandard, type AdvancedVoice } from '../tts/validation.ts';
import { isKnownCode, TtsError, TtsInputError } from '../tts/errors.ts';
import type { MediaSupport } from '../util/ffmpeg.ts';
import type { Logger } from '../util/log.ts';
import type { EndedSession, VoiceManager } from '../voice/manager.ts';

/** Where a finished utterance goes when it is not (only) played: plain data, so it survives a restart. */
export type Delivery =
  /** `createdAt` (the interaction's) and `channelId` let a late result go to the channel once the 15-minute token is gone. */
  | { kind: 'interaction'; applicationId: string; token: string; createdAt?: number; channelId?: string }
  | { kind: 'message'; channelId: string; messageId: string };

/** Why queued speech was dropped before it was spoken (each has a `cancelled.*` message). */
export type ClearReason = 'clear' | 'leave' | 'auto_leave' | 'disconnected';

/** Discord's interaction tokens live 15 minutes; after 14 a reply goes to the channel instead. */
const TOKEN_MAX_AGE_MS = 14 * 60_000;
/** At most one public notice per member per guild per kind within this time (issue 9 §6). */
const NOTICE_INTERVAL_MS = 60 * 60_000;

export interface UtteranceMeta {
  delivery: Delivery;
  lang: Lang;
  /** Attach the MP3 even when connected to voice (/say attach:true). */
  forceAttach?: boolean;
  /** /narrate: the advanced voice, shown with the seed. */
  advancedVoice?: string;
}

export interface SayArgs {
  guildId: string;
  lang: Lang;
  text: string;
  voice?: string | undefined;
  speed?: number | undefined;
  pitch?: number | undefined;
  forceAttach?: boolean;
}

export interface NarrateArgs {
  guildId: string;
  lang: Lang;
  text: string;
  voice?: string | undefined;
  tone?: string | undefined;
  model?: 'flash' | 'pro' | undefined;
  speed?: number | undefined;
  pitch?: number | undefined;
  seed?: number | undefined;
}

/** Longest /say text after normalisation (Discord caps the option at 1000 anyway). */
const SAY_MAX_CHARS = 1000;
const DEFAULT_ADVANCED_VOICE = 'Ruby';

/** An interaction reply still being edited; its edits are chained so they land in order. */
interface Reply {
  meta: UtteranceMeta;
  chain: Promise<unknown>;
}

/**
 * Glue between Discord and the speech core: turns commands and messages into utterances, and
 * delivers each finished one (voice, attachment, or a localised reason it could not be spoken).
 * Nothing is silently lost: every utterance ends in exactly one of those.
 */
export class SpeechService {
  readonly #client: Client;
  readonly #scheduler: SpeechScheduler;
  readonly #budget: CharacterBudget;
  readonly #repos: Repositories;
  readonly #voice: VoiceManager;
  readonly #names: NameReader;
  readonly #logger: Logger;
  readonly #plan: 'free' | 'paid';
  readonly #media: MediaSupport;
  readonly #now: () => number;
  readonly #voices: VoiceChecker;
  /** Interaction replies not yet given their final answer, by utterance id. */
  readonly #replies = new Map<string, Reply>();
  /** Last public notice per guild, member and kind (the rest get a reaction). */
  readonly #notices = new Map<string, number>();
  /** Auto-read messages not read because every listener was deafened, per guild. */
  readonly #unheard = new Map<string, number>();

  constructor(options: {
    client: Client;
    scheduler: SpeechScheduler;
    budget: CharacterBudget;
    repos: Repositories;
    voice: VoiceManager;
    names: NameReader;
    logger: Logger;
    plan: 'free' | 'paid';
    voices: VoiceChecker;
    /** Whether an MP3 can be played (ffmpeg); without it, audio not cached as Ogg Opus is attached. */
    media?: MediaSupport;
    now?: () => number;
  }) {
    this.#client = options.client;
    this.#scheduler = options.scheduler;
    this.#budget = options.budget;
    this.#repos = options.repos;
    this.#voice = options.voice;
    this.#names = options.names;
    this.#logger = options.logger;
    this.#plan = options.plan;
    this.#media = options.media ?? { transcode: true, playMp3: true };
    this.#now = options.now ?? Date.now;
    this.#voices = options.voices;
    this.#scheduler.setDefaultSink((ready, signal) => this.deliver(ready, signal));
    this.#scheduler.on('progress', (event) => this.#onProgress(event));
    this.#scheduler.on('dropped', ({ guildId, items }) =>
      this.#logger.warn({ guildId, count: items.length }, 'auto-read messages dropped: the queue was too far behind'),
    );
    this.#scheduler.on('cleared', ({ items, reason }) => this.#tellCancelled(items, (reason as ClearReason | undefined) ?? 'clear'));
    this.#voice.on('ended', (ended) => this.#onSessionEnded(ended));
  }

  // ------------------------------------------------------------------ commands

  /** /say: checks everything that can be checked before answering, then queues the speech. */
  async say(interaction: ChatInputCommandInteraction, args: SayArgs): Promise<void> {
    const userId = interaction.user.id;
    const settings = effectiveVoice(this.#repos.guildSettings.get(args.guildId), this.#repos.userSettings.get(args.guildId, userId));
    const voice = args.voice?.trim() || settings.voice;
    const speed = args.speed ?? settings.speed;
    const pitch = args.pitch ?? settings.pitch;
    const text = this.#normaliseCommandText(interaction, args.guildId, args.text, args.lang, SAY_MAX_CHARS);
    if (!text) throw new UserError('tts.validation_error');
    const checked = validateStandard({ voice, text, speed, pitch });
    if (!checked.ok) throw new TtsInputError({ issues: checked.issues });
    await this.#precheck(args.guildId, userId, 'standard', countChars(text));
    const input: UtteranceInput = { guildId: args.guildId, userId, channelId: interaction.channelId, kind: 'say', text, lang: args.lang, voice, speed, pitch };
    if (!this.#scheduler.accepts(input)) throw new UserError('queue.member_full', { limit: this.#scheduler.maxPendingCharsPerMember });
    if (!this.#voices.isKnown(voice)) {
      // The confirming request may wait for the rate budget: answer Discord first.
      await interaction.deferReply();
      await this.confirmVoice(voice, args.guildId, userId);
    }
    await this.#enqueueForInteraction(interaction, input, { forceAttach: args.forceAttach ?? false });
  }

  /** In the known list, or confirmed by the service earlier: usable without a request. */
  isKnownVoice(voice: string): boolean {
    return this.#voices.isKnown(voice);
  }

  /**
   * A standard voice may be saved or used only when it is known or the service confirmed it (one
   * short request, charged like any other: src/speech/voice-check.ts). Otherwise throws what to
   * tell the member; nothing is saved.
   */
  async confirmVoice(voice: string, guildId: string, userId: string): Promise<void> {
    try {
      await this.#voices.confirm(voice, { guildId, userId });
    } catch (error) {
      if (error instanceof BudgetRefusedError) throw error;
      const code = (error as { code?: string }).code;
      if (code === 'unsupported_voice' || code === 'invalid_voice' || code === 'voice_required' || code === 'invalid_input') throw new UserError('tts.unsupported_voice', { voice });
      if (error instanceof SpeechError || code === 'rate_limited' || code === 'aborted') throw new UserError('voice.check_busy', { voice });
      throw error;
    }
  }

  /** /narrate: advanced job; progress is shown by editing the deferred reply. */
  async narrate(interaction: ChatInputCommandInteraction, args: NarrateArgs): Promise<void> {
    const userId = interaction.user.id;
    const text = this.#normaliseCommandText(interaction, args.guildId, args.text, args.lang, 3000);
    if (!text) throw new UserError('tts.validation_error');
    const advanced = {
      voice: (args.voice ?? DEFAULT_ADVANCED_VOICE) as AdvancedVoice,
      ...(args.tone ? { tone: args.tone } : {}),
      ...(args.model ? { model: args.model } : {}),
      ...(args.seed !== undefined ? { seed: args.seed } : {}),
      ...(args.speed !== undefined ? { speed: args.speed } : {}),
      ...(args.pitch !== undefined ? { pitch: args.pitch } : {}),
    };
    const checked = validateAdvanced({ text, ...advanced }, this.#plan);
    if (!checked.ok) throw new TtsInputError({ issues: checked.issues });
    await this.#precheck(args.guildId, userId, 'advanced', countChars(text));
    await this.#enqueueForInteraction(interaction, {
      guildId: args.guildId, userId, channelId: interaction.channelId, kind: 'narrate', text, lang: args.lang,
      voice: advanced.voice, speed: advanced.speed ?? 1, pitch: advanced.pitch ?? 0, advanced,
    }, { advancedVoice: advanced.voice });
  }

  /** /join: the member's (or the given) voice channel; this text channel is read until /leave. */
  async join(interaction: ChatInputCommandInteraction, channelId: string | null, lang: Lang): Promise<void> {
    const guild = interaction.guild ?? (interaction.guildId ? await this.#client.guilds.fetch(interaction.guildId) : null);
    if (!guild) throw new UserError('error.guild_only');
    const member = guild.members.cache.get(interaction.user.id) ?? (await guild.members.fetch(interaction.user.id).catch(() => null));
    const target = channelId ?? member?.voice.channelId ?? null;
    if (!target) throw new UserError('voice.join_first');
    await interaction.deferReply();
    try {
      await this.#voice.join({ guildId: guild.id, channelId: target, textChannelId: interaction.channelId, adapterCreator: guild.voiceAdapterCreator });
    } catch (error) {
      this.#logger.warn({ err: error, guildId: guild.id, channelId: target }, 'voice join failed');
      throw new UserError('voice.join_failed');
    }
    await interaction.editReply({ content: t(lang, 'voice.joined', { voice: `<#${target}>`, text: `<#${interaction.channelId}>` }), allowedMentions: { parse: [] } });
  }

  skip(guildId: string): boolean {
    return this.#scheduler.skip(guildId);
  }

  /** Drops everything queued in the guild; each /say or /narrate waiting is told why. */
  clear(guildId: string, reason: ClearReason = 'clear'): number {
    return this.#scheduler.clear(guildId, reason);
  }

  /** /leave: leaves voice for good (not rejoined after a restart) and drops what was queued. */
  leave(guildId: string): boolean {
    if (!this.#voice.leave(guildId)) return false;
    this.clear(guildId, 'leave');
    return true;
  }

  /** Auto-read messages skipped: too old when their turn came, or nobody could hear them. */
  droppedCount(guildId: string): number {
    return this.#scheduler.stats(guildId).dropped + (this.#unheard.get(guildId) ?? 0);
  }

  /** Posts a notice in a channel (no pings); false when it cannot be posted. */
  async postNotice(channelId: string, content: string): Promise<boolean> {
    const channel = await this.#client.channels.fetch(channelId).catch(() => null);
    if (!channel?.isSendable()) return false;
    return channel
      .send({ content, allowedMentions: { parse: [] } })
      .then(() => true)
      .catch((error: unknown) => {
        this.#logger.warn({ err: error, channelId }, 'could not post a notice');
        return false;
      });
  }

  // ------------------------------------------------------------------ auto-read

  /**
   * messageCreate: reads a message aloud when it is in the bound or voice text channel, or an
   * auto-read channel, while the bot is in voice. Without a voice session only auto-read channels
   * with MP3 posts turned on are read (issue 9 §6: no characters spent for nobody).
   */
  autoRead(message: Message): void {
    if (!message.inGuild() || message.author.bot || message.webhookId || message.system) return;
    const guildId = message.guildId;
    const channelId = message.channelId;
    const inVoice = this.#voice.isConnected(guildId);
    const inScope = inVoice
      ? this.#voice.boundTextChannel(guildId) === channelId ||
        this.#voice.voiceChannel(guildId) === channelId || // the voice channel's own text chat
        this.#repos.autoRead.isAutoRead(guildId, channelId)
      : this.#repos.autoRead.postsAudio(guildId, channelId);
    if (!inScope) return;
    if (inVoice && this.#listeners(message.guild) === 'deaf') {
      // Nobody can hear it: not synthesised, not read later, counted as skipped.
      this.#unheard.set(guildId, (this.#unheard.get(guildId) ?? 0) + 1);
      return;
    }
    const settings = this.#repos.guildSettings.get(guildId);
    if (settings.ignorePrefix && message.content.startsWith(settings.ignorePrefix)) return;
    const user = this.#repos.userSettings.get(guildId, message.author.id);
    if (user.muted) return;
    const lang: Lang = settings.locale === 'en' ? 'en' : 'ja';
    const dictionary = this.#repos.dictionary.list(guildId);
    const body = normaliseMessage(this.#plainMessage(message), { lang, maxLength: settings.maxLength, dictionary });
    if (!body) return;
    const name = user.nickname ?? message.member?.displayName ?? message.author.displayName;
    const prefix = this.#names.prefix(guildId, message.author.id, name, lang, settings.readAuthorNames, dictionary);
    const voice = effectiveVoice(settings, user);
    const result = this.#scheduler.enqueue({
      guildId, userId: message.author.id, channelId, kind: 'auto', text: prefix + body, lang, ...voice,
      meta: { delivery: { kind: 'message', channelId, messageId: message.id }, lang } satisfies UtteranceMeta,
    });
    if (!result.ok) {
      const content = result.reason === 'member_queue_full' ? t(lang, 'queue.member_full', { limit: result.limit ?? 0 }) : t(lang, 'queue.closed');
      void this.#noticeOrReact({ guildId, userId: message.author.id, channelId, messageId: message.id }, result.reason, content);
    }
  }

  /** voiceStateUpdate: join/leave announcements, auto-join, and leaving when no human is left. */
  async onVoiceState(oldState: VoiceState, newState: VoiceState): Promise<void> {
    const guild = newState.guild;
    const me = this.#client.user?.id;
    if (newState.id === me) {
      // Our own state: if someone disconnected the bot, end the session at once (and say so).
      if (oldState.channelId && !newState.channelId) this.#voice.disconnected(guild.id, 'disconnected by someone');
      // Moved by someone: the read scope and the "no human left" check follow the bot.
      else if (newState.channelId && oldState.channelId !== newState.channelId && this.#voice.moved(guild.id, newState.channelId)) {
        if (this.#listeners(guild) === 'nobody') this.#autoLeave(guild.id);
      }
      return;
    }
    if (newState.member?.user.bot) return;
    const settings = this.#repos.guildSettings.get(guild.id);
    const connected = this.#voice.voiceChannel(guild.id);
    if (!connected && settings.autoJoinChannelId && newState.channelId === settings.autoJoinChannelId && oldState.channelId !== newState.channelId) {
      await this.#voice
        .join({ guildId: guild.id, channelId: settings.autoJoinChannelId, textChannelId: settings.autoJoinChannelId, adapterCreator: guild.voiceAdapterCreator })
        .catch((error: unknown) => this.#logger.warn({ err: error, guildId: guild.id }, 'auto-join failed'));
      return;
    }
    if (!connected || oldState.channelId === newState.channelId) return;
    const lang: Lang = settings.locale === 'en' ? 'en' : 'ja';
    if (settings.announceJoinLeave && (newState.channelId === connected || oldState.channelId === connected) && this.#listeners(guild) === 'yes') {
      const dictionary = this.#repos.dictionary.list(guild.id);
      const user = this.#repos.userSettings.get(guild.id, newState.id);
      const name = user.nickname ?? newState.member?.displayName ?? '';
      const kind = newState.channelId === connected ? 'join' : 'leave';
      this.#scheduler.enqueue({
        guildId: guild.id, userId: newState.id, channelId: connected, kind: 'auto', text: joinAnnouncement(name, lang, kind, dictionary), lang,
        voice: settings.voice, speed: settings.speed, pitch: settings.pitch,
        meta: { delivery: { kind: 'message', channelId: connected, messageId: '' }, lang } satisfies UtteranceMeta,
      });
    }
    if (oldState.channelId === connected && this.#listeners(guild) === 'nobody') this.#autoLeave(guild.id);
  }

  #autoLeave(guildId: string): void {
    this.#logger.info({ guildId }, 'no human left in the voice channel; leaving');
    this.#voice.leave(guildId);
    this.clear(guildId, 'auto_leave');
  }

  /** Who can hear the bot's voice channel: nobody, only deafened humans, or someone. */
  #listeners(guild: Guild): 'nobody' | 'deaf' | 'yes' {
    const channelId = this.#voice.voiceChannel(guild.id);
    const channel = channelId ? guild.channels.cache.get(channelId) : undefined;
    if (!channel?.isVoiceBased()) return 'nobody';
    const humans = [...channel.members.values()].filter((m) => !m.user.bot);
    if (humans.length === 0) return 'nobody';
    return humans.every((m) => m.voice.deaf) ? 'deaf' : 'yes';
  }

  /** Kicked (4014), disconnected by someone, or unable to reconnect: reading stopped, said once. */
  #onSessionEnded(ended: EndedSession): void {
    this.#logger.info({ guildId: ended.guildId, reason: ended.reason }, 'voice session ended without /leave');
    this.clear(ended.guildId, 'disconnected');
    if (!ended.textChannelId) return;
    const lang = this.#guildLang(ended.guildId);
    void this.postNotice(ended.textChannelId, t(lang, 'voice.disconnected'));
  }

  #guildLang(guildId: string): Lang {
    return this.#repos.guildSettings.get(guildId).locale === 'en' ? 'en' : 'ja';
  }

  // ------------------------------------------------------------------ delivery

  /**
   * The scheduler's sink: plays in voice when connected, and attaches the MP3 when not connected
   * or when asked to (/say attach:true does both); a failure is told to whoever asked. Settles
   * once per utterance; the scheduler advances after it.
   */
  async deliver(ready: ReadyUtterance, signal: AbortSignal): Promise<void> {
    const metas = ready.items.map((item) => item.meta as UtteranceMeta);
    if (ready.error) {
      for (const [i, meta] of metas.entries()) await this.#tellFailure(meta, ready.items[i]!, ready.error);
      return;
    }
    const audio = ready.audio;
    // Paid audio that cannot be played here (no ffmpeg for an uncached MP3) is attached instead.
    const played = this.#voice.isConnected(ready.guildId) && (audio.oggPath !== undefined || this.#media.playMp3);
    // /say attach:true while in voice: played and attached.
    const toAttach = metas.filter((m) => !played || m.forceAttach);
    // Attach first (in parallel with playback) so a long voice line does not delay the reply.
    // Messages merged into one request get one attachment, as a reply to the last of them.
    const lastMessage = metas.findLast((m) => m.delivery.kind === 'message' && toAttach.includes(m));
    const attaching = Promise.all(
      metas.map((meta, i) => {
        const item = ready.items[i]!;
        if (meta.delivery.kind === 'message' && meta !== lastMessage) return undefined;
        if (toAttach.includes(meta)) return this.#attach(meta, item, audio.mp3Path ?? audio.mp3!, audio.seed);
        if (meta.delivery.kind === 'interaction') return this.#finalEdit(item, meta, { content: t(meta.lang, 'say.playing') });
        return undefined;
      }),
    );
    if (played) {
      try {
        await this.#voice.play(ready.guildId, audio, signal);
      } catch (error) {
        this.#logger.warn({ err: error, guildId: ready.guildId }, 'playback failed');
      }
    }
    await attaching;
  }

  async #attach(meta: UtteranceMeta, item: Pick<Utterance, 'id' | 'userId' | 'channelId'>, mp3: string | Buffer, seed: number | undefined): Promise<void> {
    const file = { attachment: mp3, name: 'speech.mp3' };
    if (meta.delivery.kind === 'interaction') {
      const content = meta.advancedVoice
        ? t(meta.lang, 'narrate.done', { voice: meta.advancedVoice, seed: seed ?? '—' })
        : t(meta.lang, 'say.attached');
      await this.#finalEdit(item, meta, { content, files: [file] });
      return;
    }
    const channel = await this.#client.channels.fetch(meta.delivery.channelId).catch(() => null);
    if (!channel?.isSendable()) return;
    await channel.send({
      files: [file],
      allowedMentions: { parse: [], repliedUser: false },
      ...(meta.delivery.messageId ? { reply: { messageReference: meta.delivery.messageId, failIfNotExists: false } } : {}),
    }).catch((error: unknown) => this.#logger.warn({ err: error, channelId: meta.delivery.kind === 'message' ? meta.delivery.channelId : undefined }, 'could not post audio'));
  }

  async #tellFailure(meta: UtteranceMeta, item: Pick<Utterance, 'id' | 'userId' | 'channelId' | 'guildId' | 'voice'>, error: Error): Promise<void> {
    const known = describeFailure(meta.lang, error, { voice: item.voice });
    if (!known) this.#logger.error({ err: error }, 'speech failed');
    const content = known ?? t(meta.lang, 'error.generic');
    if (meta.delivery.kind === 'interaction') {
      const prefix = meta.advancedVoice ? t(meta.lang, 'narrate.failed', { reason: content }) : content;
      await this.#finalEdit(item, meta, { content: prefix });
      return;
    }
    // Auto-read: one public notice per member and kind per hour, a reaction in between (issue 9 §6).
    const kind = (error as { code?: string }).code ?? 'failed';
    await this.#noticeOrReact({ guildId: item.guildId, userId: item.userId, channelId: meta.delivery.channelId, messageId: meta.delivery.messageId }, kind, content);
  }

  /**
   * Tells an auto-read author why their message is not read: a reply at most once per hour per
   * guild, member and kind of refusal, and a reaction on the message in between, so a member
   * over their allowance is not answered line by line.
   */
  async #noticeOrReact(to: { guildId: string; userId: string; channelId: string; messageId: string }, kind: string, content: string): Promise<void> {
    const key = `${to.guildId}:${to.userId}:${kind}`;
    const now = this.#now();
    const last = this.#notices.get(key);
    const channel = await this.#client.channels.fetch(to.channelId).catch(() => null);
    if (!channel?.isSendable()) return;
    if (last !== undefined && now - last < NOTICE_INTERVAL_MS) {
      if (to.messageId && 'messages' in channel) {
        await channel.messages.react(to.messageId, kind === 'member_queue_full' ? '⏳' : '🔇').catch((e: unknown) => this.#logger.debug({ err: e }, 'could not react'));
      }
      return;
    }
    this.#notices.set(key, now);
    for (const [k, at] of this.#notices) if (now - at >= NOTICE_INTERVAL_MS) this.#notices.delete(k);
    await channel
      .send({ content, allowedMentions: { parse: [], repliedUser: false }, ...(to.messageId ? { reply: { messageReference: to.messageId, failIfNotExists: false } } : {}) })
      .catch((e: unknown) => this.#logger.warn({ err: e }, 'could not tell the author'));
  }

  /** /say and /narrate replies dropped by /clear, /leave or a leave: each told why, then forgotten. */
  #tellCancelled(items: readonly Utterance[], reason: ClearReason): void {
    for (const item of items) {
      const meta = item.meta as UtteranceMeta | undefined;
      if (meta?.delivery.kind !== 'interaction') continue;
      void this.#finalEdit(item, meta, { content: t(meta.lang, `cancelled.${reason}`) });
    }
  }

  /** An advanced job finished after a restart: its audio goes where the request asked for it. */
  async deliverRecoveredJob(job: StoredJob, result: { mp3: Buffer; seed?: number }): Promise<void> {
    const meta = this.#recoveredMeta(job);
    await this.#attach(meta, { id: job.jobId, userId: job.userId, channelId: job.channelId }, result.mp3, result.seed ?? job.seed ?? undefined);
  }

  /** An advanced job that a restart could not finish: its author is told why. */
  async tellRecoveredJobFailure(job: StoredJob, error: { code: string; message: string }): Promise<void> {
    const meta = this.#recoveredMeta(job);
    const item = { id: job.jobId, userId: job.userId, channelId: job.channelId, guildId: job.guildId, voice: job.request.voice ?? '' };
    await this.#tellFailure(meta, item, new TtsError(isKnownCode(error.code) ? error.code : 'unknown', { message: error.message, serviceCode: error.code }));
  }

  /** The stored delivery of a job; #finalEdit posts in its channel once the token is too old. */
  #recoveredMeta(job: StoredJob): UtteranceMeta {
    const stored = job.delivery as UtteranceMeta | null;
    const delivery: Delivery = stored?.delivery.kind === 'interaction'
      ? { ...stored.delivery, createdAt: stored.delivery.createdAt ?? job.createdAt, channelId: job.channelId }
      : { kind: 'message', channelId: job.channelId, messageId: '' };
    return { lang: stored?.lang ?? 'ja', advancedVoice: stored?.advancedVoice ?? job.request.voice ?? 'Ruby', delivery };
  }

  // ------------------------------------------------------------------ helpers

  /** Refuses, before anything is answered or sent, a request the budget would refuse (nothing is held). */
  async #precheck(guildId: string, userId: string, endpoint: 'standard' | 'advanced', chars: number): Promise<void> {
    const result = await this.#budget.check([{ guildId, userId, endpoint, chars }]);
    if (!result.ok) throw new BudgetRefusedError(result.refusal, guildId);
  }

  async #enqueueForInteraction(interaction: ChatInputCommandInteraction, input: UtteranceInput, extra: Partial<UtteranceMeta>): Promise<void> {
    const lang = langOf(interaction.locale);
    // The scheduler refuses too, but only after the public defer; checked first so the refusal is ephemeral.
    if (!this.#scheduler.accepts(input)) throw new UserError('queue.member_full', { limit: this.#scheduler.maxPendingCharsPerMember });
    if (!interaction.deferred) await interaction.deferReply();
    const delivery: Delivery = {
      kind: 'interaction', applicationId: interaction.applicationId, token: interaction.token, createdAt: interaction.createdTimestamp, channelId: interaction.channelId,
    };
    const meta: UtteranceMeta = { delivery, lang, ...extra };
    const result = this.#scheduler.enqueue({ ...input, meta });
    if (!result.ok) {
      const content = result.reason === 'member_queue_full' ? t(lang, 'queue.member_full', { limit: result.limit ?? 0 }) : t(lang, 'queue.closed');
      await interaction.editReply({ content, allowedMentions: { parse: [] } });
      return;
    }
    this.#replies.set(result.id, { meta, chain: Promise.resolve() });
    if (input.kind === 'narrate' || result.position > 1) {
      this.#edit(result.id, { content: t(lang, input.kind === 'narrate' ? 'narrate.queued' : 'say.queued', { position: result.position }) });
    }
  }

  #onProgress(event: ProgressEvent): void {
    const lang = this.#replies.get(event.id)?.meta.lang;
    if (!lang || event.kind !== 'narrate') return;
    if (event.state === 'queued' && event.position) this.#edit(event.id, { content: t(lang, 'narrate.queued', { position: event.position }) });
    else if (event.state === 'synthesizing') {
      const key = event.detail === 'running' ? 'narrate.running' : 'narrate.pending';
      this.#edit(event.id, { content: t(lang, key) });
    }
  }

  /** Queues a progress edit of an interaction's reply; ignored once the final answer is out. */
  #edit(id: string, body: { content: string }): void {
    const reply = this.#replies.get(id);
    if (reply?.meta.delivery.kind !== 'interaction' || !this.#tokenAlive(reply.meta.delivery)) return;
    const webhook = this.#webhook(reply.meta.delivery);
    reply.chain = reply.chain
      .then(() => webhook.editMessage('@original', { ...body, allowedMentions: { parse: [] } }))
      .catch((error: unknown) => this.#logger.warn({ err: error }, 'could not update the reply'));
  }

  /**
   * The final edit of an interaction's reply (audio, "speaking", or the failure reason). Once the
   * 15-minute token is gone (a long /narrate, a restart), or Discord refuses it, the answer is
   * posted in the channel instead, naming the member (issue 9 §5: never only a log line).
   */
  async #finalEdit(item: Pick<Utterance, 'id' | 'userId' | 'channelId'>, meta: UtteranceMeta, body: { content: string; files?: { attachment: string | Buffer; name: string }[] }): Promise<void> {
    const delivery = meta.delivery;
    if (delivery.kind !== 'interaction') return;
    // After the edits already queued (so none overwrites this one); later progress finds no reply.
    const before = this.#replies.get(item.id)?.chain ?? Promise.resolve();
    this.#replies.delete(item.id);
    await before;
    if (this.#tokenAlive(delivery)) {
      const sent = await this.#webhook(delivery)
        .editMessage('@original', { ...body, allowedMentions: { parse: [] } })
        .then(() => true)
        .catch((error: unknown) => {
          this.#logger.warn({ err: error }, 'could not deliver the reply');
          // 401 invalid webhook token, 404 unknown webhook/message: the token is gone; post instead.
          return !(error instanceof DiscordAPIError && (error.status === 401 || error.status === 404));
        });
      if (sent) return;
    }
    const channelId = delivery.channelId ?? item.channelId;
    const channel = await this.#client.channels.fetch(channelId).catch(() => null);
    if (!channel?.isSendable()) {
      this.#logger.warn({ channelId }, 'could not deliver a late reply: the channel is gone');
      return;
    }
    await channel
      .send({ ...body, content: `<@${item.userId}> ${body.content}`, allowedMentions: { parse: [] } })
      .catch((error: unknown) => this.#logger.warn({ err: error, channelId }, 'could not post a late reply'));
  }

  /** Whether the interaction's token can still edit its reply (Discord: 15 minutes; we stop at 14). */
  #tokenAlive(delivery: Extract<Delivery, { kind: 'interaction' }>): boolean {
    return delivery.createdAt === undefined || this.#now() - delivery.createdAt < TOKEN_MAX_AGE_MS;
  }

  #webhook(delivery: Extract<Delivery, { kind: 'interaction' }>): InteractionWebhook {
    return new InteractionWebhook(this.#client as Client<true>, delivery.applicationId, delivery.token);
  }

  /** A slash command's text may hold raw mentions and emoji markup too; read it like a message. */
  #normaliseCommandText(interaction: ChatInputCommandInteraction, guildId: string, text: string, lang: Lang, maxLength: number): string | null {
    const guild = interaction.guild;
    const users: Record<string, string> = {};
    const roles: Record<string, string> = {};
    const channels: Record<string, string> = {};
    for (const [, id] of text.matchAll(/<@!?(\d+)>/g)) {
      const member = guild?.members.cache.get(id!);
      const user = member?.user ?? this.#client.users.cache.get(id!);
      if (user) users[id!] = member?.displayName ?? user.displayName;
    }
    for (const [, id] of text.matchAll(/<@&(\d+)>/g)) {
      const role = guild?.roles.cache.get(id!);
      if (role) roles[id!] = role.name;
    }
    for (const [, id] of text.matchAll(/<#(\d+)>/g)) {
      const channel = guild?.channels.cache.get(id!);
      if (channel) channels[id!] = channel.name;
    }
    return normaliseMessage(
      { content: text, authorId: interaction.user.id, authorName: interaction.user.displayName, users, roles, channels, attachments: [], stickers: [] },
      { lang, maxLength, dictionary: this.#repos.dictionary.list(guildId) },
    );
  }

  #plainMessage(message: Message<true>): PlainMessage {
    const users: Record<string, string> = {};
    for (const user of message.mentions.users.values()) users[user.id] = message.mentions.members?.get(user.id)?.displayName ?? user.displayName;
    const roles: Record<string, string> = {};
    for (const role of message.mentions.roles.values()) roles[role.id] = role.name;
    const channels: Record<string, string> = {};
    for (const channel of message.mentions.channels.values()) if ('name' in channel && channel.name) channels[channel.id] = channel.name;
    for (const [, id] of message.content.matchAll(/<#(\d+)>/g)) {
      const channel = message.guild.channels.cache.get(id!);
      if (channel) channels[id!] = channel.name;
    }
    return {
      content: message.content,
      authorId: message.author.id,
      authorName: message.member?.displayName ?? message.author.displayName,
      users,
      roles,
      channels,
      attachments: [...message.attachments.values()].map((a) => ({ name: a.name, contentType: a.contentType })),
      stickers: [...message.stickers.values()].map((s) => ({ name: s.name })),
    };
  }
}
