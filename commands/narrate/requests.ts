import type { ButtonInteraction, ChatInputCommandInteraction, Client } from 'discord.js';
import { effectiveVoice, type Repositories } from '../../src/db/repositories.ts';
import type { CharacterBudget } from '../../src/speech/budget.ts';
import { textAudience, type SpeechScheduler, type UtteranceInput } from '../../src/speech/queue.ts';
import { BudgetRefusedError, SpeechError } from '../../src/speech/errors.ts';
import { normaliseMessage } from '../../src/speech/text.ts';
import type { VoiceChecker } from '../../src/speech/voice-check.ts';
import { countChars } from '../../src/tts/chars.ts';
import { TtsInputError } from '../../src/tts/errors.ts';
import { validateAdvanced, validateStandard, type AdvancedVoice } from '../../src/tts/validation.ts';
import type { ButtonQuestions } from '../../src/discord/buttons.ts';
import { UserError } from '../../src/discord/errors.ts';
import { langOf, t, type Lang } from '../../src/discord/i18n.ts';
import { toPlainMessage } from '../../src/discord/mentions.ts';
import { askNarrateCost } from './narrate-confirm.ts';
import { describeQueueRefusal } from '../../src/discord/outcomes.ts';
import type { DeliveryTarget, UtteranceMeta } from '../../src/discord/meta.ts';
import type { InteractionReplies } from '../../src/discord/replies.ts';

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
/** Longest /narrate text (the service's advanced limit). */
const NARRATE_MAX_CHARS = 3000;
const DEFAULT_ADVANCED_VOICE = 'Ruby';

/** What SpeechRequests works with. */
export interface RequestsDeps {
  client: Client;
  scheduler: SpeechScheduler;
  budget: CharacterBudget;
  repos: Repositories;
  voices: VoiceChecker;
  replies: InteractionReplies;
  plan: 'free' | 'paid';
  /** A request refused before it was queued (budget, member queue): counted by the metrics. */
  onRefused?: () => void;
  /** Asks before a long /narrate (issue 13); without it every /narrate goes ahead at once. */
  buttons?: ButtonQuestions;
}

/**
 * The /say and /narrate use cases: everything that can be checked is checked before Discord is
 * answered (text, voice, the budget, the member's queue), then the speech is queued with a reply
 * that follows it (src/discord/replies.ts) until delivery gives the final answer.
 */
export class SpeechRequests {
  readonly #deps: RequestsDeps;

  constructor(deps: RequestsDeps) {
    this.#deps = deps;
  }

