import {
  MessageFlags,
  PermissionFlagsBits,
  type AutocompleteInteraction,
  type BaseInteraction,
  type ChatInputCommandInteraction,
} from 'discord.js';
import { t, type Lang } from '../../src/i18n/texts.ts';
import { commandActor } from '../../src/discord/interactions/guards.ts';
import type { BotContext } from '../../src/discord/interactions/context.ts';
import {
  followDictionary,
  setSharing,
  sharingOf,
  sourceLabel,
  unfollowDictionary,
  type MemberFacts,
} from '../../src/usecases/shared-dictionaries.ts';

// /dictionary share, follow, unfollow and follows: the Discord side of shared dictionaries (the
// rules: src/usecases/shared-dictionaries.ts). Whether the admin is in another server is asked of
// Discord as the bot sees it: its gateway's members, and for a few servers a lookup.

/** Lookups of the admin in other servers per command (the gateway's members answer the rest). */
const LOOKUPS = 10;

/** The member who used the command, in the bot's other servers (on this process's shards). */
function memberFacts(interaction: BaseInteraction): MemberFacts {
  let lookups = 0;
  return {
    async nameIfMember(guildId) {
      const guild = interaction.client.guilds.cache.get(guildId);
      if (!guild) return undefined;
      if (guild.members.cache.has(interaction.user.id)) return guild.name;
      if (lookups++ >= LOOKUPS) return undefined;
      const member = await guild.members.fetch({ user: interaction.user.id }).catch(() => null);
      return member ? guild.name : undefined;
    },
  };
}

export async function share(interaction: ChatInputCommandInteraction, ctx: BotContext, guildId: string, lang: Lang, on: boolean) {
  await setSharing(ctx, guildId, commandActor(interaction), on);
  await interaction.reply({ content: t(lang, on ? 'dictionary.share_on' : 'dictionary.share_off'), flags: MessageFlags.Ephemeral });
}

export async function follow(interaction: ChatInputCommandInteraction, ctx: BotContext, guildId: string, lang: Lang, source: string) {
  const followed = await followDictionary(ctx, guildId, commandActor(interaction), source, memberFacts(interaction));
  await interaction.reply({
    content: t(lang, 'dictionary.followed', { source: sourceLabel(lang, followed) }),
    flags: MessageFlags.Ephemeral,
    allowedMentions: { parse: [] },
  });
}

export async function unfollow(interaction: ChatInputCommandInteraction, ctx: BotContext, guildId: string, lang: Lang, source: string) {
  const was = await unfollowDictionary(ctx, guildId, commandActor(interaction), source, memberFacts(interaction));
  await interaction.reply({
    content: t(lang, 'dictionary.unfollowed', { source: sourceLabel(lang, was) }),
    flags: MessageFlags.Ephemeral,
    allowedMentions: { parse: [] },
  });
}

export async function follows(interaction: ChatInputCommandInteraction, ctx: BotContext, guildId: string, lang: Lang) {
  const view = await sharingOf(ctx, guildId, memberFacts(interaction));
  const none = t(lang, 'dictionary.follows_none');
  const lines = (items: string[]) => (items.length === 0 ? none : items.map((line) => `- ${line}`).join('\n'));
  const content = t(lang, 'dictionary.follows_list', {
    sharing: t(lang, view.followable ? 'config.on' : 'config.off'),
    count: view.follows.length,
    max: view.max,
    follows: lines(view.follows.map((f) => sourceLabel(lang, f) + (f.active ? '' : t(lang, 'dictionary.follow_inactive')))),
    available: lines(view.available.map((a) => sourceLabel(lang, a))),
  });
  await interaction.reply({ content: content.slice(0, 2000), flags: MessageFlags.Ephemeral, allowedMentions: { parse: [] } });
}

/** Choices for follow (what the admin may follow) and unfollow (what is followed); nothing for a member without Manage Server. */
export async function sourceChoices(interaction: AutocompleteInteraction, ctx: BotContext, lang: Lang, sub: 'follow' | 'unfollow') {
  if (!interaction.inGuild() || !interaction.memberPermissions.has(PermissionFlagsBits.ManageGuild)) return [];
  const view = await sharingOf(ctx, interaction.guildId, memberFacts(interaction));
  const typed = interaction.options.getFocused().toLowerCase();
  return (sub === 'follow' ? view.available : view.follows)
    .map((s) => ({ name: sourceLabel(lang, s).slice(0, 100), value: `${s.kind}:${s.source}` }))
    .filter((c) => c.name.toLowerCase().includes(typed) || c.value.includes(typed))
    .slice(0, 25);
}
