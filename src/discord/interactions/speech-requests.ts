import type { ButtonInteraction, ChatInputCommandInteraction, Client } from 'discord.js';
import type { Repositories } from '../../db/repositories.ts';
import type { CharacterBudget } from '../../billing/budget.ts';
import type { SpeechScheduler } from '../../speech/queue/scheduler.ts';
import { type UtteranceInput, voiceChannelOf } from '../../speech/queue/utterance.ts';
import { FILTERED, normaliseFiltered } from '../../speech/text/text.ts';
import type { VoiceChecker } from '../../speech/synthesis/voice-check.ts';
import type { ButtonQuestions } from './buttons.ts';
import { UserError } from '../../i18n/errors.ts';
import { langOf, t, type Lang } from '../../i18n/texts.ts';
import { toPlainMessage } from '../audience/mentions.ts';
import { confirmVoice, isKnownVoice, precheckBudget } from '../../usecases/voices.ts';
import { speakingVoice } from '../../usecases/member-voice.ts';
import { peopleInCall } from '../audience/hearing.ts';
import { describeQueueRefusal } from '../delivery/outcomes.ts';
import type { DeliveryTarget, UtteranceMeta } from '../delivery/meta.ts';
import type { InteractionReplies } from '../delivery/replies.ts';

/** What SpeechRequests works with. */
interface RequestsDeps {
  client: Client;
  scheduler: SpeechScheduler;
  budget: CharacterBudget;
  repos: Repositories;
  voices: VoiceChecker;
  replies: InteractionReplies;
  plan: 'free' | 'paid';
  /** A request refused before it was queued (budget, member queue): counted by the metrics. */
  onRefused?: () => void;
  /** Asks before a long /narrate; without it every /narrate goes ahead at once. */
  buttons?: ButtonQuestions;
  /** Who a request asked in a channel is for (audience/audiences.ts `requestAudience`); without it, that text channel. */
  audience?: (guildId: string, channelId: string, userId: string) => string;
}

/**
 * The request pipeline /say and /narrate share (commands/say/say-request.ts,
 * commands/narrate/narrate-request.ts), and the voice confirmation /config and /voice use:
 * everything that can be checked is checked before Discord is answered (text, voice, the budget,
 * the member's queue), then the speech is queued with a reply that follows it (replies.ts) until
 * delivery gives the final answer.
 */
export class SpeechRequests {
  readonly #deps: RequestsDeps;

  constructor(deps: RequestsDeps) {
    this.#deps = deps;
  }

  /** The repositories, the plan and the optional confirmation buttons, for the use cases built on this pipeline. */
  get repos(): Repositories {
    return this.#deps.repos;
  }
  get plan(): 'free' | 'paid' {
    return this.#deps.plan;
  }
  get budget(): CharacterBudget {
    return this.#deps.budget;
  }
  get buttons(): ButtonQuestions | undefined {
    return this.#deps.buttons;
  }

  /** In the known list, or confirmed by the service earlier: usable without a request (src/usecases/voices.ts). */
  isKnownVoice(voice: string): boolean {
    return isKnownVoice(this.#deps, voice);
  }

  /** The voice known or confirmed by the service, else what to tell the member (src/usecases/voices.ts). */
  confirmVoice(voice: string, guildId: string, userId: string): Promise<void> {
    return confirmVoice(this.#deps, voice, guildId, userId);
  }

  /** The command's text as it will be spoken (mentions and emoji markup read like a message's, the filters and dictionary applied). */
  speakable(interaction: ChatInputCommandInteraction, args: { guildId: string; text: string; lang: Lang }, maxLength: number): string {
    const plain = toPlainMessage({
      content: args.text,
      author: { id: interaction.user.id, name: interaction.user.displayName },
      guild: interaction.guild,
      users: this.#deps.client.users,
      // Heard in the voice session that will play it (an extra account's too), or posted where it was asked for.
      audience: { voiceChannelId: this.#playedIn(args.guildId, interaction), postChannelId: interaction.channelId },
    });
    const text = normaliseFiltered(plain, {
      lang: args.lang,
      maxLength,
      dictionary: this.#deps.repos.dictionary.list(args.guildId, interaction.user.id),
      // The server's filters hold for what a member asks to be read as for their messages.
      filters: this.#deps.repos.filters.readable(args.guildId),
    });
    if (text === FILTERED) throw new UserError('filter.request_refused');
    if (!text) throw new UserError('tts.validation_error');
    return text;
  }

  /**
   * The asking member's voice, speed, pitch and volume for what they ask here now: without a voice
   * of their own, their share of the server's pool in the call that would hear it.
   */
  memberVoice(interaction: ChatInputCommandInteraction, guildId: string): ReturnType<typeof speakingVoice> {
    const voiceChannelId = this.#playedIn(guildId, interaction);
    const call = voiceChannelId !== null && interaction.guild ? peopleInCall(interaction.guild, voiceChannelId) : undefined;
    return speakingVoice(this.#deps, guildId, interaction.user.id, call);
  }

  /** The voice channel whose session would play what `interaction` asks for now (as `enqueue` queues it), or null. */
  #playedIn(guildId: string, interaction: ChatInputCommandInteraction): string | null {
    const audience = this.#deps.audience?.(guildId, interaction.channelId, interaction.user.id);
    return audience === undefined ? null : voiceChannelOf(audience);
  }

  /** Refuses, before anything is answered or sent, a request the budget would refuse (nothing is held). */
  precheck(guildId: string, userId: string, endpoint: 'standard' | 'advanced', chars: number): Promise<void> {
    return precheckBudget(this.#deps, guildId, userId, endpoint, chars);
  }

  checkMemberQueue(input: UtteranceInput): void {
    if (!this.#deps.scheduler.accepts(input)) {
      this.#deps.onRefused?.();
      throw new UserError('queue.member_full', { vars: { limit: this.#deps.scheduler.maxPendingCharsPerMember } });
    }
  }

  /** Queues with a reply that follows it: the command's own, or a Confirm click's (a long /narrate). */
  async enqueue(
    interaction: ChatInputCommandInteraction | ButtonInteraction,
    input: UtteranceInput,
    extra: Partial<UtteranceMeta>,
  ): Promise<void> {
    const lang = langOf(interaction.locale);
    // The scheduler refuses too, but only after the public defer; checked first so the refusal is ephemeral.
    this.checkMemberQueue(input);
    if (!interaction.deferred) await interaction.deferReply();
    const delivery: DeliveryTarget = {
      kind: 'interaction',
      applicationId: interaction.applicationId,
      token: interaction.token,
      createdAt: interaction.createdTimestamp,
      channelId: interaction.channelId,
    };
    const meta: UtteranceMeta = { delivery, lang, ...extra };
    // For whoever it is for now (the voice session, or the channel it was asked in): queued behind what they hear.
    // An audience the use case chose itself (a voice preview: where its member listens) stands.
    const audience = input.audience ?? this.#deps.audience?.(input.guildId, input.channelId, input.userId);
    const result = this.#deps.scheduler.enqueue({ ...input, ...(audience === undefined ? {} : { audience }), meta });
    if (!result.ok) {
      this.#deps.onRefused?.();
      const content = describeQueueRefusal(lang, result);
      await interaction.editReply({ content, allowedMentions: { parse: [] } });
      return;
    }
    this.#deps.replies.open(result.id, meta);
    if (input.kind === 'narrate' || result.position > 1) {
      this.#deps.replies.edit(result.id, {
        content: t(lang, input.kind === 'narrate' ? 'narrate.queued' : 'say.queued', { position: result.position }),
      });
    }
  }
}
