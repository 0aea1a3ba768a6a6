import { Collection, type Guild, type GuildBasedChannel } from 'discord.js';
import { describe, expect, it } from 'vitest';
import { whoCanHear } from '../../src/discord/audience/hearing.ts';
import { audienceCanView } from '../../src/discord/audience/visibility.ts';

// Who is in the call is read from the guild's voice states, not from the voice channel's cached
// members: Discord does not send every member, and one missing from the cache still hears the bot.

const VC = 'vc1';
const BOT = 'bot';
/** A guild whose call holds the bot and `states` (a state without a member: that member is not cached). */
function guild(states: Array<{ id: string; deaf?: boolean; member?: { user: { bot: boolean } } }>) {
  const voiceStates = new Collection<string, object>();
  for (const s of [{ id: BOT, member: { user: { bot: true } } }, ...states]) {
    voiceStates.set(s.id, { id: s.id, channelId: VC, deaf: s.deaf ?? false, member: s.member ?? null });
  }
  const voice = { id: VC, isVoiceBased: () => true, members: new Collection() };
  return {
    channels: { cache: new Collection([[VC, voice]]) },
    voiceStates: { cache: voiceStates },
    client: { user: { id: BOT }, users: { cache: new Collection() } },
  } as unknown as Guild;
}
const everyoneViews = { type: 0, isThread: () => false, permissionsFor: () => ({ has: () => true }) } as unknown as GuildBasedChannel;

describe('a member in the call whose member is not cached', () => {
  it('counts as unable to view a channel: its name and its messages are kept from the call', () => {
    expect(audienceCanView(guild([{ id: 'carol' }]), everyoneViews, { voiceChannelId: VC, postChannelId: null })).toBe(false);
    const cached = guild([{ id: 'alice', member: { user: { bot: false } } }]);
    expect(audienceCanView(cached, everyoneViews, { voiceChannelId: VC, postChannelId: null })).toBe(true);
  });

  it('counts as a listener who can hear (deafened only when their voice state says so)', () => {
    expect(whoCanHear(guild([{ id: 'carol' }]), VC)).toBe('yes');
    expect(whoCanHear(guild([{ id: 'carol', deaf: true }]), VC)).toBe('deaf');
    expect(whoCanHear(guild([]), VC)).toBe('nobody');
  });
});
