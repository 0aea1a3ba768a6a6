import {
  ChannelType,
  InteractionWebhook,
  type ChatInputCommandInteraction,
  type Client,
  type Message,
  type VoiceState,
} from 'discord.js';
import { UserError } from './command.ts';
import { langOf, t, type Lang } from './i18n.ts';
import { describeFailure } from './outcomes.ts';
import { effectiveVoice, type Repositories, type StoredJob } from '../db/repositories.ts';
import type { CharacterBudget } from '../speech/budget.ts';
import { BudgetRefusedError } from '../speech/synthesize.ts';
import type { NameReader } from '../speech/names.ts';
import { joinAnnouncement } from '../speech/names.ts';
import type { ProgressEvent, ReadyUtterance, SpeechScheduler, UtteranceInput } from '../speech/queue.ts';
import { normaliseMessage, type PlainMessage } from '../speech/text.ts';
import { countChars } from '../tts/chars.ts';
import { validateAdvanced, validateStandard, type AdvancedVoice } from '../tts/validation.ts';
import { isKnownCode, TtsError, TtsInputError } from '../tts/errors.ts';
import type { MediaSupport } from '../util/ffmpeg.ts';
import type { Logger } from '../util/log.ts';
import type { VoiceManager } from '../voice/manager.ts';

