/**
 * Who may move, stop, skip or clear the bot: one rule for /join (when it moves the bot), /leave,
 * /skip and /clear, as a pure function of facts read from Discord (guards.ts reads them).
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
export type ControlReason =
  | 'playback.not_in_channel'
  | 'playback.not_in_target'
  | 'playback.member_cannot_connect'
  | 'playback.bot_cannot_connect'
  | 'playback.bot_cannot_speak'
  | 'playback.bot_cannot_speak_stage'
  | 'playback.channel_full'
  | 'playback.listeners';

/** Allowed, or refused with the reason and the channel the refusal names (the target, or the bot's channel). */
export type ControlVerdict = { allowed: true } | { allowed: false; reason: ControlReason; channelId: string | null };

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
