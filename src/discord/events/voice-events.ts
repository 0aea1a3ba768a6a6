import { ChannelType, type Client, type VoiceState } from 'discord.js';
import type { Repositories } from '../../db/repositories.ts';
import { joinAnnouncement } from '../../speech/names.ts';
import type { SpeechScheduler } from '../../speech/queue.ts';
import type { Logger } from '../../util/log.ts';
import type { EndedSession, VoiceManager } from '../../voice/manager.ts';
import { whoCanHear } from './hearing.ts';
import { guildLang, t } from '../i18n.ts';
import { queueBotClip } from './bot-clips.ts';
import type { Notices } from '../delivery/notices.ts';
import type { VoiceControl } from '../interactions/voice-control.ts';
import type { VoiceChannelStatus } from '../interactions/voice-status.ts';

/** What VoiceStateEvents works with. */
export interface VoiceEventsDeps {
  client: Client;
  voice: VoiceManager;
  repos: Repositories;
  scheduler: SpeechScheduler;
  control: VoiceControl;
  notices: Notices;
  logger: Logger;
  status?: VoiceChannelStatus;
}

/**
 * voiceStateUpdate and the end of a voice session: the bot's own state (disconnected or moved by
 * someone), auto-join, join/leave announcements (never of a muted member or one with a never-read
 * role: the reading controls keep them unnamed), and leaving when no human is left.
 */
export class VoiceStateEvents {
  readonly #deps: VoiceEventsDeps;

  constructor(deps: VoiceEventsDeps) {
    this.#deps = deps;
  }

  /** voiceStateUpdate: join/leave announcements, auto-join, and leaving when no human is left. */
  async onVoiceState(oldState: VoiceState, newState: VoiceState): Promise<void> {
    const guild = newState.guild;
    const listeners = () => whoCanHear(guild, this.#deps.voice.voiceChannel(guild.id));
    if (newState.id === this.#deps.client.user?.id) {
      this.#onStage(newState);
      // Our own state: if someone disconnected the bot, end the session at once (and say so).
      if (oldState.channelId && !newState.channelId) this.#deps.voice.disconnected(guild.id, 'disconnected by someone');
      // Moved by someone: the read scope and the "no human left" check follow the bot.
      else if (newState.channelId && oldState.channelId !== newState.channelId && this.#deps.voice.moved(guild.id, newState.channelId)) {
        if (listeners() === 'nobody') void this.#deps.control.autoLeave(guild.id);
      }
      return;
    }
    if (newState.member?.user.bot) return;
    const settings = this.#deps.repos.guildSettings.get(guild.id);
    const connected = this.#deps.voice.voiceChannel(guild.id);
    if (
      !connected &&
      settings.autoJoinChannelId &&
      newState.channelId === settings.autoJoinChannelId &&
      oldState.channelId !== newState.channelId
    ) {
      await this.#deps.voice
        .join({
          guildId: guild.id,
          channelId: settings.autoJoinChannelId,
          textChannelId: settings.autoJoinChannelId,
          adapterCreator: guild.voiceAdapterCreator,
        })
        .then(() => this.#deps.status?.show(guild.id, settings.autoJoinChannelId!, settings.autoJoinChannelId))
        .catch((error: unknown) => this.#deps.logger.warn({ err: error, guildId: guild.id }, 'auto-join failed'));
      return;
    }
    if (!connected || oldState.channelId === newState.channelId) return;
    const lang = guildLang(settings.locale);
    const here = newState.channelId === connected || oldState.channelId === connected;
    if (settings.announceJoinLeave && here && listeners() === 'yes' && this.#announces(newState)) {
      const dictionary = this.#deps.repos.dictionary.list(guild.id, newState.id);
      const user = this.#deps.repos.userSettings.get(guild.id, newState.id);
      const name = user.nickname ?? newState.member?.displayName ?? '';
      const kind = newState.channelId === connected ? 'join' : 'leave';
      // The bot's own clip: charged to the server, not to the member who moved.
      queueBotClip(this.#deps, guild.id, joinAnnouncement(name, lang, kind, dictionary), { mergeable: true });
    }
    if (oldState.channelId === connected && listeners() === 'nobody') void this.#deps.control.autoLeave(guild.id);
  }

  /**
   * The bot's own stage state: heard only as a speaker (the manager stops reading while it is in
   * the audience). Moved back to the audience by a stage moderator: the bound channel is told why.
   */
  #onStage(state: VoiceState): void {
    const guildId = state.guild.id;
    const wasSuppressed = this.#deps.voice.isSuppressed(guildId);
    const suppressed = state.channel?.type === ChannelType.GuildStageVoice && state.suppress === true;
    this.#deps.voice.setSuppressed(guildId, suppressed);
    if (!suppressed || wasSuppressed || !this.#deps.voice.isSuppressed(guildId)) return;
    // Nobody hears what waits any more: it is not made (nor posted), and whoever asked is told.
    this.#deps.control.clearGuild(guildId, 'stage_audience');
    const textChannelId = this.#deps.voice.boundTextChannel(guildId);
    if (!textChannelId) return;
    const lang = guildLang(this.#deps.repos.guildSettings.get(guildId).locale);
    void this.#deps.notices.post(textChannelId, t(lang, 'voice.stage_audience', { voice: `<#${state.channelId}>` }));
  }

  /** Whether a member's join or leave is announced: not when the reading controls keep them unread (muted, a never-read role). */
  #announces(state: VoiceState): boolean {
    if (this.#deps.repos.userSettings.get(state.guild.id, state.id).muted) return false;
    // Who it is (roles, name) is unknown, e.g. a member who left the server: not announced.
    const roles = state.member?.roles.cache;
    if (!roles) return false;
    return !this.#deps.repos.readingLists.list(state.guild.id, 'never_role').some((id) => roles.has(id));
  }

  /** Kicked (4014), disconnected by someone, or unable to reconnect: reading stopped, said once. */
  onSessionEnded(ended: EndedSession): void {
    this.#deps.logger.info({ guildId: ended.guildId, reason: ended.reason }, 'voice session ended without /leave');
    this.#deps.control.clearGuild(ended.guildId, 'disconnected');
    void this.#deps.status?.clear(ended.guildId, ended.voiceChannelId);
    if (!ended.textChannelId) return;
    const lang = guildLang(this.#deps.repos.guildSettings.get(ended.guildId).locale);
    void this.#deps.notices.post(ended.textChannelId, t(lang, 'voice.disconnected'));
  }
}
