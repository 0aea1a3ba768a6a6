import { ChannelType } from 'discord.js';

// Discord's channel kinds as both adapters (the slash commands and the dashboard) need them.

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