  /** /say: checks everything that can be checked before answering, then queues the speech. */
  async say(interaction: ChatInputCommandInteraction, args: SayArgs): Promise<void> {
    const userId = interaction.user.id;
    const settings = effectiveVoice(this.#deps.repos.guildSettings.get(args.guildId), this.#deps.repos.userSettings.get(args.guildId, userId));
    const voice = args.voice?.trim() || settings.voice;
    const speed = args.speed ?? settings.speed;
    const pitch = args.pitch ?? settings.pitch;
    const text = this.#speakable(interaction, args, SAY_MAX_CHARS);
    const checked = validateStandard({ voice, text, speed, pitch });
    if (!checked.ok) throw new TtsInputError({ issues: checked.issues });
    await this.#precheck(args.guildId, userId, 'standard', countChars(text));
    const input: UtteranceInput = {
      guildId: args.guildId, userId, channelId: interaction.channelId, kind: 'say', text, lang: args.lang, voice, speed, pitch,
      audience: textAudience(interaction.channelId),
    };
    this.#checkMemberQueue(input);
    if (!this.#deps.voices.isKnown(voice)) {
      // The confirming request may wait for the rate budget: answer Discord first.
      await interaction.deferReply();
      await this.confirmVoice(voice, args.guildId, userId);
    }
    await this.#enqueue(interaction, input, { forceAttach: args.forceAttach ?? false });
  }

  /** /narrate: advanced job; progress is shown by editing the deferred reply. */
  async narrate(interaction: ChatInputCommandInteraction, args: NarrateArgs): Promise<void> {
    const userId = interaction.user.id;
    const text = this.#speakable(interaction, args, NARRATE_MAX_CHARS);
    const advanced = {
      voice: (args.voice ?? DEFAULT_ADVANCED_VOICE) as AdvancedVoice,
      ...(args.tone ? { tone: args.tone } : {}),
      ...(args.model ? { model: args.model } : {}),
      ...(args.seed !== undefined ? { seed: args.seed } : {}),
      ...(args.speed !== undefined ? { speed: args.speed } : {}),
      ...(args.pitch !== undefined ? { pitch: args.pitch } : {}),
    };
    const checked = validateAdvanced({ text, ...advanced }, this.#deps.plan);
    if (!checked.ok) throw new TtsInputError({ issues: checked.issues });
    const chars = countChars(text);
    await this.#precheck(args.guildId, userId, 'advanced', chars);
    const input: UtteranceInput = {
      guildId: args.guildId, userId, channelId: interaction.channelId, kind: 'narrate', text, lang: args.lang,
      voice: advanced.voice, speed: advanced.speed ?? 1, pitch: advanced.pitch ?? 0, advanced, audience: textAudience(interaction.channelId),
    };
    const buttons = this.#deps.buttons;
    if (buttons && chars > this.#deps.repos.controls.get(args.guildId).narrateConfirmChars) {
      // Shown before it is spent: nothing held or sent until the member confirms.
      this.#checkMemberQueue(input);
      await askNarrateCost({ budget: this.#deps.budget, buttons }, interaction, { guildId: args.guildId, userId, chars, lang: args.lang }, {
        recheck: () => this.#precheck(args.guildId, userId, 'advanced', chars),
        proceed: (click) => this.#enqueue(click, input, { advancedVoice: advanced.voice }),
      });
      return;
    }
    await this.#enqueue(interaction, input, { advancedVoice: advanced.voice });
  }

  /** In the known list, or confirmed by the service earlier: usable without a request. */
  isKnownVoice(voice: string): boolean {
    return this.#deps.voices.isKnown(voice);
  }

  /**
   * A standard voice may be saved or used only when it is known or the service confirmed it (one
   * short request, charged like any other: src/speech/voice-check.ts). Otherwise throws what to
   * tell the member; nothing is saved.
   */
  async confirmVoice(voice: string, guildId: string, userId: string): Promise<void> {
    try {
      await this.#deps.voices.confirm(voice, { guildId, userId });
    } catch (error) {
      if (error instanceof BudgetRefusedError) throw error;
      const code = (error as { code?: string }).code;
      if (code === 'unsupported_voice' || code === 'invalid_voice' || code === 'voice_required' || code === 'invalid_input') throw new UserError('tts.unsupported_voice', { vars: { voice }, cause: error });
      if (error instanceof SpeechError || code === 'rate_limited' || code === 'aborted') throw new UserError('voice.check_busy', { vars: { voice }, cause: error });
      throw error;
    }
  }

  /** The command's text as it will be spoken (mentions and emoji markup read like a message's, the dictionary applied). */
  #speakable(interaction: ChatInputCommandInteraction, args: { guildId: string; text: string; lang: Lang }, maxLength: number): string {
    const plain = toPlainMessage({
      content: args.text,
      author: { id: interaction.user.id, name: interaction.user.displayName },
      guild: interaction.guild,
      users: this.#deps.client.users,
      // Played in the bot's voice channel, or posted where it was asked for.
      audience: { voiceChannelId: interaction.guild?.members.me?.voice.channelId ?? null, postChannelId: interaction.channelId },
    });
    const text = normaliseMessage(plain, { lang: args.lang, maxLength, dictionary: this.#deps.repos.dictionary.list(args.guildId) });
    if (!text) throw new UserError('tts.validation_error');
    return text;
  }

  /** Refuses, before anything is answered or sent, a request the budget would refuse (nothing is held). */
  async #precheck(guildId: string, userId: string, endpoint: 'standard' | 'advanced', chars: number): Promise<void> {
    const result = await this.#deps.budget.check([{ guildId, userId, endpoint, chars }]);
    if (!result.ok) {
      this.#deps.onRefused?.();
      throw new BudgetRefusedError({ refusal: result.refusal, guildId });
    }
  }

  #checkMemberQueue(input: UtteranceInput): void {
    if (!this.#deps.scheduler.accepts(input)) {
      this.#deps.onRefused?.();
      throw new UserError('queue.member_full', { vars: { limit: this.#deps.scheduler.maxPendingCharsPerMember } });
    }
  }

  /** Queues with a reply that follows it: the command's own, or a Confirm click's (a long /narrate). */
  async #enqueue(interaction: ChatInputCommandInteraction | ButtonInteraction, input: UtteranceInput, extra: Partial<UtteranceMeta>): Promise<void> {
    const lang = langOf(interaction.locale);
    // The scheduler refuses too, but only after the public defer; checked first so the refusal is ephemeral.
    this.#checkMemberQueue(input);
    if (!interaction.deferred) await interaction.deferReply();
    const delivery: DeliveryTarget = {
      kind: 'interaction', applicationId: interaction.applicationId, token: interaction.token, createdAt: interaction.createdTimestamp, channelId: interaction.channelId,
    };
    const meta: UtteranceMeta = { delivery, lang, ...extra };
    const result = this.#deps.scheduler.enqueue({ ...input, meta });
    if (!result.ok) {
      this.#deps.onRefused?.();
      const content = describeQueueRefusal(lang, result);
      await interaction.editReply({ content, allowedMentions: { parse: [] } });
      return;
    }
    this.#deps.replies.open(result.id, meta);
    if (input.kind === 'narrate' || result.position > 1) {
      this.#deps.replies.edit(result.id, { content: t(lang, input.kind === 'narrate' ? 'narrate.queued' : 'say.queued', { position: result.position }) });
    }
  }
}
