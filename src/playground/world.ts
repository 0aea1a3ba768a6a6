/**
 * The playground's server: one guild with a text channel, a voice channel and a few members, one
 * of them an admin (Manage Server, so /config and /autoread work for her and refuse the others).
 */
import { DEFAULT_BOT_USER, PERMISSIONS, type FakeGuild } from '../local-discord/index.ts';

export const PLAYGROUND_IDS = {
  guild: '1300000000000000001',
  adminRole: '1300000000000000011',
  botRole: '1300000000000000012',
  text: '1300000000000000101',
  voice: '1300000000000000102',
  haruka: '1000000000000000101',
  alice: '1000000000000000102',
  taro: '1000000000000000103',
} as const;

/** What every member may do (Discord's defaults for @everyone that matter to a read-aloud bot). */
const EVERYONE =
  PERMISSIONS.ViewChannel |
  PERMISSIONS.SendMessages |
  PERMISSIONS.AddReactions |
  PERMISSIONS.EmbedLinks |
  PERMISSIONS.AttachFiles |
  PERMISSIONS.ReadMessageHistory |
  PERMISSIONS.UseExternalEmojis |
  PERMISSIONS.Connect |
  PERMISSIONS.Speak |
  PERMISSIONS.UseVAD |
  PERMISSIONS.ChangeNickname |
  PERMISSIONS.UseApplicationCommands;

/** A fresh copy of the playground's guild (the local Discord changes it as members move). */
export function playgroundGuild(): FakeGuild {
  const joinedAt = '2024-01-01T00:00:00.000Z';
  const ids = PLAYGROUND_IDS;
  return {
    id: ids.guild,
    name: 'yomiage playground',
    ownerId: ids.haruka,
    preferredLocale: 'ja',
    roles: [
      { id: ids.guild, name: '@everyone', permissions: EVERYONE.toString(), position: 0 },
      { id: ids.adminRole, name: 'Admin', permissions: (EVERYONE | PERMISSIONS.ManageGuild | PERMISSIONS.ManageMessages).toString(), position: 2 },
      { id: ids.botRole, name: DEFAULT_BOT_USER.username, permissions: (EVERYONE | PERMISSIONS.ManageMessages).toString(), position: 1, managed: true, botId: DEFAULT_BOT_USER.id },
    ],
    channels: [
      { id: ids.text, name: 'general', type: 0, position: 0 },
      { id: ids.voice, name: 'Voice', type: 2, position: 1 },
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
