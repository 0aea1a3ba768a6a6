import {
  ChannelType,
  GuildMember,
  PermissionFlagsBits,
  type ButtonInteraction,
  type ChatInputCommandInteraction,
  type GuildBasedChannel,
  type VoiceBasedChannel,
  type VoiceState,
} from 'discord.js';
import { UserError } from '../../i18n/errors.ts';

/**
 * Who may move, stop, skip or clear the bot: one rule for /join (when it moves the bot), /leave,
 * /skip and /clear, as a pure function of facts read from Discord (`decideControl`), and the
 * reading of those facts (`requirePlaybackControl`).
 */

/** The member and the bot in one guild, as the rule needs them. */
export interface ControlFacts {
  /** The member has Move Members in the bot's voice channel (Administrator includes it; with the bot in none: where they typed). */
  canMoveMembers: boolean;
  /** The voice channel the member is in, or null. */
  memberChannelId: string | null;
  /** The voice channel the bot is in, or null. */
  botChannelId: string | null;
  /** Humans (not bots) in the bot's voice channel other than the member. */
  othersListening: number;
}

/** For /join: the channel the bot would join, with the permissions Discord computes there (overwrites applied). */
export interface JoinTarget {
  channelId: string;
  /** The member has View Channel and Connect there. */
  memberCanConnect: boolean;
  /** The member has Move Members there (they may send the bot to a channel they are not in). */
  memberCanMoveMembers: boolean;
  /** The bot has View Channel and Connect there. */
  botCanConnect: boolean;
  /** The bot may be heard there: Speak in a voice channel; in a stage, Request to Speak or Mute Members (to become a speaker). */
  botCanSpeak: boolean;
  /** A stage channel (the refusal names the stage's permissions). */
  stage?: boolean;
  /** The bot has Move Members there (it may join a full channel). */
  botCanMoveMembers: boolean;
  /** As many members connected as its user limit allows. */
  full: boolean;
}

/** Why a control was refused: the i18n key of the refusal. */
type ControlReason =
  | 'playback.not_in_channel'
  | 'playback.not_in_target'
  | 'playback.member_cannot_connect'
  | 'playback.bot_cannot_connect'
  | 'playback.bot_cannot_speak'
  | 'playback.bot_cannot_speak_stage'
  | 'playback.channel_full'
  | 'playback.listeners';

/** Allowed, or refused with the reason and the channel the refusal names (the target, or the bot's channel). */
type ControlVerdict = { allowed: true } | { allowed: false; reason: ControlReason; channelId: string | null };

const ALLOWED: ControlVerdict = { allowed: true };

/**
 * Whether the member may use a playback control. Without `join` (/leave, /skip, /clear): a member
 * in the bot's voice channel, or one with Move Members there. With `join` (/join): the member is in
 * the target channel (or has Move Members there and could connect there), the bot may connect and
 * speak there (and it has room), and the bot never leaves a channel where others are listening
 * unless the member has Move Members in that channel.
 */
export function decideControl(facts: ControlFacts, join?: JoinTarget): ControlVerdict {
  if (!join) {
    if (facts.canMoveMembers) return ALLOWED;
    if (facts.botChannelId !== null && facts.memberChannelId === facts.botChannelId) return ALLOWED;
    return { allowed: false, reason: 'playback.not_in_channel', channelId: facts.botChannelId };
  }
  const channelId = join.channelId;
  if (facts.memberChannelId !== channelId) {
    if (!join.memberCanMoveMembers) return { allowed: false, reason: 'playback.not_in_target', channelId };
    if (!join.memberCanConnect) return { allowed: false, reason: 'playback.member_cannot_connect', channelId };
  }
  const moving = facts.botChannelId !== channelId;
  if (!join.botCanConnect) return { allowed: false, reason: 'playback.bot_cannot_connect', channelId };
  if (!join.botCanSpeak)
    return { allowed: false, reason: join.stage ? 'playback.bot_cannot_speak_stage' : 'playback.bot_cannot_speak', channelId };
  if (moving && join.full && !join.botCanMoveMembers) return { allowed: false, reason: 'playback.channel_full', channelId };
  if (moving && facts.botChannelId !== null && facts.othersListening > 0 && !facts.canMoveMembers) {
    return { allowed: false, reason: 'playback.listeners', channelId: facts.botChannelId };
  }
  return ALLOWED;
}

