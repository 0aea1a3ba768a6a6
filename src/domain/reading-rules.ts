import type { ReadingSettings } from './reading.ts';

// Whose messages auto-read reads: pure policy over plain data, so the rules are tested
// without Discord (test/discord/reading-rules.test.ts) and the auto-read handler stays a straight line.

/** Why a message's author is not read; undefined when they are. */
export type NotRead = 'self' | 'bot' | 'muted' | 'never_role' | 'required_role' | 'not_in_voice';

/** The author of a message, as auto-read sees them. */
export interface MessageAuthor {
  id: string;
  bot: boolean;
  /** Set for a webhook's message (its author id is the webhook's). */
  webhookId: string | null;
  /** The member's role ids; null when the author is no member (a webhook). */
  roleIds: ReadonlySet<string> | null;
  /** The voice channel the author is in, if any. */
  voiceChannelId: string | null;
}

/** The guild's rules for one message. */
export interface ReadingPolicy {
  reading: ReadingSettings;
  /** Bot user ids and webhook ids read when `reading.bots` is 'listed'. */
  allowedBots: readonly string[];
  /** Roles whose members are never read. */
  neverRoles: readonly string[];
  /** The author is muted with /config mute. */
  muted: boolean;
  /** The bot's own user id: its messages are never read (no loop with our own replies). */
  selfId: string | undefined;
  /** The voice channel the bot reads in; null while it is in none. */
  botVoiceChannelId: string | null;
  /** Whether a role still exists: a deleted required role no longer shuts everyone out. */
  roleExists(roleId: string): boolean;
}

/**
 * Whether the author is read, and if not why. Bots and webhooks are governed only by the bot
 * setting (off by default; 'listed' reads the allow-list); roles and the voice channel apply to
 * members. The voice-channel rule applies while the bot is in voice (an MP3 channel read while it
 * is in none has no channel to be in).
 */
export function whyNotRead(author: MessageAuthor, policy: ReadingPolicy): NotRead | undefined {
  if (author.id === policy.selfId) return 'self';
  if (policy.muted) return 'muted';
  if (author.bot || author.webhookId) {
    const mode = policy.reading.bots;
    if (mode === 'all') return undefined;
    const listed = policy.allowedBots.includes(author.id) || (author.webhookId !== null && policy.allowedBots.includes(author.webhookId));
    return mode === 'listed' && listed ? undefined : 'bot';
  }
  const roles = author.roleIds ?? new Set<string>();
  if (policy.neverRoles.some((r) => roles.has(r))) return 'never_role';
  const required = policy.reading.requiredRoleId;
  if (required !== null && policy.roleExists(required) && !roles.has(required)) return 'required_role';
  if (policy.reading.requireInVoice && policy.botVoiceChannelId !== null && author.voiceChannelId !== policy.botVoiceChannelId)
    return 'not_in_voice';
  return undefined;
}
