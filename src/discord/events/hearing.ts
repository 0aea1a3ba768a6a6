import type { Guild } from 'discord.js';

/** Who can hear the bot in `channelId` of `guild`: nobody, only deafened humans, or someone. */
export function whoCanHear(guild: Guild, channelId: string | null): 'nobody' | 'deaf' | 'yes' {
  const channel = channelId ? guild.channels.cache.get(channelId) : undefined;
  if (!channel?.isVoiceBased()) return 'nobody';
  const humans = [...channel.members.values()].filter((m) => !m.user.bot);
  if (humans.length === 0) return 'nobody';
  return humans.every((m) => m.voice.deaf) ? 'deaf' : 'yes';
}