/** Where a finished utterance goes when it is not (only) played: plain data, so it survives a restart. */
export type Delivery =
  | { kind: 'interaction'; applicationId: string; token: string }
  | { kind: 'message'; channelId: string; messageId: string };

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
  /** Interaction replies not yet given their final answer, by utterance id. */
  readonly #replies = new Map<string, Reply>();

  constructor(options: {
    client: Client;
    scheduler: SpeechScheduler;
    budget: CharacterBudget;
    repos: Repositories;
    voice: VoiceManager;
    names: NameReader;
    logger: Logger;
    plan: 'free' | 'paid';
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
    this.#scheduler.setDefaultSink((ready, signal) => this.deliver(ready, signal));
    this.#scheduler.on('progress', (event) => this.#onProgress(event));
    this.#scheduler.on('dropped', ({ guildId, items }) =>
      this.#logger.warn({ guildId, count: items.length }, 'auto-read messages dropped: the queue was too far behind'),
    );
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
    if (!checked.ok) throw new TtsInputError(checked.issues);
    await this.#precheck(args.guildId, userId, 'standard', countChars(text));
    await this.#enqueueForInteraction(interaction, {
      guildId: args.guildId, userId, channelId: interaction.channelId, kind: 'say', text, lang: args.lang, voice, speed, pitch,
    }, { forceAttach: args.forceAttach ?? false });
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
    if (!checked.ok) throw new TtsInputError(checked.issues);
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

  clear(guildId: string): number {
    return this.#scheduler.clear(guildId);
  }

  droppedCount(guildId: string): number {
    return this.#scheduler.stats(guildId).dropped;
  }

  // ------------------------------------------------------------------ auto-read

  /** messageCreate: reads a message aloud when it is in an auto-read, bound or voice text channel. */
  autoRead(message: Message): void {
    if (!message.inGuild() || message.author.bot || message.webhookId || message.system) return;
    const guildId = message.guildId;
    const channelId = message.channelId;
    const inScope =
      this.#voice.boundTextChannel(guildId) === channelId ||
      this.#voice.voiceChannel(guildId) === channelId || // the voice channel's own text chat
      this.#repos.autoRead.isAutoRead(guildId, channelId);
    if (!inScope) return;
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
      void message.reply({ content, allowedMentions: { parse: [], repliedUser: false } }).catch((error: unknown) => this.#logger.warn({ err: error, guildId }, 'could not tell the author'));
    }
  }

  /** voiceStateUpdate: join/leave announcements, auto-join, and leaving when no human is left. */
  async onVoiceState(oldState: VoiceState, newState: VoiceState): Promise<void> {
    const guild = newState.guild;
    const me = this.#client.user?.id;
    if (newState.id === me) {
      // Our own state: if someone disconnected the bot, forget the session at once.
      if (oldState.channelId && !newState.channelId) this.#voice.leave(guild.id);
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
    if (settings.announceJoinLeave && (newState.channelId === connected || oldState.channelId === connected)) {
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
    if (oldState.channelId === connected) {
      const channel = guild.channels.cache.get(connected);
      const humans = channel && 'members' in channel && channel.type !== ChannelType.GuildCategory
        ? [...(channel.members as Map<string, { user: { bot: boolean } }>).values()].filter((m) => !m.user.bot).length
        : 0;
      if (humans === 0) {
        this.#logger.info({ guildId: guild.id }, 'no human left in the voice channel; leaving');
        this.#voice.leave(guild.id);
        this.#scheduler.clear(guild.id);
      }
    }
  }

  // ------------------------------------------------------------------ delivery

  /**
   * The scheduler's sink: plays in voice when connected, otherwise attaches the MP3; a failure is
   * told to whoever asked. Settles once per utterance; the scheduler advances after it.
   */
  async deliver(ready: ReadyUtterance, signal: AbortSignal): Promise<void> {
    const metas = ready.items.map((item) => item.meta as UtteranceMeta);
    if (ready.error) {
      for (const [i, meta] of metas.entries()) await this.#tellFailure(meta, ready.items[i]!.id, ready.error);
      return;
    }
    const audio = ready.audio;
    // Paid audio that cannot be played here (no ffmpeg for an uncached MP3) is attached instead.
    const connected = this.#voice.isConnected(ready.guildId) && (audio.oggPath !== undefined || this.#media.playMp3);
    const toAttach = metas.filter((m) => !connected || m.forceAttach);
    const played = connected && metas.some((m) => !m.forceAttach);
    // Attach first (in parallel with playback) so a long voice line does not delay the reply.
    // Messages merged into one request get one attachment, as a reply to the last of them.
    const lastMessage = metas.findLast((m) => m.delivery.kind === 'message' && toAttach.includes(m));
    const attaching = Promise.all(
      metas.map((meta, i) => {
        const id = ready.items[i]!.id;
        if (meta.delivery.kind === 'message' && meta !== lastMessage) return undefined;
        if (toAttach.includes(meta)) return this.#attach(meta, id, audio.mp3Path ?? audio.mp3!, audio.seed);
        if (meta.delivery.kind === 'interaction') return this.#finalEdit(id, meta, { content: t(meta.lang, 'say.playing') });
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

  async #attach(meta: UtteranceMeta, id: string, mp3: string | Buffer, seed: number | undefined): Promise<void> {
    const file = { attachment: mp3, name: 'speech.mp3' };
    if (meta.delivery.kind === 'interaction') {
      const content = meta.advancedVoice
        ? t(meta.lang, 'narrate.done', { voice: meta.advancedVoice, seed: seed ?? '—' })
        : t(meta.lang, 'say.attached');
      await this.#finalEdit(id, meta, { content, files: [file] });
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

  async #tellFailure(meta: UtteranceMeta, id: string, error: Error): Promise<void> {
    const known = describeFailure(meta.lang, error);
    if (!known) this.#logger.error({ err: error }, 'speech failed');
    const content = known ?? t(meta.lang, 'error.generic');
    if (meta.delivery.kind === 'interaction') {
      const prefix = meta.advancedVoice ? t(meta.lang, 'narrate.failed', { reason: content }) : content;
      await this.#finalEdit(id, meta, { content: prefix });
      return;
    }
    const channel = await this.#client.channels.fetch(meta.delivery.channelId).catch(() => null);
    if (!channel?.isSendable()) return;
    await channel
      .send({ content, allowedMentions: { parse: [], repliedUser: false }, ...(meta.delivery.messageId ? { reply: { messageReference: meta.delivery.messageId, failIfNotExists: false } } : {}) })
      .catch((e: unknown) => this.#logger.warn({ err: e }, 'could not tell the author about a failure'));
  }

  /** An advanced job finished after a restart: its audio goes where the request asked for it. */
  async deliverRecoveredJob(job: StoredJob, result: { mp3: Buffer; seed?: number }): Promise<void> {
    const meta = this.#recoveredMeta(job);
    await this.#attach(meta, job.jobId, result.mp3, result.seed ?? job.seed ?? undefined);
  }

  /** An advanced job that a restart could not finish: its author is told why. */
  async tellRecoveredJobFailure(job: StoredJob, error: { code: string; message: string }): Promise<void> {
    const meta = this.#recoveredMeta(job);
    await this.#tellFailure(meta, job.jobId, new TtsError(isKnownCode(error.code) ? error.code : 'unknown', error.message, { serviceCode: error.code }));
  }

  /**
   * The stored delivery of a job; an interaction token lives 15 minutes, so an older job is posted
   * in its channel instead.
   */
  #recoveredMeta(job: StoredJob): UtteranceMeta {
    const stored = job.delivery as UtteranceMeta | null;
    const fresh = stored?.delivery.kind === 'interaction' && this.#now() - job.createdAt < 14 * 60_000;
    return {
      lang: stored?.lang ?? 'ja',
      advancedVoice: stored?.advancedVoice ?? job.request.voice ?? 'Ruby',
      delivery: fresh ? stored!.delivery : { kind: 'message', channelId: job.channelId, messageId: '' },
    };
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
    const limit = this.#scheduler.maxPendingPerMember;
    const pendingForMember = this.#scheduler.pending(input.guildId).filter((p) => p.userId === input.userId).length;
    if (pendingForMember >= limit) throw new UserError('queue.member_full', { limit });
    await interaction.deferReply();
    const meta: UtteranceMeta = { delivery: { kind: 'interaction', applicationId: interaction.applicationId, token: interaction.token }, lang, ...extra };
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
    if (reply?.meta.delivery.kind !== 'interaction') return;
    const webhook = this.#webhook(reply.meta.delivery);
    reply.chain = reply.chain
      .then(() => webhook.editMessage('@original', { ...body, allowedMentions: { parse: [] } }))
      .catch((error: unknown) => this.#logger.warn({ err: error }, 'could not update the reply'));
  }

  /** The final edit of an interaction's reply (audio, "speaking", or the failure reason). */
  async #finalEdit(id: string, meta: UtteranceMeta, body: { content: string; files?: { attachment: string | Buffer; name: string }[] }): Promise<void> {
    if (meta.delivery.kind !== 'interaction') return;
    // After the edits already queued (so none overwrites this one); later progress finds no reply.
    const before = this.#replies.get(id)?.chain ?? Promise.resolve();
    this.#replies.delete(id);
    const webhook = this.#webhook(meta.delivery);
    await before
      .then(() => webhook.editMessage('@original', { ...body, allowedMentions: { parse: [] } }))
      .catch((error: unknown) => this.#logger.warn({ err: error }, 'could not deliver the reply'));
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
