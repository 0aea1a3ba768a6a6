import {
  ChannelType,
  GuildMember,
  type Client,
  PermissionFlagsBits,
  type BaseInteraction,
  type ChatInputCommandInteraction,
  type GuildBasedChannel,
  type VoiceBasedChannel,
  type VoiceState,
} from 'discord.js';
import type { Actor } from '../../domain/audit.ts';
import { UserError } from '../../i18n/errors.ts';
import { decideControl, type ControlFacts, type JoinTarget } from './playback-rule.ts';

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

/** A /join's target: the channel, and the member and the bot as discord.js resolves their permissions there. */
export interface JoinAsked {
  channel: VoiceBasedChannel;
  member: GuildMember;
  me: GuildMember;
}

/**
 * Refuses, changing nothing, a playback control the member may not use (the one rule in
 * playback-rule.ts): /skip, /clear and /leave with `join` unset, /join with the channel it would
 * join. The member's voice channel and the listeners come from the guild's cache.
 */
export function requirePlaybackControl(interaction: ChatInputCommandInteraction, botChannelId: string | null, join?: JoinAsked): void {
  const guild = join?.channel.guild ?? interaction.guild;
  // Humans, by their voice states: one whose member is not cached counts as a human (never leave a listener).
  const listening = (v: VoiceState) =>
    v.channelId === botChannelId && v.id !== interaction.user.id && v.id !== interaction.client.user.id && !v.member?.user.bot;
  const others = botChannelId === null ? 0 : (guild?.voiceStates.cache.filter(listening).size ?? 0);
  const facts: ControlFacts = {
    canMoveMembers: mayMoveMembersIn(interaction, botChannelId === null ? null : guild?.channels.cache.get(botChannelId), join?.member),
    memberChannelId: guild?.voiceStates.cache.get(interaction.user.id)?.channelId ?? null,
    botChannelId,
    othersListening: others,
  };
  const verdict = decideControl(facts, join && joinTarget(join));
  if (!verdict.allowed) throw new UserError(verdict.reason, { vars: { channel: verdict.channelId ? `<#${verdict.channelId}>` : '' } });
}

/**
 * Move Members as Discord grants it in the voice channel concerned (its overwrites applied), not
 * in the text channel the command was typed in; with no voice channel concerned (the bot is in
 * none), as the member has it where they typed the command.
 */
function mayMoveMembersIn(
  interaction: ChatInputCommandInteraction,
  voiceChannel: GuildBasedChannel | null | undefined,
  member: GuildMember | undefined,
): boolean {
  if (voiceChannel === null) return interaction.memberPermissions?.has(PermissionFlagsBits.MoveMembers) ?? false;
  const who = member ?? (interaction.member instanceof GuildMember ? interaction.member : undefined);
  // A channel or member this process does not know: nobody's permission there is proven.
  if (!voiceChannel || !who) return false;
  return voiceChannel.permissionsFor(who).has(PermissionFlagsBits.MoveMembers);
}

/** Discord's permissions for the member and the bot in the target, overwrites applied (`permissionsFor`). */
function joinTarget({ channel, member, me }: JoinAsked): JoinTarget {
  const { ViewChannel, Connect, Speak, MoveMembers, RequestToSpeak, MuteMembers } = PermissionFlagsBits;
  const mine = channel.permissionsFor(member);
  const bots = channel.permissionsFor(me);
  const stage = channel.type === ChannelType.GuildStageVoice;
  return {
    channelId: channel.id,
    memberCanConnect: mine.has([ViewChannel, Connect]),
    memberCanMoveMembers: mine.has(MoveMembers),
    botCanConnect: bots.has([ViewChannel, Connect]),
    // In a stage the bot speaks once it is a speaker: it asks (Request to Speak) or makes itself one (Mute Members).
    botCanSpeak: stage ? bots.has(RequestToSpeak) || bots.has(MuteMembers) : bots.has(Speak),
    stage,
    botCanMoveMembers: bots.has(MoveMembers),
    full: channel.full,
  };
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
