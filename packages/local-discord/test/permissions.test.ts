import { describe, expect, it } from 'vitest';
import { ALL_PERMISSIONS, DEFAULT_IDS, PERMISSIONS, type FakeChannel } from '../src/fixtures.ts';
import { canJoinVoice, channelPermissions } from '../src/permissions.ts';
import { VOICE_IDS, voicePermissionsWorld } from './voice-permissions-world.ts';

// The local Discord's permissions in a channel, computed as Discord documents it: roles, then the
// @everyone overwrite, the member's roles' overwrites together, the member's own overwrite.
const guild = voicePermissionsWorld();
const channel = (id: string) => guild.channels.find((c) => c.id === id)!;
const has = (bits: bigint, flag: bigint) => (bits & flag) === flag;

describe('GIVEN a channel without overwrites', () => {
  it('THEN the guild-wide permissions apply', () => {
    expect(has(channelPermissions(guild, channel(VOICE_IDS.voice2), DEFAULT_IDS.alice), PERMISSIONS.Connect)).toBe(true);
    expect(has(channelPermissions(guild, channel(VOICE_IDS.voice2), DEFAULT_IDS.bob), PERMISSIONS.MoveMembers)).toBe(true);
    expect(canJoinVoice(guild, channel(VOICE_IDS.voice2), DEFAULT_IDS.bot)).toBe(true);
  });
});

describe('GIVEN @everyone denied Connect and a role allowed it', () => {
  it('THEN members of that role may connect, everyone else (the bot too) may not, the owner always may', () => {
    const staff = channel(VOICE_IDS.staff);
    expect(has(channelPermissions(guild, staff, DEFAULT_IDS.bob), PERMISSIONS.Connect)).toBe(true);
    expect(has(channelPermissions(guild, staff, DEFAULT_IDS.alice), PERMISSIONS.Connect)).toBe(false);
    expect(canJoinVoice(guild, staff, DEFAULT_IDS.bot)).toBe(false);
    expect(channelPermissions(guild, staff, DEFAULT_IDS.owner)).toBe(ALL_PERMISSIONS);
  });
  it('THEN a member overwrite wins over the role overwrites', () => {
    const staff = channel(VOICE_IDS.staff);
    const bobDenied = { id: DEFAULT_IDS.bob, type: 1 as const, allow: '0', deny: PERMISSIONS.Connect.toString() };
    const personal: FakeChannel = { ...staff, permissionOverwrites: [...staff.permissionOverwrites!, bobDenied] };
    expect(has(channelPermissions(guild, personal, DEFAULT_IDS.bob), PERMISSIONS.Connect)).toBe(false);
  });
});

describe('GIVEN a member overwrite denying the bot Speak', () => {
  it('THEN the bot may connect but not speak there', () => {
    const bits = channelPermissions(guild, channel(VOICE_IDS.quiet), DEFAULT_IDS.bot);
    expect(has(bits, PERMISSIONS.Connect)).toBe(true);
    expect(has(bits, PERMISSIONS.Speak)).toBe(false);
  });
});

describe('GIVEN a voice channel at its user limit', () => {
  it('THEN only someone with Move Members may join it', () => {
    expect(canJoinVoice(guild, channel(VOICE_IDS.full), DEFAULT_IDS.bot)).toBe(false);
    expect(canJoinVoice(guild, channel(VOICE_IDS.full), DEFAULT_IDS.bob)).toBe(true);
  });
});
