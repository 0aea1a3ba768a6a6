/**
 * The default world (src/fixtures.ts) with the voice channels a server really has
 * besides an open one, set up as Discord's channel settings do: a second open channel, a staff
 * channel (@everyone denied Connect, the Moderator role allowed it), a channel where the bot is
 * denied Speak (a member overwrite), and a full one (user limit 1, the owner in it); plus carol,
 * a member without any special permission. Overwrites as
 * https://discord.com/developers/docs/resources/channel#overwrite-object.
 */
import { DEFAULT_IDS, defaultGuild, PERMISSIONS, type FakeGuild } from '../src/fixtures.ts';

export const VOICE_IDS = {
  voice2: '1100000000000000104',
  staff: '1100000000000000105',
  quiet: '1100000000000000106',
  full: '1100000000000000107',
  carol: '1000000000000000077',
} as const;

const NONE = '0';

export function voicePermissionsWorld(): FakeGuild {
  const guild = defaultGuild();
  guild.channels.push(
    { id: VOICE_IDS.voice2, name: 'Voice 2', type: 2, position: 1 },
    {
      id: VOICE_IDS.staff,
      name: 'Staff',
      type: 2,
      position: 2,
      permissionOverwrites: [
        { id: guild.id, type: 0, allow: NONE, deny: PERMISSIONS.Connect.toString() },
        { id: DEFAULT_IDS.moderatorRole, type: 0, allow: PERMISSIONS.Connect.toString(), deny: NONE },
      ],
    },
    {
      id: VOICE_IDS.quiet,
      name: 'Quiet',
      type: 2,
      position: 3,
      permissionOverwrites: [{ id: DEFAULT_IDS.bot, type: 1, allow: NONE, deny: PERMISSIONS.Speak.toString() }],
    },
    { id: VOICE_IDS.full, name: 'Full', type: 2, position: 4, userLimit: 1 },
  );
  const carol = { id: VOICE_IDS.carol, username: 'carol', globalName: 'Carol' };
  guild.members.push({ user: carol, roles: [], joinedAt: '2024-01-01T00:00:00.000Z' });
  const owner = { userId: DEFAULT_IDS.owner, sessionId: 'owner-session', selfMute: false, selfDeaf: false };
  guild.voiceStates.push({ ...owner, channelId: VOICE_IDS.full });
  return guild;
}
