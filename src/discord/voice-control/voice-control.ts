import {
  ChannelType,
  PermissionFlagsBits,
  type ChatInputCommandInteraction,
  type Client,
  type Guild,
  type GuildMember,
  type VoiceBasedChannel,
} from 'discord.js';
import type { NameReader } from '../../speech/text/names.ts';
import type { SpeechScheduler } from '../../speech/queue/scheduler.ts';
import { audienceOf, type Utterance, voiceAudience } from '../../speech/queue/utterance.ts';
import type { Logger } from '../../util/log.ts';
import type { RejoinRefusal, SessionInfo, VoiceManager } from '../../voice/manager.ts';
import type { BotAccounts } from './accounts.ts';
import type { AccountChoice } from './account-choice.ts';
import { UserError } from '../../i18n/errors.ts';
import { requirePlaybackControl } from './playback-rule.ts';
import { t, type Lang } from '../../i18n/texts.ts';
import type { ClearReason } from '../delivery/meta.ts';
import type { VoiceChannelStatus } from './voice-status.ts';
import { countedChannels, decideChannelAdd, type ChannelAdd } from '../../domain/read-channels.ts';
import { isBotClip } from '../delivery/bot-clips.ts';

/**
 * Whether an account may go back into the voice channel its session was dropped from (Discord
 * would leave the join unanswered): not once the channel is deleted, nor where it may no longer
 * view the channel or connect to it. Unknown (the account's view of the server is missing): it may,
 * and Discord decides.
 */
export function rejoinRefusal(
  accounts: BotAccounts,
  where: { guildId: string; channelId: string; accountId: string },
): RejoinRefusal | null {
  const guild = accounts.guild(where.accountId, where.guildId);
  if (!guild) return null;
  const channel = guild.channels.cache.get(where.channelId);
  if (!channel) return 'channel_deleted';
  const me = guild.members.me;
  if (!me) return null;
  return channel.permissionsFor(me).has([PermissionFlagsBits.ViewChannel, PermissionFlagsBits.Connect]) ? null : 'no_connect';
}

/** What VoiceControl works with. */
interface VoiceControlDeps {
  client: Client;
  /** The bot's accounts (the main one and the extras): /join picks the one that joins. */
  accounts: BotAccounts;
  voice: VoiceManager;
  scheduler: SpeechScheduler;
  names: NameReader;
  logger: Logger;
  /** The voice channel status shown while reading (voice-status.ts); none in tests that do not need it. */
  status?: VoiceChannelStatus;
  /** The voice channel a message of `channelId` is read in now (the auto-reader's rule), or null: not read in voice. */
  readIn: (guildId: string, channelId: string) => string | null;
  /** Chat messages no longer read because their channel was taken out of the call (their fates). */
  onUnread: (items: readonly Utterance[]) => void;
}

/**
 * The /join, /leave, /skip and /clear use cases, and the automatic leave (who may use them: playback-rule.ts). Whatever drops queued
 * speech goes through `clear` or `ended`, so every /say and /narrate waiting is told why (delivery listens
 * to the scheduler's 'cleared'), and the reader starts afresh: the next message is named again,
 * as members expect after the bot left and rejoined. Each acts on one listening session (an
 * account in a voice channel, voice/manager.ts): /join picks the account (account-choice.ts).
 */
export class VoiceControl {
  readonly #deps: VoiceControlDeps;

  constructor(deps: VoiceControlDeps) {
    this.#deps = deps;
  }

