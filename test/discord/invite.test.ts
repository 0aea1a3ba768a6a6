import { PermissionFlagsBits, PermissionsBitField } from 'discord.js';
import { describe, expect, it } from 'vitest';
import { botPermissions, FEATURE_PERMISSIONS, inviteUrl } from '../../src/discord/invite.ts';

describe('the invite URL', () => {
  it('GIVEN the table of features THEN the permission integer is exactly the union of what they need', () => {
    const needed = new Set(FEATURE_PERMISSIONS.flatMap((row) => row.permissions));
    const union = [...needed].reduce((bits, name) => bits | PermissionFlagsBits[name], 0n);
    expect(botPermissions()).toBe(union);
    // What a server admin sees on Discord's authorise page: these and nothing more (no Administrator,
    // no Manage anything, no Mention Everyone).
    expect(new PermissionsBitField(botPermissions()).toArray().sort()).toEqual([
      'AddReactions',
      'AttachFiles',
      'Connect',
      'ReadMessageHistory',
      'SendMessages',
      'Speak',
      'ViewChannel',
    ]);
    expect(botPermissions()).toBe(3247168n);
    // Every row names what it is for, and each permission is asked for by one feature only.
    for (const row of FEATURE_PERMISSIONS) expect(row.feature.length).toBeGreaterThan(10);
    expect(FEATURE_PERMISSIONS.flatMap((row) => row.permissions)).toHaveLength(needed.size);
  });

  it('GIVEN an application id THEN the URL adds the bot and its slash commands with those permissions', () => {
    const url = new URL(inviteUrl('1200000000000000001'));
    expect(`${url.origin}${url.pathname}`).toBe('https://discord.com/oauth2/authorize');
    expect(Object.fromEntries(url.searchParams)).toEqual({
      client_id: '1200000000000000001',
      scope: 'bot applications.commands',
      permissions: '3247168',
    });
    expect(inviteUrl('1200000000000000001')).toContain('scope=bot+applications.commands&');
  });

  it('GIVEN an extra account and the server it is missing from THEN that server is chosen on the page', () => {
    const url = new URL(inviteUrl('1200000000000000002', '1100000000000000001'));
    expect(Object.fromEntries(url.searchParams)).toEqual({
      client_id: '1200000000000000002',
      scope: 'bot applications.commands',
      permissions: '3247168',
      guild_id: '1100000000000000001',
      disable_guild_select: 'true',
    });
  });
});
