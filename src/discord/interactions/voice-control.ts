import type { ChatInputCommandInteraction, Client } from 'discord.js';
import type { NameReader } from '../../speech/names.ts';
import type { SpeechScheduler } from '../../speech/queue.ts';
import type { Logger } from '../../util/log.ts';
import type { VoiceManager } from '../../voice/manager.ts';
import { UserError } from '../errors.ts';
import { requirePlaybackControl } from './guards.ts';
import { t, type Lang } from '../i18n.ts';
import type { ClearReason } from '../delivery/meta.ts';

/** What VoiceControl works with. */
export interface VoiceControlDeps {
  client: Client;
  voice: VoiceManager;
  scheduler: SpeechScheduler;
  names: NameReader;
  logger: Logger;
}

/**
 * The /join, /leave, /skip and /clear use cases, and the automatic leave (who may use them: guards.ts). Whatever drops queued
 * speech goes through `clear`, so every /say and /narrate waiting is told why (delivery listens
 * to the scheduler's 'cleared'), and the reader starts afresh: the next message is named again,
 * as members expect after the bot left and rejoined.
 */
export class VoiceControl {
  readonly #deps: VoiceControlDeps;

  constructor(deps: VoiceControlDeps) {
    this.#deps = deps;
  }

  /**
   * /join: the member's (or the given) voice channel; this text channel is read until /leave.
   * Refused, changing nothing, when the playback rule says no (guards.ts `requirePlaybackControl`).
   */
  async join(interaction: ChatInputCommandInteraction, channelId: string | null, lang: Lang): Promise<void> {
    const guild = interaction.guild ?? (interaction.guildId ? await this.#deps.client.guilds.fetch(interaction.guildId) : null);
    if (!guild) throw new UserError('error.guild_only');
    const member = guild.members.cache.get(interaction.user.id) ?? (await guild.members.fetch(interaction.user.id));
    const target = channelId ?? member.voice.channelId ?? null;
    if (!target) throw new UserError('voice.join_first');
    const channel = guild.channels.cache.get(target) ?? (await guild.channels.fetch(target).catch(() => null));
    if (!channel?.isVoiceBased()) throw new UserError('voice.join_failed');
    const me = guild.members.me ?? (await guild.members.fetchMe());
    requirePlaybackControl(interaction, this.#deps.voice.voiceChannel(guild.id), { channel, member, me });
    await interaction.deferReply();
    try {
      await this.#deps.voice.join({
        guildId: guild.id,
        channelId: target,
        textChannelId: interaction.channelId,
        adapterCreator: guild.voiceAdapterCreator,
      });
    } catch (error) {
      this.#deps.logger.warn({ err: error, guildId: guild.id, channelId: target }, 'voice join failed');
      throw new UserError('voice.join_failed', { cause: error });
    }
    await interaction.editReply({
      content: t(lang, 'voice.joined', { voice: `<#${target}>`, text: `<#${interaction.channelId}>` }),
      allowedMentions: { parse: [] },
    });
  }

  /** /skip: stops what is being delivered now; false when nothing is. */
  skip(guildId: string): boolean {
    return this.#deps.scheduler.skip(guildId);
  }

  /** Drops everything queued in the guild (each /say or /narrate waiting is told why); the next message is named. */
  clear(guildId: string, reason: ClearReason = 'clear'): number {
    this.#deps.names.forget(guildId);
    return this.#deps.scheduler.clear(guildId, reason);
  }

  /** /leave: leaves voice for good (not rejoined after a restart) and drops what was queued. */
  leave(guildId: string): boolean {
    if (!this.#deps.voice.leave(guildId)) return false;
    this.clear(guildId, 'leave');
    return true;
  }

  /** Nobody is left to hear the bot: it leaves, as with /leave. */
  autoLeave(guildId: string): void {
    this.#deps.logger.info({ guildId }, 'no human left in the voice channel; leaving');
    this.#deps.voice.leave(guildId);
    this.clear(guildId, 'auto_leave');
  }
}
