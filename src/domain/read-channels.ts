// The text channels one call reads: /join binds the channel it was typed in, a member in the call
// adds more (up to the server's number, /config text-channels) and /leave in one of them stops
// just that one. The voice channel's own chat is always read with its call, so it never counts.

/** How many text channels one call may read (/config text-channels): the bounds and the default. */
export const TEXT_CHANNELS_PER_CALL = { min: 1, max: 10, default: 3 } as const;

/** What the call reads now and where /join was typed. */
interface ReadChannelsFacts {
  /** The voice channel of the call. */
  voiceChannelId: string;
  /** The text channels bound to the call, in the order they were added. */
  bound: readonly string[];
  /** Where the member typed the command. */
  channelId: string;
}

/**
 * What /join typed in `channelId` does when the bot is already in the member's call:
 * - `bind`: the call reads no other text channel: this one is bound, as a first /join binds it;
 * - `already`: this channel is read in the call already (bound, or the voice channel's own chat);
 * - `ask`: the member is asked whether to read it too;
 * - `full`: the call reads `max` channels already (nothing changes);
 * - `elsewhere`: another call reads it (one channel's messages go to one call).
 */
export type ChannelAdd = 'bind' | 'already' | 'ask' | 'full' | 'elsewhere';

/** The text channels of the call that count against the server's number (its own chat does not). */
export function countedChannels(voiceChannelId: string, bound: readonly string[]): string[] {
  return bound.filter((id) => id !== voiceChannelId);
}

/** What /join in `channelId` does to a call already there (pure). `readElsewhere`: another call reads that channel. */
export function decideChannelAdd(facts: ReadChannelsFacts & { max: number; readElsewhere: boolean }): ChannelAdd {
  const { voiceChannelId, bound, channelId } = facts;
  if (channelId === voiceChannelId || bound.includes(channelId)) return 'already';
  const counted = countedChannels(voiceChannelId, bound);
  if (counted.length === 0) return 'bind';
  if (facts.readElsewhere) return 'elsewhere';
  return counted.length >= facts.max ? 'full' : 'ask';
}

/**
 * What /leave typed in `channelId` offers: `leave` the call (as always), or `ask` whether to stop
 * only this channel, when it is one of several text channels the call reads.
 */
export function decideChannelLeave(facts: ReadChannelsFacts): 'leave' | 'ask' {
  const { voiceChannelId, bound, channelId } = facts;
  if (!bound.includes(channelId) || channelId === voiceChannelId) return 'leave';
  return countedChannels(voiceChannelId, bound).length > 1 ? 'ask' : 'leave';
}
