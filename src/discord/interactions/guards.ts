import { ChannelType, type Client, PermissionFlagsBits, type BaseInteraction, type ChatInputCommandInteraction } from 'discord.js';
import type { Actor } from '../../domain/audit.ts';
import { UserError } from '../../i18n/errors.ts';

/** The guild id, or a localised refusal when the command was used outside a server. */
export function requireGuild(interaction: BaseInteraction): string {
  if (!interaction.inGuild()) throw new UserError('error.guild_only');
  return interaction.guildId;
}

/**
 * Admin commands are registered with default_member_permissions = Manage Server, but server owners
 * can override that in Integrations settings, so the permission is checked again on every use.
 */
export function requireManageGuild(interaction: ChatInputCommandInteraction): string {
  const guildId = requireGuild(interaction);
  if (!interaction.memberPermissions?.has(PermissionFlagsBits.ManageGuild)) throw new UserError('error.admin_only');
  return guildId;
}

export function isManager(interaction: ChatInputCommandInteraction): boolean {
  return interaction.memberPermissions?.has(PermissionFlagsBits.ManageGuild) ?? false;
}

/** Manage Server as the permission string Discord expects in command data. */
export const MANAGE_GUILD = PermissionFlagsBits.ManageGuild.toString();

/** The voice channel the member who used the command is in (the guild's cache of voice states), or null. */
export function memberVoiceChannel(interaction: BaseInteraction): string | null {
  return interaction.guild?.voiceStates.cache.get(interaction.user.id)?.channelId ?? null;
}

/**
 * The role a role option names, checked to still exist in the server (a role deleted since the
 * command was typed, or an id from elsewhere, is refused with its id: nothing is saved).
 */
export async function requireExistingRole(interaction: ChatInputCommandInteraction, roleId: string): Promise<string> {
  const guild =
    interaction.guild ?? (interaction.guildId ? await interaction.client.guilds.fetch(interaction.guildId).catch(() => null) : null);
  const role = guild ? (guild.roles.cache.get(roleId) ?? (await guild.roles.fetch(roleId).catch(() => null))) : null;
  if (!role) throw new UserError('roles.unknown', { vars: { role: roleId } });
  return roleId;
}

/** Who uses a command, as the audit log records them (their display name in the server, never a mention). */
export function commandActor(interaction: BaseInteraction): Actor {
  const member = interaction.member;
  const nick = member && 'displayName' in member ? member.displayName : (member?.nick ?? null);
  return { userId: interaction.user.id, name: nick ?? interaction.user.displayName, via: 'command' };
}

/** Whether `channelId` is a voice or stage channel of the guild, as this process's cache knows it (the auto-join target's rule). */
export function isVoiceChannelOf(client: Client, guildId: string, channelId: string): boolean {
  const type = client.guilds.cache.get(guildId)?.channels.cache.get(channelId)?.type;
  return type === ChannelType.GuildVoice || type === ChannelType.GuildStageVoice;
}
