import { ChannelType, type Client, type Guild, type VoiceState } from 'discord.js';
import type { Repositories } from '../../db/repositories.ts';
import { announcementOf, speakableName, type AnnouncementAllowance } from '../../speech/text/names.ts';
import type { SpeechScheduler } from '../../speech/queue/scheduler.ts';
import type { Logger } from '../../util/log.ts';
import type { EndedSession, VoiceManager } from '../../voice/manager.ts';
import { whoCanHear } from '../audience/hearing.ts';
import type { BotAccounts } from '../voice-control/accounts.ts';
import { guildLang, t } from '../../i18n/texts.ts';
import { queueBotClip } from '../delivery/bot-clips.ts';
import type { Notices } from '../delivery/notices.ts';
import type { VoiceControl } from '../voice-control/voice-control.ts';
import type { VoiceChannelStatus } from '../voice-control/voice-status.ts';

/** What VoiceStateEvents works with. */
interface VoiceEventsDeps {
  client: Client;
  /** The bot's accounts: auto-join picks a free one (account-choice.ts). */
  accounts: BotAccounts;
  voice: VoiceManager;
  repos: Repositories;
  scheduler: SpeechScheduler;
  control: VoiceControl;
  notices: Notices;
  logger: Logger;
  status?: VoiceChannelStatus;
  /** How often one member is announced, and with how many names (src/speech/text/names.ts ANNOUNCEMENT_LIMITS). */
  announcements: AnnouncementAllowance;
}

/**
 * voiceStateUpdate and the end of a voice session: each account's own state (disconnected or moved
 * by someone), auto-join, join/leave announcements in the session of the channel a member joined
 * or left (never of a muted member or one with a never-read role: the reading controls keep them
 * unnamed), and leaving a channel where no human is left.
 */
export class VoiceStateEvents {
  readonly #deps: VoiceEventsDeps;

  constructor(deps: VoiceEventsDeps) {
    this.#deps = deps;
  }

  /**
   * One account's own voice state (`accountId` is that account): if someone disconnected it, its
   * session ends at once (and says so); moved by someone, the session's read scope and its "no
   * human left" check follow it.
   */
  ownState(accountId: string, oldState: VoiceState, newState: VoiceState): void {
    const guild = newState.guild;
    this.#onStage(accountId, newState);
    if (oldState.channelId && !newState.channelId) {
      // Deleting a voice channel disconnects whoever is in it: said as what it was.
      const gone = !guild.channels.cache.has(oldState.channelId);
      this.#deps.voice.disconnected(guild.id, accountId, gone ? 'channel_deleted' : 'disconnected by someone');
    } else if (
      newState.channelId &&
      oldState.channelId !== newState.channelId &&
      this.#deps.voice.moved(guild.id, accountId, newState.channelId)
    ) {
      const session = this.#deps.voice.ofAccount(guild.id, accountId);
      if (session && whoCanHear(guild, session.channelId) === 'nobody') void this.#deps.control.autoLeave(session);
    }
  }

