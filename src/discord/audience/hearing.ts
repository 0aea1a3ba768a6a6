import type { Guild } from 'discord.js';
import { inCall, isBot } from './visibility.ts';

/** Who can hear the bot in `channelId` of `guild`: nobody, only deafened humans, or someone (by voice state: uncached members count). */
export function whoCanHear(guild: Guild, channelId: string | null): 'nobody' | 'deaf' | 'yes' {
  const channel = channelId ? guild.channels.cache.get(channelId) : undefined;
  if (!channel?.isVoiceBased()) return 'nobody';
  const humans = inCall(guild, channel.id).filter((s) => !isBot(guild, s));
  if (humans.length === 0) return 'nobody';
  return humans.every((s) => s.deaf) ? 'deaf' : 'yes';
}

/** The people (not bots) now in voice channel `channelId` of `guild`, by id: whose voices the server's pool tells apart. */
export function peopleInCall(guild: Guild, channelId: string | null): string[] {
  if (!channelId) return [];
  return inCall(guild, channelId)
    .filter((s) => !isBot(guild, s))
    .map((s) => s.id);
}
