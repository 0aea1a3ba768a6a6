import { PermissionFlagsBits } from 'discord.js';

type PermissionName = keyof typeof PermissionFlagsBits;

/**
 * What the bot does in a server, and the channel permissions each feature needs: the invite asks
 * for exactly these. Slash commands and their (ephemeral) replies need none: they come with the
 * `applications.commands` scope, and an interaction's reply is not checked against the channel.
 */
export const FEATURE_PERMISSIONS = [
  { feature: 'see the channels it reads and the voice channel it joins', permissions: ['ViewChannel'] },
  { feature: 'join a voice channel and speak in it', permissions: ['Connect', 'Speak'] },
  { feature: 'post notices, late replies and a refusal to an auto-read author', permissions: ['SendMessages'] },
  { feature: 'answer a message as a reply, and react to it (Discord needs message history for both)', permissions: ['ReadMessageHistory'] },
  { feature: 'react ⏳/🔇 to an auto-read message instead of repeating a refusal', permissions: ['AddReactions'] },
  { feature: 'post speech as an MP3 (auto-read channels with MP3 posts, paid audio, late replies)', permissions: ['AttachFiles'] },
] as const satisfies readonly { feature: string; permissions: readonly PermissionName[] }[];

/** The OAuth2 scopes of the invite: the bot user, and its slash commands. */
const INVITE_SCOPES = ['bot', 'applications.commands'] as const;

/** The smallest permission integer covering every feature of the table. */
export function botPermissions(table: readonly { permissions: readonly PermissionName[] }[] = FEATURE_PERMISSIONS): bigint {
  return table.flatMap((row) => row.permissions).reduce((bits, name) => bits | PermissionFlagsBits[name], 0n);
}

/**
 * The URL a server admin opens to add the bot (or one of its extra accounts) to their server with
 * those permissions; with `guildId`, that server is chosen in advance on Discord's page.
 */
export function inviteUrl(applicationId: string, guildId?: string): string {
  const query = `client_id=${encodeURIComponent(applicationId)}&scope=${INVITE_SCOPES.join('+')}&permissions=${botPermissions()}`;
  const guild = guildId ? `&guild_id=${encodeURIComponent(guildId)}&disable_guild_select=true` : '';
  return `https://discord.com/oauth2/authorize?${query}${guild}`;
}