  /** voiceStateUpdate of a member: join/leave announcements, auto-join, and leaving when no human is left. */
  async onVoiceState(oldState: VoiceState, newState: VoiceState): Promise<void> {
    const guild = newState.guild;
    // The bot's own accounts are handled by ownState, from each account's own gateway.
    if (newState.member?.user.bot || this.#deps.accounts.isOurs(newState.id)) return;
    if (oldState.channelId === newState.channelId) return;
    const settings = this.#deps.repos.guildSettings.get(guild.id);
    const { voice } = this.#deps;
    const autoJoin = settings.autoJoinChannelId;
    if (autoJoin && newState.channelId === autoJoin && !voice.at(guild.id, autoJoin)) {
      await this.#autoJoin(guild, autoJoin);
      return;
    }
    const lang = guildLang(settings.locale);
    for (const session of voice.sessions(guild.id)) {
      const here = newState.channelId === session.channelId || oldState.channelId === session.channelId;
      if (!here) continue;
      const listeners = () => whoCanHear(guild, session.channelId);
      if (settings.announceJoinLeave && listeners() === 'yes' && this.#announces(newState)) {
        const dictionary = this.#deps.repos.dictionary.list(guild.id, newState.id);
        const user = this.#deps.repos.userSettings.get(guild.id, newState.id);
        // A name one of the server's filters skips is announced unnamed (never read).
        const filters = this.#deps.repos.filters.readable(guild.id);
        const spoken = speakableName(user.nickname ?? newState.member?.displayName ?? '', lang, dictionary, undefined, filters);
        const kind = newState.channelId === session.channelId ? 'join' : 'leave';
        // The bot's own clip, charged to the server: one member hopping in and out, or renaming
        // between visits, is announced only so often and under so many names.
        const form = this.#deps.announcements.decide(guild.id, newState.id, spoken);
        if (form === 'silent' || (form === 'unnamed' && spoken))
          this.#deps.logger.debug({ guildId: guild.id, userId: newState.id, form }, 'announcement limited');
        if (form !== 'silent')
          queueBotClip(this.#deps, session, announcementOf(form === 'named' ? spoken : '', lang, kind), { mergeable: true });
      }
      if (oldState.channelId === session.channelId && listeners() === 'nobody') void this.#deps.control.autoLeave(session);
    }
  }

  /** The server's auto-join channel: a free account joins it (none free: nothing happens, as when the bot was busy before). */
  async #autoJoin(guild: Guild, channelId: string): Promise<void> {
    const { accounts, voice } = this.#deps;
    // Reserved as it is chosen, as /join's: a /join answered meanwhile takes another account.
    const { choice, release } = accounts.claim(guild.id, channelId, voice);
    if (choice.kind !== 'join') return release();
    const where = accounts.guild(choice.accountId, guild.id) ?? guild;
    await voice
      .join({
        guildId: guild.id,
        channelId,
        textChannelId: channelId,
        accountId: choice.accountId,
        adapterCreator: where.voiceAdapterCreator,
      })
      .then(() => this.#deps.status?.show(guild.id, channelId, [channelId], choice.accountId))
      .catch((error: unknown) => this.#deps.logger.warn({ err: error, guildId: guild.id }, 'auto-join failed'))
      .finally(release);
  }

  /**
   * An account's own stage state: heard only as a speaker (the manager stops reading while it is in
   * the audience). Moved back to the audience by a stage moderator: the bound channels are told why.
   */
  #onStage(accountId: string, state: VoiceState): void {
    const guildId = state.guild.id;
    const before = this.#deps.voice.ofAccount(guildId, accountId);
    if (!before) return;
    const suppressed = state.channel?.type === ChannelType.GuildStageVoice && state.suppress === true;
    this.#deps.voice.setSuppressed(guildId, accountId, suppressed);
    if (!suppressed || before.suppressed) return;
    // Nobody hears what waits any more: it is not made (nor posted), and whoever asked is told.
    this.#deps.control.ended(before, 'stage_audience');
    const lang = guildLang(this.#deps.repos.guildSettings.get(guildId).locale);
    // Every text channel read there is told: its members' messages are not read any more.
    for (const textChannelId of before.textChannelIds)
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

  /** A voice channel was deleted: a session in it ends now (its own voice state may come later, or not at all). */
  channelDeleted(guildId: string, channelId: string): void {
    const session = this.#deps.voice.at(guildId, channelId);
    if (session) this.#deps.voice.disconnected(guildId, session.accountId, 'channel_deleted');
  }

  /**
   * Kicked (4014), disconnected by someone, its channel deleted, Connect taken away before a
   * rejoin, or unable to reconnect: reading stopped, said once, in the server's language.
   */
  onSessionEnded(ended: EndedSession): void {
    this.#deps.logger.info(
      { guildId: ended.guildId, channelId: ended.voiceChannelId, reason: ended.reason },
      'voice session ended without /leave',
    );
    this.#deps.control.ended({ guildId: ended.guildId, channelId: ended.voiceChannelId }, 'disconnected');
    void this.#deps.status?.clear(ended.guildId, ended.voiceChannelId, ended.accountId);
    if (ended.textChannelIds.length === 0) return;
    const lang = guildLang(this.#deps.repos.guildSettings.get(ended.guildId).locale);
    const said =
      ended.reason === 'channel_deleted'
        ? t(lang, 'voice.ended_channel_deleted')
        : ended.reason === 'no_connect'
          ? t(lang, 'voice.ended_no_connect', { voice: `<#${ended.voiceChannelId}>` })
          : t(lang, 'voice.disconnected');
    for (const textChannelId of ended.textChannelIds) void this.#deps.notices.post(textChannelId, said);
  }
}
