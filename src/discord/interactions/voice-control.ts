import { ChannelType, PermissionFlagsBits, type ChatInputCommandInteraction, type Client, type Guild } from 'discord.js';
import type { NameReader } from '../../speech/names.ts';
import { voiceAudience, type SpeechScheduler } from '../../speech/queue.ts';
import type { Logger } from '../../util/log.ts';
import type { VoiceManager } from '../../voice/manager.ts';
import { UserError } from '../errors.ts';
import { requirePlaybackControl } from './guards.ts';
import { t, type Lang } from '../i18n.ts';
import type { ClearReason } from '../delivery/meta.ts';
import type { VoiceChannelStatus } from './voice-status.ts';

/** What VoiceControl works with. */
export interface VoiceControlDeps {
  client: Client;
  voice: VoiceManager;
  scheduler: SpeechScheduler;
  names: NameReader;
  logger: Logger;
  /** The voice channel status shown while reading (voice-status.ts); none in tests that do not need it. */
  status?: VoiceChannelStatus;
}

/**
 * The /join, /leave, /skip and /clear use cases, and the automatic leave (who may use them: guards.ts). Whatever drops queued
 * speech goes through `clear` or `clearGuild`, so every /say and /narrate waiting is told why (delivery listens
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
    const stage = channel.type === ChannelType.GuildStageVoice;
    const before = this.#deps.voice.voiceChannel(guild.id);
    // The status of the channel left behind is cleared while the bot is still in it.
    if (before && before !== target) await this.#deps.status?.clear(guild.id, before);
    try {
      await this.#deps.voice.join({
        guildId: guild.id,
        channelId: target,
        textChannelId: interaction.channelId,
        adapterCreator: guild.voiceAdapterCreator,
        stage,
      });
    } catch (error) {
      this.#deps.logger.warn({ err: error, guildId: guild.id, channelId: target }, 'voice join failed');
      throw new UserError('voice.join_failed', { cause: error });
    }
    const waiting = stage && !(await this.#takeTheStage(guild, target));
    const joined = t(lang, 'voice.joined', { voice: `<#${target}>`, text: `<#${interaction.channelId}>` });
    await interaction.editReply({
      content: waiting ? `${joined}\n${t(lang, 'voice.stage_waiting')}` : joined,
      allowedMentions: { parse: [] },
    });
    if (!stage) await this.#deps.status?.show(guild.id, target, interaction.channelId);
  }

  /**
   * In a stage the bot is heard only as a speaker: it becomes one where it may (Mute Members there),
   * else it asks to speak and waits for a stage moderator. True once it is a speaker.
   * https://discord.com/developers/docs/resources/voice#modify-current-user-voice-state
   */
  async #takeTheStage(guild: Guild, channelId: string): Promise<boolean> {
    const me = guild.members.me ?? (await guild.members.fetchMe());
    if (!this.#deps.voice.isSuppressed(guild.id)) return true;
    const mayUnsuppress = guild.channels.cache.get(channelId)?.permissionsFor(me)?.has(PermissionFlagsBits.MuteMembers) ?? false;
    try {
      if (mayUnsuppress) {
        await me.voice.setSuppressed(false);
        // Heard from now on; the voice state that follows says the same.
        this.#deps.voice.setSuppressed(guild.id, false);
        return true;
      }
      if (!me.voice.requestToSpeakTimestamp) await me.voice.setRequestToSpeak(true);
    } catch (error) {
      this.#deps.logger.warn({ err: error, guildId: guild.id, channelId }, 'could not become a speaker on the stage');
    }
    return false;
  }

  /** /skip: stops what the guild's voice session hears now (without one: whatever the guild is delivered); false when nothing is. */
  skip(guildId: string): boolean {
    const session = this.#session(guildId);
    if (session) return this.#deps.scheduler.skip(session);
    let skipped = false;
    for (const { audience } of this.#deps.scheduler.stats().filter((s) => s.guildId === guildId))
      skipped = this.#deps.scheduler.skip(audience) || skipped;
    return skipped;
  }

  /**
   * /clear: drops what waits for the guild's voice session (without one: everything queued in the
   * guild); each /say or /narrate waiting is told why; the next message is named.
   */
  clear(guildId: string, reason: ClearReason = 'clear'): number {
    this.#deps.names.forget(guildId);
    const session = this.#session(guildId);
    return session ? this.#deps.scheduler.clear(session, reason) : this.#deps.scheduler.clearGuild(guildId, reason);
  }

  /** Drops everything queued in the guild, every audience (leaving, disconnected, a stage's audience); the next message is named. */
  clearGuild(guildId: string, reason: ClearReason): number {
    this.#deps.names.forget(guildId);
    return this.#deps.scheduler.clearGuild(guildId, reason);
  }

  /** The audience of the guild's voice session, if it has one. */
  #session(guildId: string): string | null {
    const channelId = this.#deps.voice.voiceChannel(guildId);
    return channelId ? voiceAudience(channelId) : null;
  }

  /** /leave: leaves voice for good (not rejoined after a restart) and drops what was queued. */
  async leave(guildId: string): Promise<boolean> {
    await this.#clearStatus(guildId);
    if (!this.#deps.voice.leave(guildId)) return false;
    this.clearGuild(guildId, 'leave');
    return true;
  }

  /** Nobody is left to hear the bot: it leaves, as with /leave. */
  async autoLeave(guildId: string): Promise<void> {
    this.#deps.logger.info({ guildId }, 'no human left in the voice channel; leaving');
    await this.#clearStatus(guildId);
    this.#deps.voice.leave(guildId);
    this.clearGuild(guildId, 'auto_leave');
  }

  // Before leaving: Discord lets a bot that is no longer in the channel clear its status only with Manage Channels.
  async #clearStatus(guildId: string): Promise<void> {
    const channelId = this.#deps.voice.voiceChannel(guildId);
    if (channelId) await this.#deps.status?.clear(guildId, channelId);
  }
}
