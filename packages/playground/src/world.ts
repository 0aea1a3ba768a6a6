/**
 * The playground's server: one guild with two text channels, two voice channels and a few members,
 * one of them an admin (Manage Server, so /config and /autoread work for her and refuse the
 * others). The bot has a second account in it (`PLAYGROUND_EXTRA_BOT`, EXTRA_DISCORD_TOKENS), so
 * both voice channels can be read at once, each by its own account.
 */
import { DEFAULT_BOT_USER, worldRoles, type FakeGuild } from '@yomiage/local-discord';

export const PLAYGROUND_IDS = {
  guild: '1300000000000000001',
  adminRole: '1300000000000000011',
  botRole: '1300000000000000012',
  text: '1300000000000000101',
  voice: '1300000000000000102',
  text2: '1300000000000000103',
  voice2: '1300000000000000104',
  haruka: '1000000000000000101',
  alice: '1000000000000000102',
  taro: '1000000000000000103',
} as const;

/** The bot's second account (another application), a member of the playground's server. */
export const PLAYGROUND_EXTRA_BOT = { id: '1200000000000000002', username: 'yomiage-2' } as const;

/** A fresh copy of the playground's guild (the local Discord changes it as members move). */
export function playgroundGuild(): FakeGuild {
  const joinedAt = '2024-01-01T00:00:00.000Z';
  const ids = PLAYGROUND_IDS;
  return {
    id: ids.guild,
    name: 'yomiage playground',
    ownerId: ids.haruka,
    preferredLocale: 'ja',
    roles: worldRoles({ everyone: ids.guild, manager: { id: ids.adminRole, name: 'Admin' }, bot: ids.botRole }, DEFAULT_BOT_USER),
    channels: [
      { id: ids.text, name: 'general', type: 0, position: 0 },
      { id: ids.voice, name: 'Voice', type: 2, position: 1 },
      { id: ids.text2, name: 'zatsudan', type: 0, position: 2 },
      { id: ids.voice2, name: 'Voice 2', type: 2, position: 3 },
    ],
    members: [
      { user: { ...DEFAULT_BOT_USER, bot: true }, roles: [ids.botRole], joinedAt },
      { user: { id: ids.haruka, username: 'haruka', globalName: 'はるか' }, roles: [ids.adminRole], joinedAt },
      { user: { id: ids.alice, username: 'alice', globalName: 'Alice' }, roles: [], joinedAt },
      { user: { id: ids.taro, username: 'taro', globalName: 'たろう' }, nick: 'タロー', roles: [], joinedAt },
    ],
    voiceStates: [],
  };
}