/** A /join's target: the channel, and the member and the bot as discord.js resolves their permissions there. */
interface JoinAsked {
  channel: VoiceBasedChannel;
  member: GuildMember;
  me: GuildMember;
}

/** A command, or the click that answers its question (adding or removing a text channel of a call). */
type Asking = ChatInputCommandInteraction | ButtonInteraction;

/**
 * Refuses, changing nothing, a playback control the member may not use (the one rule,
 * `decideControl`): /skip, /clear and /leave with `join` unset (and the text channels a call
 * reads), /join with the channel it would join. The member's voice channel and the listeners come
 * from the guild's cache.
 */
export function requirePlaybackControl(interaction: Asking, botChannelId: string | null, join?: JoinAsked): void {
  const guild = join?.channel.guild ?? interaction.guild;
  // Humans, by their voice states: one whose member is not cached counts as a human (never leave a listener).
  const listening = (v: VoiceState) =>
    v.channelId === botChannelId && v.id !== interaction.user.id && v.id !== interaction.client.user.id && !v.member?.user.bot;
  const others = botChannelId === null ? 0 : (guild?.voiceStates.cache.filter(listening).size ?? 0);
  const facts: ControlFacts = {
    canMoveMembers: mayMoveMembersIn(interaction, botChannelId === null ? null : guild?.channels.cache.get(botChannelId), join?.member),
    memberChannelId: guild?.voiceStates.cache.get(interaction.user.id)?.channelId ?? null,
    botChannelId,
    othersListening: others,
  };
  const verdict = decideControl(facts, join && joinTarget(join));
  if (!verdict.allowed) throw new UserError(verdict.reason, { vars: { channel: verdict.channelId ? `<#${verdict.channelId}>` : '' } });
}

/**
 * Move Members as Discord grants it in the voice channel concerned (its overwrites applied), not
 * in the text channel the command was typed in; with no voice channel concerned (the bot is in
 * none), as the member has it where they typed the command.
 */
function mayMoveMembersIn(
  interaction: Asking,
  voiceChannel: GuildBasedChannel | null | undefined,
  member: GuildMember | undefined,
): boolean {
  if (voiceChannel === null) return interaction.memberPermissions?.has(PermissionFlagsBits.MoveMembers) ?? false;
  const who = member ?? (interaction.member instanceof GuildMember ? interaction.member : undefined);
  // A channel or member this process does not know: nobody's permission there is proven.
  if (!voiceChannel || !who) return false;
  return voiceChannel.permissionsFor(who).has(PermissionFlagsBits.MoveMembers);
}

/** Discord's permissions for the member and the bot in the target, overwrites applied (`permissionsFor`). */
function joinTarget({ channel, member, me }: JoinAsked): JoinTarget {
  const { ViewChannel, Connect, Speak, MoveMembers, RequestToSpeak, MuteMembers } = PermissionFlagsBits;
  const mine = channel.permissionsFor(member);
  const bots = channel.permissionsFor(me);
  const stage = channel.type === ChannelType.GuildStageVoice;
  return {
    channelId: channel.id,
    memberCanConnect: mine.has([ViewChannel, Connect]),
    memberCanMoveMembers: mine.has(MoveMembers),
    botCanConnect: bots.has([ViewChannel, Connect]),
    // In a stage the bot speaks once it is a speaker: it asks (Request to Speak) or makes itself one (Mute Members).
    botCanSpeak: stage ? bots.has(RequestToSpeak) || bots.has(MuteMembers) : bots.has(Speak),
    stage,
    botCanMoveMembers: bots.has(MoveMembers),
    full: channel.full,
  };
}