  /**
   * /join: the member's (or the given) voice channel; this text channel is read until /leave.
   * The account already there stays, else a free account of the server joins (the least busy),
   * else a bot with one account moves; with none free the member gets the invite link of an
   * account not yet in the server. Refused, changing nothing, when the playback rule says no
   * (playback-rule.ts `requirePlaybackControl`).
   */
  async join(interaction: ChatInputCommandInteraction, channelId: string | null, lang: Lang): Promise<void> {
    const guild = interaction.guild ?? (interaction.guildId ? await this.#deps.client.guilds.fetch(interaction.guildId) : null);
    if (!guild) throw new UserError('error.guild_only');
    const member = guild.members.cache.get(interaction.user.id) ?? (await guild.members.fetch(interaction.user.id));
    const target = channelId ?? member.voice.channelId ?? null;
    if (!target) throw new UserError('voice.join_first');
    const channel = guild.channels.cache.get(target) ?? (await guild.channels.fetch(target).catch(() => null));
    if (!channel?.isVoiceBased()) throw new UserError('voice.join_failed');
    const { accounts, voice } = this.#deps;
    // Chosen and reserved at once: a /join answered meanwhile takes another account, never this one.
    const { choice, release } = accounts.claim(guild.id, target, voice);
    try {
      await this.#joinWith(interaction, choice, { guild, member, channel, target }, lang);
    } finally {
      release();
    }
  }

  async #joinWith(
    interaction: ChatInputCommandInteraction,
    choice: AccountChoice,
    asked: { guild: Guild; member: GuildMember; channel: VoiceBasedChannel; target: string },
    lang: Lang,
  ): Promise<void> {
    const { accounts, voice } = this.#deps;
    const { guild, member, channel, target } = asked;
    if (choice.kind === 'none') {
      const invite = choice.inviteAccountId ? accounts.inviteFor(choice.inviteAccountId, guild.id) : undefined;
      throw new UserError(invite ? 'voice.no_free_account' : 'voice.no_free_account_all_in', {
        vars: { channel: `<#${target}>`, invite: invite ?? '' },
      });
    }
    const { accountId } = choice;
    // The joining account's own view of the server: its adapter, its member and its permissions there.
    const where = accounts.guild(accountId, guild.id) ?? guild;
    const me = where.members.me ?? (await where.members.fetchMe());
    const before = choice.kind === 'join' ? null : choice.kind === 'there' ? target : choice.fromChannelId;
    requirePlaybackControl(interaction, before, { channel, member, me });
    await interaction.deferReply();
    const stage = channel.type === ChannelType.GuildStageVoice;
    // The status of the channel left behind is cleared while the bot is still in it.
    if (before && before !== target) await this.#deps.status?.clear(guild.id, before, accountId);
    try {
      await voice.join({
        guildId: guild.id,
        channelId: target,
        textChannelId: interaction.channelId,
        accountId,
        adapterCreator: where.voiceAdapterCreator,
        stage,
      });
    } catch (error) {
      this.#deps.logger.warn({ err: error, guildId: guild.id, channelId: target }, 'voice join failed');
      throw new UserError('voice.join_failed', { cause: error });
    }
    const waiting = stage && !(await this.#takeTheStage(where, target, accountId));
    const joined = t(lang, 'voice.joined', { voice: `<#${target}>`, text: `<#${interaction.channelId}>` });
    await interaction.editReply({
      content: waiting ? `${joined}\n${t(lang, 'voice.stage_waiting')}` : joined,
      allowedMentions: { parse: [] },
    });
    const reads = voice.ofAccount(guild.id, accountId)?.textChannelIds ?? [interaction.channelId];
    if (!stage) await this.#deps.status?.show(guild.id, target, reads, accountId);
  }

  /**
   * What /join typed in `textChannelId` does to the call of `session`, already there
   * (src/domain/read-channels.ts), with at most `max` text channels per call.
   */
  channelAdd(session: SessionInfo, textChannelId: string, max: number): ChannelAdd {
    const other = this.#deps.voice.boundTo(session.guildId, textChannelId);
    return decideChannelAdd({
      voiceChannelId: session.channelId,
      bound: session.textChannelIds,
      channelId: textChannelId,
      max,
      readElsewhere: other !== undefined && other.channelId !== session.channelId,
    });
  }

  /** What to tell the member when `channelAdd` refuses `textChannelId` (the call is full, or another call reads it). */
  addRefusal(session: SessionInfo, textChannelId: string, decision: 'full' | 'elsewhere', max: number): UserError {
    if (decision === 'elsewhere') {
      const other = this.#deps.voice.boundTo(session.guildId, textChannelId);
      return new UserError('voice.channel_read_elsewhere', { vars: { voice: `<#${other?.channelId ?? session.channelId}>` } });
    }
    const counted = countedChannels(session.channelId, session.textChannelIds);
    return new UserError('voice.channels_full', {
      vars: { voice: `<#${session.channelId}>`, channels: mentions(counted), count: counted.length, max },
    });
  }

  /**
   * Reads `textChannelId` in the call of `session` too, once the member said so: checked again
   * (the call may have changed, or filled up, meanwhile: a UserError says so, nothing changes),
   * then the voice status names it. The call as it is now.
   */
  async addChannel(session: SessionInfo, textChannelId: string, max: number): Promise<SessionInfo> {
    const { voice } = this.#deps;
    const now = voice.at(session.guildId, session.channelId);
    if (!now || now.accountId !== session.accountId) throw new UserError('voice.reading_changed');
    const decision = this.channelAdd(now, textChannelId, max);
    if (decision === 'full' || decision === 'elsewhere') throw this.addRefusal(now, textChannelId, decision, max);
    voice.addTextChannel(now.guildId, now.channelId, textChannelId);
    const after = voice.at(now.guildId, now.channelId)!;
    if (!after.suppressed) await this.#deps.status?.show(after.guildId, after.channelId, after.textChannelIds, after.accountId);
    return after;
  }

  /**
   * /leave in one of several text channels of a call, when the member chose "this channel only":
   * the call stops reading it (the others stay), its messages waiting there are not read (unless
   * the channel is still read in that call, as an auto-read channel), and the status follows.
   */
  async removeChannel(session: SessionInfo, textChannelId: string): Promise<SessionInfo> {
    const { voice, scheduler } = this.#deps;
    const { guildId, channelId } = session;
    const now = voice.at(guildId, channelId);
    if (!now || now.accountId !== session.accountId || !voice.removeTextChannel(guildId, channelId, textChannelId))
      throw new UserError('voice.reading_changed');
    const after = voice.at(guildId, channelId)!;
    const audience = voiceAudience(channelId);
    // Asked of each waiting message's own channel by the auto-reader's rule: a thread read for its
    // parent goes with it, an auto-read channel or another bound one stays.
    const readHere = new Map<string, boolean>();
    const stillRead = (id: string) => {
      if (!readHere.has(id)) readHere.set(id, this.#deps.readIn(guildId, id) === channelId);
      return readHere.get(id);
    };
    const unread = scheduler.withdraw(
      guildId,
      (u) => audienceOf(u) === audience && u.kind === 'auto' && !isBotClip(u) && !stillRead(u.channelId),
    );
    if (unread.length > 0) this.#deps.onUnread(unread);
    if (after.textChannelIds.length > 0) await this.#deps.status?.show(guildId, channelId, after.textChannelIds, after.accountId);
    else await this.#deps.status?.clear(guildId, channelId, after.accountId);
    return after;
  }

  /**
   * In a stage the bot is heard only as a speaker: it becomes one where it may (Mute Members there),
   * else it asks to speak and waits for a stage moderator. True once it is a speaker.
   * https://discord.com/developers/docs/resources/voice#modify-current-user-voice-state
   */
  async #takeTheStage(guild: Guild, channelId: string, accountId: string): Promise<boolean> {
    const me = guild.members.me ?? (await guild.members.fetchMe());
    if (!this.#deps.voice.ofAccount(guild.id, accountId)?.suppressed) return true;
    const mayUnsuppress = guild.channels.cache.get(channelId)?.permissionsFor(me)?.has(PermissionFlagsBits.MuteMembers) ?? false;
    try {
      if (mayUnsuppress) {
        await me.voice.setSuppressed(false);
        // Heard from now on; the voice state that follows says the same.
        this.#deps.voice.setSuppressed(guild.id, accountId, false);
        return true;
      }
      if (!me.voice.requestToSpeakTimestamp) await me.voice.setRequestToSpeak(true);
    } catch (error) {
      this.#deps.logger.warn({ err: error, guildId: guild.id, channelId }, 'could not become a speaker on the stage');
    }
    return false;
  }

  /** The session in voice channel `channelId`, if one of the accounts is there. */
  sessionAt(guildId: string, channelId: string): SessionInfo | undefined {
    return this.#deps.voice.at(guildId, channelId);
  }

  /**
   * The session a playback command acts on: the one in the member's voice channel, else the one
   * bound to the text channel it was used in, else the server's only one; null when the bot reads
   * no voice channel there. Throws what to tell the member when it reads several and none of these.
   */
  sessionFor(guildId: string, memberChannelId: string | null, textChannelId: string | null): SessionInfo | null {
    const { voice } = this.#deps;
    const sessions = voice.sessions(guildId);
    if (sessions.length === 0) return null;
    const found =
      (memberChannelId ? voice.at(guildId, memberChannelId) : undefined) ??
      (textChannelId ? voice.boundTo(guildId, textChannelId) : undefined) ??
      (sessions.length === 1 ? sessions[0] : undefined);
    if (!found) throw new UserError('voice.which_session');
    return found;
  }

  /** /skip: stops what the session hears now (without one: whatever the guild is delivered); false when nothing is. */
  skip(guildId: string, session: SessionInfo | null): boolean {
    const { scheduler } = this.#deps;
    if (session) return scheduler.skip(voiceAudience(session.channelId));
    let skipped = false;
    for (const { audience } of scheduler.stats().filter((s) => s.guildId === guildId)) skipped = scheduler.skip(audience) || skipped;
    return skipped;
  }

  /**
   * /clear: drops what waits for the session (without one: everything queued in the guild); each
   * /say or /narrate waiting is told why; the next message is named. The other sessions' queues stay.
   */
  clear(guildId: string, session: Pick<SessionInfo, 'channelId'> | null, reason: ClearReason = 'clear'): number {
    this.#deps.names.forget(session ? `${guildId}:${voiceAudience(session.channelId)}` : `${guildId}:`);
    const { scheduler } = this.#deps;
    return session ? scheduler.clear(voiceAudience(session.channelId), reason) : scheduler.clearGuild(guildId, reason);
  }

  /**
   * A session ended (left, nobody left, disconnected, a stage's audience): what waited for it is
   * dropped; once it was the server's last, everything the server had queued goes too, as when the
   * bot read one voice channel.
   */
  ended(session: Pick<SessionInfo, 'guildId' | 'channelId'>, reason: ClearReason): number {
    const last = this.#deps.voice.sessions(session.guildId).every((s) => s.channelId === session.channelId);
    return this.clear(session.guildId, last ? null : session, reason);
  }

  /** /leave: leaves the session's voice channel for good (not rejoined after a restart) and drops what was queued for it. */
  async leave(session: SessionInfo): Promise<boolean> {
    await this.#deps.status?.clear(session.guildId, session.channelId, session.accountId);
    if (!this.#deps.voice.leave(session.guildId, session.channelId)) return false;
    this.ended(session, 'leave');
    return true;
  }

  /** Nobody is left to hear the session: it leaves, as with /leave. */
  async autoLeave(session: SessionInfo): Promise<void> {
    this.#deps.logger.info({ guildId: session.guildId, channelId: session.channelId }, 'no human left in the voice channel; leaving');
    await this.#deps.status?.clear(session.guildId, session.channelId, session.accountId);
    this.#deps.voice.leave(session.guildId, session.channelId);
    this.ended(session, 'auto_leave');
  }
}

/** Channels as Discord mentions, each shown to a member as they may see it. */
const mentions = (ids: readonly string[]) => ids.map((id) => `<#${id}>`).join(' ');
