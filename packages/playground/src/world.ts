/**
 * The playground's server: one guild with two text channels, two voice channels and a few members,
 * one of them an admin (Manage Server, so /config and /autoread work for her and refuse the
 * others). The bot has a second account in it (`PLAYGROUND_EXTRA_BOT`, EXTRA_DISCORD_TOKENS), so
 * both voice channels can be read at once, each by its own account. Its admin gave both accounts
 * Set Voice Channel Status on the voice channels (so the status names the text channels read), and
 * chose a voice pool (`PLAYGROUND_VOICE_POOL`, set at start-up) so members are told apart by ear.
 * The operator publishes one curated dictionary (`PLAYGROUND_CURATED_DICTIONARY`) she may follow.
 */
import { DEFAULT_BOT_USER, PERMISSIONS, worldRoles, type FakeGuild } from '@yomiage/local-discord';

type Overwrites = NonNullable<FakeGuild['channels'][number]['permissionOverwrites']>;

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

/**
 * The server's voice pool, as its admin would set it with /config voice-pool: two voices the
 * emulator's espeak-ng reads in clearly different voices (a female variant near 140-200 Hz and a
 * male one near 70-110 Hz). Alice's first voice of the two is the first, タロー's the second, so
 * they sound different together and apart.
 */
export const PLAYGROUND_VOICE_POOL = ['ja-JP-MayuNeural', 'ja-JP-KeitaNeural'] as const;

/**
 * A curated dictionary the playground's operator publishes (CURATED_DICTIONARIES_DIR), which the
 * server's admin may follow (/dictionary follow): game chat words read as a Japanese player says them.
 */
export const PLAYGROUND_CURATED_DICTIONARY = {
  name: 'gaming',
  entries: [
    ['gg', 'ぐっどげーむ'],
    ['afk', 'りせき'],
    ['nerf', 'なーふ'],
  ],
} as const;

/** Set Voice Channel Status for each account of the bot, as an admin grants it on a voice channel (a member overwrite). */
function voiceStatusOverwrites(): Overwrites {
  const allow = PERMISSIONS.SetVoiceChannelStatus.toString();
  return [DEFAULT_BOT_USER.id, PLAYGROUND_EXTRA_BOT.id].map((id) => ({ id, type: 1 as const, allow, deny: '0' }));
}

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
      { id: ids.voice, name: 'Voice', type: 2, position: 1, permissionOverwrites: voiceStatusOverwrites() },
      { id: ids.text2, name: 'zatsudan', type: 0, position: 2 },
      { id: ids.voice2, name: 'Voice 2', type: 2, position: 3, permissionOverwrites: voiceStatusOverwrites() },
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
