import { PermissionFlagsBits, type ChatInputCommandInteraction, type AutocompleteInteraction } from 'discord.js';
import { UserError } from './errors.ts';

/** The guild id, or a localised refusal when the command was used outside a server. */
export function requireGuild(interaction: ChatInputCommandInteraction | AutocompleteInteraction): string {
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

/**
 * /skip and /clear change what everyone in the call hears: only members in the bot's voice
 * channel may use them, or moderators with Move Members (issue 13, "Moderation of playback").
 */
export function requirePlaybackControl(interaction: ChatInputCommandInteraction, botChannelId: string | null): void {
  if (interaction.memberPermissions?.has(PermissionFlagsBits.MoveMembers)) return;
  const memberChannelId = interaction.guild?.voiceStates.cache.get(interaction.user.id)?.channelId ?? null;
  if (botChannelId !== null && memberChannelId === botChannelId) return;
  throw new UserError('playback.not_in_channel');
}

/**
 * The role a role option names, checked to still exist in the server (a role deleted since the
 * command was typed, or an id from elsewhere, is refused with its id: nothing is saved).
 */
export async function requireExistingRole(interaction: ChatInputCommandInteraction, option: string): Promise<string> {
  const roleId = String(interaction.options.get(option, true).value);
  const guild = interaction.guild ?? (interaction.guildId ? await interaction.client.guilds.fetch(interaction.guildId).catch(() => null) : null);
  const role = guild ? (guild.roles.cache.get(roleId) ?? (await guild.roles.fetch(roleId).catch(() => null))) : null;
  if (!role) throw new UserError('roles.unknown', { vars: { role: roleId } });
  return roleId;
}
