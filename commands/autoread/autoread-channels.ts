import { ChannelType } from 'discord.js';
import type { AutoReadChannel } from '../../src/domain/reading.ts';
import type { Actor } from '../../src/domain/audit.ts';
import type { BotContext } from '../../src/discord/interactions/context.ts';
import { UserError } from '../../src/i18n/errors.ts';

// The server's auto-read channels changed by an admin: one rule for /autoread and the web
// dashboard (the caller has checked Manage Server), each change in the audit log.

/** The channels /autoread's option offers: text, announcement, a voice channel's own chat, and a forum (its posts are read as threads). */
export const AUTO_READ_CHANNEL_TYPES = [
  ChannelType.GuildText,
  ChannelType.GuildAnnouncement,
  ChannelType.GuildVoice,
  ChannelType.GuildForum,
] as const;

/** Whether a channel of this type can be read automatically: one /autoread's option offers. */
export function isAutoReadable(type: ChannelType | undefined): boolean {
  return (AUTO_READ_CHANNEL_TYPES as readonly (ChannelType | undefined)[]).includes(type);
}

/**
 * Reads `channelId` automatically (with MP3s posted while the bot is in no voice channel when
 * `postAudio`). `channelType` is the channel's type as the bot sees it (undefined: not a channel of
 * this server): anything /autoread could not name is refused, nothing changed.
 */
export async function addAutoRead(
  ctx: Pick<BotContext, 'repos'>,
  guildId: string,
  actor: Actor,
  channel: { id: string; type: ChannelType | undefined },
  postAudio: boolean,
): Promise<void> {
  if (!isAutoReadable(channel.type)) throw new UserError('autoread.bad_channel');
  await ctx.repos.autoRead.add(guildId, channel.id, { postAudio });
  await ctx.repos.audit.record(guildId, actor, 'autoread.add', { channelId: channel.id, postAudio });
}

/** Stops reading `channelId` automatically; refused when it was not read. */
export async function removeAutoRead(ctx: Pick<BotContext, 'repos'>, guildId: string, actor: Actor, channelId: string): Promise<void> {
  if (!(await ctx.repos.autoRead.remove(guildId, channelId)))
    throw new UserError('autoread.not_listed', { vars: { channel: `<#${channelId}>` } });
  await ctx.repos.audit.record(guildId, actor, 'autoread.remove', { channelId });
}

/** The server's auto-read channels. */
export function autoReadChannels(ctx: Pick<BotContext, 'repos'>, guildId: string): AutoReadChannel[] {
  return ctx.repos.autoRead.entries(guildId);
}
